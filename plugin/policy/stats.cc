#include "plugin/policy/stats.h"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "plugin/policy/names.h"

namespace squeeze::policy {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

double ratio(uint64_t in, uint64_t out) { return out == 0 ? 0.0 : static_cast<double>(in) / static_cast<double>(out); }

nlohmann::json counters_json(const Stats::Counters& c) {
  nlohmann::json raw = nlohmann::json::object();
  for (int i = 0; i < kNumRawCauses; ++i) {
    if (c.raw_messages[i] != 0) raw[raw_cause_name(static_cast<RawCause>(i))] = c.raw_messages[i];
  }
  nlohmann::json j = {{"messages", c.messages},
                      {"bytes_in", c.bytes_in},
                      {"bytes_out", c.bytes_out},
                      {"ratio", ratio(c.bytes_in, c.bytes_out)},
                      {"encode_seconds", static_cast<double>(c.encode_ns) * 1e-9},
                      {"raw_messages", c.raw_total()},
                      {"raw_bytes", c.raw_bytes},
                      {"raw_by_cause", raw}};
  if (c.error_samples != 0) j["max_error"] = c.max_error;
  return j;
}

nlohmann::json decode_json(const Stats::DecodeCounters& d) {
  return {{"messages", d.messages},
          {"frame_bytes", d.frame_bytes},
          {"bytes_out", d.bytes_out},
          {"ratio", ratio(d.bytes_out, d.frame_bytes)},
          {"decode_seconds", static_cast<double>(d.decode_ns) * 1e-9}};
}

}  // namespace

const char* raw_cause_name(RawCause c) {
  switch (c) {
    case RawCause::kPolicy: return "policy";
    case RawCause::kProtocol: return "protocol";
    case RawCause::kDtype: return "dtype";
    case RawCause::kNotWorthIt: return "not_worth_it";
    case RawCause::kFailed: return "failed";
    case RawCause::kDeviceMemory: return "device_memory";
  }
  return "policy";
}

RawCause raw_cause(RawReason r) {
  switch (r) {
    case RawReason::kProtocol: return RawCause::kProtocol;
    case RawReason::kDtype: return RawCause::kDtype;
    default: return RawCause::kPolicy;
  }
}

uint64_t Stats::Counters::raw_total() const {
  uint64_t t = 0;
  for (uint64_t r : raw_messages) t += r;
  return t;
}

void Stats::Counters::add(const Counters& o) {
  messages += o.messages;
  bytes_in += o.bytes_in;
  bytes_out += o.bytes_out;
  encode_ns += o.encode_ns;
  for (int i = 0; i < kNumRawCauses; ++i) raw_messages[i] += o.raw_messages[i];
  raw_bytes += o.raw_bytes;
  error_samples += o.error_samples;
  max_error = std::max(max_error, o.max_error);
}

void Stats::DecodeCounters::add(const DecodeCounters& o) {
  messages += o.messages;
  frame_bytes += o.frame_bytes;
  bytes_out += o.bytes_out;
  decode_ns += o.decode_ns;
}

Stats::Stats(std::vector<std::string> rule_names, std::string policy_source)
    : names_(std::move(rule_names)), source_(std::move(policy_source)) {
  names_.push_back("default");
  cells_ = std::make_unique<Cell[]>(names_.size() * kNumCollectives);
  decode_cells_ = std::make_unique<DecodeCell[]>(static_cast<std::size_t>(kNumCodecs) * kNumCollectives);
}

std::unique_ptr<Stats> Stats::for_policy(const Policy& p) {
  std::vector<std::string> names;
  for (const Rule& r : p.rules()) names.push_back(r.name);
  return std::make_unique<Stats>(std::move(names), p.source());
}

Stats::Cell* Stats::cell_ptr(int slot, Collective c) noexcept {
  auto ci = static_cast<std::size_t>(c);
  if (slot < 0 || slot >= slots() || ci >= static_cast<std::size_t>(kNumCollectives)) return nullptr;
  return &cells_[static_cast<std::size_t>(slot) * kNumCollectives + ci];
}

void Stats::record_encode(int slot, Collective c, uint64_t bytes_in, uint64_t bytes_out, uint64_t encode_ns) noexcept {
  Cell* cell = cell_ptr(slot, c);
  if (cell == nullptr) return;
  cell->messages.fetch_add(1, kRelaxed);
  cell->bytes_in.fetch_add(bytes_in, kRelaxed);
  cell->bytes_out.fetch_add(bytes_out, kRelaxed);
  cell->encode_ns.fetch_add(encode_ns, kRelaxed);
}

void Stats::record_raw(int slot, Collective c, uint64_t bytes, RawCause why) noexcept {
  Cell* cell = cell_ptr(slot, c);
  auto w = static_cast<std::size_t>(why);
  if (cell == nullptr || w >= static_cast<std::size_t>(kNumRawCauses)) return;
  cell->raw[w].fetch_add(1, kRelaxed);
  cell->raw_bytes.fetch_add(bytes, kRelaxed);
}

void Stats::record_error(int slot, Collective c, double max_abs_error) noexcept {
  Cell* cell = cell_ptr(slot, c);
  if (cell == nullptr || !(max_abs_error >= 0) || std::isinf(max_abs_error)) return;
  cell->error_samples.fetch_add(1, kRelaxed);
  // Non-negative doubles order like their bit patterns, so an integer max works.
  uint64_t bits = std::bit_cast<uint64_t>(max_abs_error);
  uint64_t cur = cell->max_error_bits.load(kRelaxed);
  while (bits > cur && !cell->max_error_bits.compare_exchange_weak(cur, bits, kRelaxed)) {
  }
}

void Stats::record_decode(compress::CodecId codec, Collective c, uint64_t frame_bytes, uint64_t bytes_out,
                          uint64_t decode_ns) noexcept {
  auto k = static_cast<std::size_t>(codec);
  auto ci = static_cast<std::size_t>(c);
  if (k >= static_cast<std::size_t>(kNumCodecs) || ci >= static_cast<std::size_t>(kNumCollectives)) return;
  DecodeCell& d = decode_cells_[k * kNumCollectives + ci];
  d.messages.fetch_add(1, kRelaxed);
  d.frame_bytes.fetch_add(frame_bytes, kRelaxed);
  d.bytes_out.fetch_add(bytes_out, kRelaxed);
  d.decode_ns.fetch_add(decode_ns, kRelaxed);
}

Stats::Counters Stats::cell(int slot, Collective c) const {
  Counters out;
  auto ci = static_cast<std::size_t>(c);
  if (slot < 0 || slot >= slots() || ci >= static_cast<std::size_t>(kNumCollectives)) return out;
  const Cell& x = cells_[static_cast<std::size_t>(slot) * kNumCollectives + ci];
  out.messages = x.messages.load(kRelaxed);
  out.bytes_in = x.bytes_in.load(kRelaxed);
  out.bytes_out = x.bytes_out.load(kRelaxed);
  out.encode_ns = x.encode_ns.load(kRelaxed);
  for (int i = 0; i < kNumRawCauses; ++i) out.raw_messages[i] = x.raw[i].load(kRelaxed);
  out.raw_bytes = x.raw_bytes.load(kRelaxed);
  out.error_samples = x.error_samples.load(kRelaxed);
  out.max_error = std::bit_cast<double>(x.max_error_bits.load(kRelaxed));
  return out;
}

Stats::DecodeCounters Stats::decode_cell(compress::CodecId codec, Collective c) const {
  DecodeCounters out;
  auto k = static_cast<std::size_t>(codec);
  auto ci = static_cast<std::size_t>(c);
  if (k >= static_cast<std::size_t>(kNumCodecs) || ci >= static_cast<std::size_t>(kNumCollectives)) return out;
  const DecodeCell& d = decode_cells_[k * kNumCollectives + ci];
  out.messages = d.messages.load(kRelaxed);
  out.frame_bytes = d.frame_bytes.load(kRelaxed);
  out.bytes_out = d.bytes_out.load(kRelaxed);
  out.decode_ns = d.decode_ns.load(kRelaxed);
  return out;
}

Stats::Counters Stats::totals() const {
  Counters t;
  for (int s = 0; s < slots(); ++s) {
    for (int c = 0; c < kNumCollectives; ++c) t.add(cell(s, static_cast<Collective>(c)));
  }
  return t;
}

Stats::DecodeCounters Stats::decode_totals() const {
  DecodeCounters t;
  for (int k = 0; k < kNumCodecs; ++k) {
    for (int c = 0; c < kNumCollectives; ++c) t.add(decode_cell(static_cast<compress::CodecId>(k), static_cast<Collective>(c)));
  }
  return t;
}

std::string Stats::summary_line() const {
  Counters t = totals();
  DecodeCounters d = decode_totals();
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Squeeze stats: %llu messages encoded, %s -> %s (ratio %.2f), encode %.3f s; %llu decoded "
                "(%s -> %s), decode %.3f s; %llu raw (%s: policy %llu, protocol %llu, dtype %llu, not worth it %llu, "
                "failed %llu)",
                static_cast<unsigned long long>(t.messages), human_bytes(t.bytes_in).c_str(),
                human_bytes(t.bytes_out).c_str(), ratio(t.bytes_in, t.bytes_out), static_cast<double>(t.encode_ns) * 1e-9,
                static_cast<unsigned long long>(d.messages), human_bytes(d.frame_bytes).c_str(),
                human_bytes(d.bytes_out).c_str(), static_cast<double>(d.decode_ns) * 1e-9,
                static_cast<unsigned long long>(t.raw_total()), human_bytes(t.raw_bytes).c_str(),
                static_cast<unsigned long long>(t.raw_messages[0]), static_cast<unsigned long long>(t.raw_messages[1]),
                static_cast<unsigned long long>(t.raw_messages[2]), static_cast<unsigned long long>(t.raw_messages[3]),
                static_cast<unsigned long long>(t.raw_messages[4]));
  std::string line = buf;
  if (t.error_samples != 0) {
    std::snprintf(buf, sizeof buf, "; max error %.6g", t.max_error);
    line += buf;
  }
  return line;
}

std::string Stats::to_json(int rank) const {
  nlohmann::json doc = {{"rank", rank}, {"policy", source_}, {"totals", counters_json(totals())}};
  nlohmann::json rules = nlohmann::json::array();
  for (int s = 0; s < slots(); ++s) {
    nlohmann::json per = nlohmann::json::object();
    for (int c = 0; c < kNumCollectives; ++c) {
      Counters x = cell(s, static_cast<Collective>(c));
      if (x.messages != 0 || x.raw_total() != 0) per[collective_name(static_cast<Collective>(c))] = counters_json(x);
    }
    rules.push_back({{"name", slot_name(s)}, {"default", s + 1 == slots()}, {"collectives", per}});
  }
  doc["rules"] = std::move(rules);
  nlohmann::json dec = nlohmann::json::object();
  for (int k = 0; k < kNumCodecs; ++k) {
    for (int c = 0; c < kNumCollectives; ++c) {
      DecodeCounters x = decode_cell(static_cast<compress::CodecId>(k), static_cast<Collective>(c));
      if (x.messages == 0) continue;
      dec[codec_policy_name(static_cast<compress::CodecId>(k))][collective_name(static_cast<Collective>(c))] =
          decode_json(x);
    }
  }
  doc["decode"] = std::move(dec);
  return doc.dump(2) + "\n";
}

bool Stats::write_json(std::string_view path_template, int rank, std::string* error) const {
  const std::string path = stats_path_for_rank(path_template, rank);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      if (error != nullptr) *error = "stats file " + tmp + ": cannot create: " + std::strerror(errno);
      return false;
    }
    out << to_json(rank);
    out.flush();
    if (!out) {
      if (error != nullptr) *error = "stats file " + tmp + ": write failed";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    if (error != nullptr) *error = "stats file " + path + ": cannot rename from " + tmp + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

std::string stats_path_for_rank(std::string_view path_template, int rank) {
  std::string t(path_template);
  const std::string r = std::to_string(rank);
  if (t.find("%r") != std::string::npos) {
    std::string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '%' && i + 1 < t.size() && t[i + 1] == 'r') {
        out += r;
        ++i;
      } else {
        out += t[i];
      }
    }
    return out;
  }
  constexpr std::string_view kJson = ".json";
  if (t.size() > kJson.size() && t.compare(t.size() - kJson.size(), kJson.size(), kJson) == 0) {
    return t.substr(0, t.size() - kJson.size()) + ".rank" + r + ".json";
  }
  return t + ".rank" + r + ".json";
}

}  // namespace squeeze::policy

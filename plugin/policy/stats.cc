#include "plugin/policy/stats.h"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
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

double ratio(uint64_t in, uint64_t out) {
  return out == 0 ? 0.0 : static_cast<double>(in) / static_cast<double>(out);
}

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
    case RawCause::kReduceOp: return "reduce_op";
    case RawCause::kNoFeedback: return "no_feedback";
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

const char* route_name(Route r) { return r == Route::kCollNet ? "collnet" : "net"; }

Stats::Stats(std::vector<std::string> rule_names, std::string policy_source)
    : names_(std::move(rule_names)), source_(std::move(policy_source)) {
  names_.push_back("default");
  cells_ = std::make_unique<Cell[]>(static_cast<std::size_t>(kNumRoutes) * names_.size() *
                                    kNumCollectives);
  decode_cells_ = std::make_unique<DecodeCell[]>(static_cast<std::size_t>(kNumRoutes) * kNumCodecs *
                                                 kNumCollectives);
}

std::unique_ptr<Stats> Stats::for_policy(const Policy& p) {
  std::vector<std::string> names;
  for (const Rule& r : p.rules()) names.push_back(r.name);
  return std::make_unique<Stats>(std::move(names), p.source());
}

std::size_t Stats::cell_index(int slot, Collective c, Route route) const noexcept {
  const auto ci = static_cast<std::size_t>(c);
  const auto ri = static_cast<std::size_t>(route);
  if (slot < 0 || slot >= slots() || ci >= static_cast<std::size_t>(kNumCollectives) ||
      ri >= static_cast<std::size_t>(kNumRoutes))
    return SIZE_MAX;
  return (ri * names_.size() + static_cast<std::size_t>(slot)) * kNumCollectives + ci;
}

std::size_t Stats::decode_index(compress::CodecId codec, Collective c, Route route) const noexcept {
  const auto k = static_cast<std::size_t>(codec);
  const auto ci = static_cast<std::size_t>(c);
  const auto ri = static_cast<std::size_t>(route);
  if (k >= static_cast<std::size_t>(kNumCodecs) ||
      ci >= static_cast<std::size_t>(kNumCollectives) || ri >= static_cast<std::size_t>(kNumRoutes))
    return SIZE_MAX;
  return (ri * kNumCodecs + k) * kNumCollectives + ci;
}

Stats::Cell* Stats::cell_ptr(int slot, Collective c, Route route) noexcept {
  const std::size_t i = cell_index(slot, c, route);
  return i == SIZE_MAX ? nullptr : &cells_[i];
}

void Stats::record_encode(int slot, Collective c, uint64_t bytes_in, uint64_t bytes_out,
                          uint64_t encode_ns, Route route) noexcept {
  Cell* cell = cell_ptr(slot, c, route);
  if (cell == nullptr) return;
  cell->messages.fetch_add(1, kRelaxed);
  cell->bytes_in.fetch_add(bytes_in, kRelaxed);
  cell->bytes_out.fetch_add(bytes_out, kRelaxed);
  cell->encode_ns.fetch_add(encode_ns, kRelaxed);
}

void Stats::record_raw(int slot, Collective c, uint64_t bytes, RawCause why, Route route) noexcept {
  Cell* cell = cell_ptr(slot, c, route);
  auto w = static_cast<std::size_t>(why);
  if (cell == nullptr || w >= static_cast<std::size_t>(kNumRawCauses)) return;
  cell->raw[w].fetch_add(1, kRelaxed);
  cell->raw_bytes.fetch_add(bytes, kRelaxed);
}

void Stats::record_error(int slot, Collective c, double max_abs_error, Route route) noexcept {
  Cell* cell = cell_ptr(slot, c, route);
  if (cell == nullptr || !(max_abs_error >= 0) || std::isinf(max_abs_error)) return;
  cell->error_samples.fetch_add(1, kRelaxed);
  // Non-negative doubles order like their bit patterns, so an integer max works.
  uint64_t bits = std::bit_cast<uint64_t>(max_abs_error);
  uint64_t cur = cell->max_error_bits.load(kRelaxed);
  while (bits > cur && !cell->max_error_bits.compare_exchange_weak(cur, bits, kRelaxed)) {
  }
}

void Stats::record_decode(compress::CodecId codec, Collective c, uint64_t frame_bytes,
                          uint64_t bytes_out, uint64_t decode_ns, Route route) noexcept {
  const std::size_t i = decode_index(codec, c, route);
  if (i == SIZE_MAX) return;
  DecodeCell& d = decode_cells_[i];
  d.messages.fetch_add(1, kRelaxed);
  d.frame_bytes.fetch_add(frame_bytes, kRelaxed);
  d.bytes_out.fetch_add(bytes_out, kRelaxed);
  d.decode_ns.fetch_add(decode_ns, kRelaxed);
}

Stats::Counters Stats::cell(int slot, Collective c, Route route) const {
  Counters out;
  const std::size_t i = cell_index(slot, c, route);
  if (i == SIZE_MAX) return out;
  const Cell& x = cells_[i];
  out.messages = x.messages.load(kRelaxed);
  out.bytes_in = x.bytes_in.load(kRelaxed);
  out.bytes_out = x.bytes_out.load(kRelaxed);
  out.encode_ns = x.encode_ns.load(kRelaxed);
  for (int k = 0; k < kNumRawCauses; ++k) out.raw_messages[k] = x.raw[k].load(kRelaxed);
  out.raw_bytes = x.raw_bytes.load(kRelaxed);
  out.error_samples = x.error_samples.load(kRelaxed);
  out.max_error = std::bit_cast<double>(x.max_error_bits.load(kRelaxed));
  return out;
}

Stats::DecodeCounters Stats::decode_cell(compress::CodecId codec, Collective c, Route route) const {
  DecodeCounters out;
  const std::size_t i = decode_index(codec, c, route);
  if (i == SIZE_MAX) return out;
  const DecodeCell& d = decode_cells_[i];
  out.messages = d.messages.load(kRelaxed);
  out.frame_bytes = d.frame_bytes.load(kRelaxed);
  out.bytes_out = d.bytes_out.load(kRelaxed);
  out.decode_ns = d.decode_ns.load(kRelaxed);
  return out;
}

Stats::Counters Stats::route_totals(Route route) const {
  Counters t;
  for (int s = 0; s < slots(); ++s) {
    for (int c = 0; c < kNumCollectives; ++c) t.add(cell(s, static_cast<Collective>(c), route));
  }
  return t;
}

Stats::DecodeCounters Stats::route_decode_totals(Route route) const {
  DecodeCounters t;
  for (int k = 0; k < kNumCodecs; ++k) {
    for (int c = 0; c < kNumCollectives; ++c)
      t.add(decode_cell(static_cast<compress::CodecId>(k), static_cast<Collective>(c), route));
  }
  return t;
}

Stats::Counters Stats::totals() const {
  Counters t;
  for (int r = 0; r < kNumRoutes; ++r) t.add(route_totals(static_cast<Route>(r)));
  return t;
}

Stats::DecodeCounters Stats::decode_totals() const {
  DecodeCounters t;
  for (int r = 0; r < kNumRoutes; ++r) t.add(route_decode_totals(static_cast<Route>(r)));
  return t;
}

std::string Stats::summary_line() const {
  Counters t = totals();
  DecodeCounters d = decode_totals();
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "Squeeze stats: %llu messages encoded, %s -> %s (ratio %.2f), encode %.3f s; %llu decoded "
      "(%s -> %s), decode %.3f s; %llu raw (%s: policy %llu, protocol %llu, dtype %llu, not worth "
      "it %llu, "
      "failed %llu)",
      static_cast<unsigned long long>(t.messages), human_bytes(t.bytes_in).c_str(),
      human_bytes(t.bytes_out).c_str(), ratio(t.bytes_in, t.bytes_out),
      static_cast<double>(t.encode_ns) * 1e-9, static_cast<unsigned long long>(d.messages),
      human_bytes(d.frame_bytes).c_str(), human_bytes(d.bytes_out).c_str(),
      static_cast<double>(d.decode_ns) * 1e-9, static_cast<unsigned long long>(t.raw_total()),
      human_bytes(t.raw_bytes).c_str(), static_cast<unsigned long long>(t.raw_messages[0]),
      static_cast<unsigned long long>(t.raw_messages[1]),
      static_cast<unsigned long long>(t.raw_messages[2]),
      static_cast<unsigned long long>(t.raw_messages[3]),
      static_cast<unsigned long long>(t.raw_messages[4]));
  std::string line = buf;
  const Counters cn = route_totals(Route::kCollNet);
  if (cn.messages != 0 || cn.raw_total() != 0) {
    std::snprintf(
        buf, sizeof buf, "; of which CollNet: %llu encoded, %s -> %s (ratio %.2f), %llu raw (%s)",
        static_cast<unsigned long long>(cn.messages), human_bytes(cn.bytes_in).c_str(),
        human_bytes(cn.bytes_out).c_str(), ratio(cn.bytes_in, cn.bytes_out),
        static_cast<unsigned long long>(cn.raw_total()), human_bytes(cn.raw_bytes).c_str());
    line += buf;
  }
  if (t.error_samples != 0) {
    std::snprintf(buf, sizeof buf, "; max error %.6g", t.max_error);
    line += buf;
  }
  return line;
}

std::string Stats::to_json(int rank) const {
  nlohmann::json doc = {{"rank", rank}, {"policy", source_}, {"totals", counters_json(totals())}};
  nlohmann::json routes = nlohmann::json::object();
  for (int r = 0; r < kNumRoutes; ++r) {
    const Counters x = route_totals(static_cast<Route>(r));
    if (x.messages != 0 || x.raw_total() != 0)
      routes[route_name(static_cast<Route>(r))] = counters_json(x);
  }
  doc["routes"] = std::move(routes);
  auto per_collective = [this](int s, Route route) {
    nlohmann::json per = nlohmann::json::object();
    for (int c = 0; c < kNumCollectives; ++c) {
      Counters x = cell(s, static_cast<Collective>(c), route);
      if (x.messages != 0 || x.raw_total() != 0)
        per[collective_name(static_cast<Collective>(c))] = counters_json(x);
    }
    return per;
  };
  nlohmann::json rules = nlohmann::json::array();
  for (int s = 0; s < slots(); ++s) {
    nlohmann::json rule = {{"name", slot_name(s)},
                           {"default", s + 1 == slots()},
                           {"collectives", per_collective(s, Route::kNet)}};
    nlohmann::json collnet = per_collective(s, Route::kCollNet);
    if (!collnet.empty()) rule["collnet"] = std::move(collnet);
    rules.push_back(std::move(rule));
  }
  doc["rules"] = std::move(rules);
  auto decode_of = [this](Route route) {
    nlohmann::json dec = nlohmann::json::object();
    for (int k = 0; k < kNumCodecs; ++k) {
      for (int c = 0; c < kNumCollectives; ++c) {
        DecodeCounters x =
            decode_cell(static_cast<compress::CodecId>(k), static_cast<Collective>(c), route);
        if (x.messages == 0) continue;
        dec[codec_policy_name(static_cast<compress::CodecId>(k))]
           [collective_name(static_cast<Collective>(c))] = decode_json(x);
      }
    }
    return dec;
  };
  doc["decode"] = decode_of(Route::kNet);
  nlohmann::json cdec = decode_of(Route::kCollNet);
  if (!cdec.empty()) doc["collnet_decode"] = std::move(cdec);
  return doc.dump(2) + "\n";
}

bool Stats::write_json(std::string_view path_template, int rank, std::string* error) const {
  const std::string path = stats_path_for_rank(path_template, rank);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      if (error != nullptr)
        *error = "stats file " + tmp + ": cannot create: " + std::strerror(errno);
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
    if (error != nullptr)
      *error = "stats file " + path + ": cannot rename from " + tmp + ": " + std::strerror(errno);
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

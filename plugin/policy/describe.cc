#include "plugin/policy/describe.h"

#include <cstdio>

#include "plugin/policy/names.h"

namespace squeeze::policy {
namespace {

template <typename Enum, std::size_t N>
std::string set_names(const std::bitset<N>& bits, const char* (*name)(Enum)) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (!bits.test(i)) continue;
    if (!out.empty()) out += '|';
    out += name(static_cast<Enum>(i));
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

const char* bound_mode(compress::BoundMode m) {
  switch (m) {
    case compress::BoundMode::kAbs: return "abs";
    case compress::BoundMode::kRel: return "rel";
    case compress::BoundMode::kRelRow: return "rel_row";
  }
  return "rel";
}

const char* float_name(compress::Dtype d) {
  switch (d) {
    case compress::Dtype::kFloat32: return "float32";
    case compress::Dtype::kBfloat16: return "bfloat16";
    case compress::Dtype::kFloat16: return "float16";
    default: return "bytes";
  }
}

std::string rule_label(const Policy& p, int32_t rule) {
  if (rule < 0) return "the default";
  const Rule& r = p.rules()[static_cast<std::size_t>(rule)];
  return "rule " + std::to_string(rule) + " \"" + r.name + "\" (" + r.pointer + ")";
}

}  // namespace

std::string format_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  uint64_t whole = b;
  while (whole >= 1024 && whole % 1024 == 0 && u < 6) {
    whole /= 1024;
    ++u;
  }
  if (whole < 1024 || u == 6) return std::to_string(whole) + " " + units[u];
  double v = static_cast<double>(b);
  u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string describe_match(const Match& m) {
  std::string out;
  auto add = [&out](const std::string& s) {
    if (!out.empty()) out += "; ";
    out += s;
  };
  if (!m.any_collective) add(set_names<Collective>(m.collectives, collective_name));
  if (!m.any_dtype) add("dtype " + set_names<DataType>(m.dtypes, dtype_name));
  if (!m.any_proto) add("proto " + set_names<Proto>(m.protos, proto_name));
  if (!m.any_algo) add("algo " + set_names<Algo>(m.algos, algo_name));
  if (m.min_bytes > 0) add(">= " + format_bytes(m.min_bytes));
  if (m.max_bytes != UINT64_MAX) add("<= " + format_bytes(m.max_bytes));
  if (!m.any_nranks) {
    if (!m.nranks_list.empty()) {
      std::string l;
      for (int32_t n : m.nranks_list) {
        if (!l.empty()) l += '|';
        l += std::to_string(n);
      }
      add("nranks " + l);
    } else {
      add("nranks " + std::to_string(m.nranks_min) + ".." +
          (m.nranks_max == INT32_MAX ? std::string("") : std::to_string(m.nranks_max)));
    }
  }
  if (!m.comm_patterns.empty()) {
    std::string l;
    for (const std::string& c : m.comm_patterns) l += (l.empty() ? "" : "|") + c;
    add("comm " + l);
  }
  return out.empty() ? "every message" : out;
}

std::string describe_action(const Action& a) {
  if (a.raw) return "raw (sent as is)";
  const compress::CodecParams& p = a.params;
  std::string out = codec_policy_name(p.codec);
  switch (p.codec) {
    case compress::CodecId::kQuantize:
      out += ", error bound " + std::string(bound_mode(p.quantize.mode)) + " " +
             number(p.quantize.error_bound);
      if (p.quantize.row_length != 0) out += ", rows of " + std::to_string(p.quantize.row_length);
      if (p.quantize.dedupe_rows) out += ", distinct rows sent once";
      if (a.schedule.kind != EbSchedule::Kind::kNone) {
        const char* k = a.schedule.kind == EbSchedule::Kind::kStep     ? "step"
                        : a.schedule.kind == EbSchedule::Kind::kLinear ? "linear"
                                                                       : "log";
        out += ", bound x" + number(a.schedule.start) + " -> x1 over " +
               std::to_string(a.schedule.messages) + " messages (" + k + ")";
      }
      if (!a.streams.empty())
        out += ", " + std::to_string(a.streams.size()) + " per-stream multipliers";
      break;
    case compress::CodecId::kThreshold:
      out += ", keep " + number(p.threshold.keep * 100.0) + "%, threshold refreshed every " +
             std::to_string(p.threshold.refresh_every) + " messages";
      if (p.threshold.value_dtype != compress::Dtype::kFloat32)
        out += ", values as " + std::string(float_name(p.threshold.value_dtype));
      if (p.threshold.error_feedback) out += ", error feedback";
      break;
    case compress::CodecId::kCast:
      out += " float32 -> " + std::string(float_name(p.cast.to));
      break;
    default: break;
  }
  if (p.checksum) out += ", checksum";
  if (a.lossy()) {
    out += a.fallback == Fallback::kRaw ? "; other dtypes raw" : "; other dtypes lossless";
    if (a.consistency == Consistency::kRelaxed) out += "; all-reduce ranks may differ (relaxed)";
  }
  if (a.assume_dtype != DataType::kUnknown)
    out += "; unknown dtype treated as " + std::string(dtype_name(a.assume_dtype));
  return out;
}

std::string describe_policy(const Policy& p) {
  std::string out = "policy " + p.source() + ": valid; " + std::to_string(p.rules().size()) +
                    " rule" + (p.rules().size() == 1 ? "" : "s") + "; tuner " +
                    (p.tuner_enabled() ? "on" : "off") + "\n";
  for (std::size_t i = 0; i < p.rules().size(); ++i) {
    const Rule& r = p.rules()[i];
    out += "  rule " + std::to_string(i) + " \"" + r.name + "\" (" + r.pointer +
           "): " + describe_match(r.match) + "\n      -> " + describe_action(r.action) + "\n";
  }
  out += "  default: " + describe_action(p.default_action()) + "\n";
  out +=
      "  always: LL/LL128 messages are sent raw; lossy codecs apply only to "
      "float32/bfloat16/float16 data of "
      "known (or assumed) dtype\n";
  return out;
}

std::string describe_meta(const MessageMeta& m) {
  std::string out = std::string(collective_name(m.collective)) + ", dtype " + dtype_name(m.dtype) +
                    ", " + format_bytes(m.match_bytes()) + ", proto " + proto_name(m.proto);
  if (m.algo != Algo::kUnknown) out += std::string(", algo ") + algo_name(m.algo);
  out += m.nranks > 0 ? ", nranks " + std::to_string(m.nranks) : ", nranks unknown";
  return out;
}

std::string describe_decision(const Policy& p, const Decision& d) {
  const std::string who = rule_label(p, d.rule);
  if (d.is_raw()) {
    switch (d.raw_reason) {
      case RawReason::kProtocol:
        return "raw: LL and LL128 messages are never compressed (" + who + " matched)";
      case RawReason::kDtype:
        return std::string("raw: ") + codec_policy_name(d.action->params.codec) +
               " is lossy and the dtype is " + dtype_name(d.dtype) + " (" + who +
               " matched; its fallback is raw)";
      default: return "raw, by " + who;
    }
  }
  std::string out = std::string(codec_policy_name(d.params->codec));
  if (d.lossy) {
    out = describe_action(*d.action) + " [lossy]";
    if (d.eb_multiplier != 1.0) out += ", this stream's bound x" + number(d.eb_multiplier);
  } else if (d.params == &d.action->fallback_params) {
    out += std::string(" [fallback: the dtype is ") + dtype_name(d.dtype) + ", not one " +
           codec_policy_name(d.action->params.codec) + " can code]";
  } else {
    out = describe_action(*d.action) + " [bit-exact]";
  }
  return out + ", by " + who;
}

}  // namespace squeeze::policy

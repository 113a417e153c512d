// The decision engine: first matching rule wins, then the safety rules that no policy can
// override are applied (LL/LL128 raw; lossy only on float32/bfloat16/float16 of known or
// assumed dtype).
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "plugin/policy/names.h"
#include "plugin/policy/policy.h"

namespace squeeze::policy {

const char* raw_reason_name(RawReason r) {
  switch (r) {
    case RawReason::kNone: return "none";
    case RawReason::kPolicy: return "policy";
    case RawReason::kProtocol: return "protocol";
    case RawReason::kDtype: return "dtype";
  }
  return "none";
}

double schedule_multiplier(const EbSchedule& s, uint64_t message_index) {
  if (s.kind == EbSchedule::Kind::kNone || s.messages == 0 || message_index >= s.messages)
    return 1.0;
  double t = static_cast<double>(message_index) / static_cast<double>(s.messages);
  switch (s.kind) {
    case EbSchedule::Kind::kStep: return s.start;
    case EbSchedule::Kind::kLinear: return s.start + (1.0 - s.start) * t;
    case EbSchedule::Kind::kLog: return std::exp((1.0 - t) * std::log(s.start));
    case EbSchedule::Kind::kNone: break;
  }
  return 1.0;
}

namespace {

// The dtype a rule sees: the real one when known, else the rule's assume_dtype (maybe unknown).
DataType effective_dtype(const MessageMeta& m, const Action& a) {
  return m.dtype != DataType::kUnknown ? m.dtype : a.assume_dtype;
}

bool nranks_ok(const Match& mt, int32_t nranks) {
  if (mt.any_nranks) return true;
  if (nranks <= 0) return false;  // unknown never matches a constraint
  if (!mt.nranks_list.empty()) {
    return std::find(mt.nranks_list.begin(), mt.nranks_list.end(), nranks) != mt.nranks_list.end();
  }
  return nranks >= mt.nranks_min && nranks <= mt.nranks_max;
}

}  // namespace

bool Policy::matches(const Rule& r, int32_t index, const MessageMeta& m,
                     DataType effective) const noexcept {
  const Match& mt = r.match;
  if (!mt.any_collective && !mt.collectives.test(static_cast<std::size_t>(m.collective)))
    return false;
  if (!mt.any_dtype && !mt.dtypes.test(static_cast<std::size_t>(effective))) return false;
  if (!mt.any_proto && !mt.protos.test(static_cast<std::size_t>(m.proto))) return false;
  if (!mt.any_algo && !mt.algos.test(static_cast<std::size_t>(m.algo))) return false;
  uint64_t b = m.match_bytes();
  if (b < mt.min_bytes || b > mt.max_bytes) return false;
  if (!nranks_ok(mt, m.nranks)) return false;
  if (!mt.comm_patterns.empty() &&
      (m.comm == nullptr || !m.comm->rules.test(static_cast<std::size_t>(index)))) {
    return false;
  }
  return true;
}

Decision Policy::apply(const Action& a, int32_t rule, const MessageMeta& m,
                       DataType effective) const noexcept {
  Decision d;
  d.action = &a;
  d.rule = rule;
  d.dtype = effective;
  if (a.raw) {
    d.raw_reason = RawReason::kPolicy;
    return d;
  }
  // LL and LL128 interleave flags with data that the GPU polls: never touch them. An unknown
  // protocol might be one of them.
  if (m.proto != Proto::kSimple) {
    d.raw_reason = RawReason::kProtocol;
    return d;
  }
  if (compress::is_lossy(a.params.codec)) {
    bool ok = lossy_capable(effective);
    // cast narrows float32 only.
    if (compress::codec_traits(a.params.codec).float32_only) ok = effective == DataType::kFloat32;
    if (!ok) {
      if (a.fallback == Fallback::kRaw) {
        d.raw_reason = RawReason::kDtype;
        return d;
      }
      d.params = &a.fallback_params;
      d.codec_dtype = codec_dtype(effective);
      return d;
    }
    d.params = &a.params;
    d.codec_dtype = codec_dtype(effective);
    d.lossy = true;
    if (m.count != 0) {
      for (const StreamBound& s : a.streams) {
        if (s.count == m.count) {
          d.eb_multiplier = s.multiplier;
          break;
        }
      }
    }
    return d;
  }
  d.params = &a.params;  // lossless: any bytes
  d.codec_dtype = codec_dtype(effective);
  return d;
}

Decision Policy::decide(const MessageMeta& m) const noexcept {
  const auto n = static_cast<int32_t>(rules_.size());
  for (int32_t i = 0; i < n; ++i) {
    const Rule& r = rules_[static_cast<std::size_t>(i)];
    DataType eff = effective_dtype(m, r.action);
    if (matches(r, i, m, eff)) return apply(r.action, i, m, eff);
  }
  return apply(default_, -1, m, effective_dtype(m, default_));
}

bool Policy::may_compress(const MessageMeta& m) const noexcept {
  MessageMeta q = m;
  q.proto = Proto::kSimple;
  if (q.dtype != DataType::kUnknown) return !decide(q).is_raw();
  for (int d = 0; d < kNumDataTypes; ++d) {
    q.dtype = static_cast<DataType>(d);
    if (!decide(q).is_raw()) return true;
  }
  return false;
}

CommMatch Policy::resolve_comm(std::string_view comm_name) const {
  CommMatch cm;
  std::string name(comm_name);
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    for (const std::string& p : rules_[i].match.comm_patterns) {
      if (fnmatch(p.c_str(), name.c_str(), 0) == 0) {
        cm.rules.set(i);
        break;
      }
    }
  }
  return cm;
}

}  // namespace squeeze::policy

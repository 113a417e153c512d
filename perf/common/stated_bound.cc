#include "perf/common/stated_bound.h"

#include <algorithm>
#include <cstdio>

#include "plugin/policy/plan.h"

namespace squeeze::perf {

const char* coll_name(Coll c) { return c == Coll::kAllReduce ? "allreduce" : "alltoall"; }

Bound bound_for(const policy::Policy* policy, Coll c, compress::Dtype d, uint64_t count, int nranks,
                bool as_send) {
  Bound b;
  if (policy == nullptr) return b;
  policy::MessageMeta m;
  m.collective = c == Coll::kAllReduce ? policy::Collective::kAllReduce
                 : as_send             ? policy::Collective::kSend
                                       : policy::Collective::kAllToAll;
  m.proto = policy::Proto::kSimple;
  m.dtype = d == compress::Dtype::kFloat32    ? policy::DataType::kFloat32
            : d == compress::Dtype::kBfloat16 ? policy::DataType::kBfloat16
                                              : policy::DataType::kFloat16;
  m.coll_bytes = count * compress::dtype_size(d);
  m.bytes = m.coll_bytes;
  m.count = count;
  m.nranks = nranks;
  const policy::Decision dec = policy->decide(m);
  b.bitwise = dec.action->consistency == policy::Consistency::kBitwise;
  if (dec.is_raw() || !compress::is_lossy(dec.params->codec)) return b;
  const compress::CodecParams& p = *dec.params;
  if (p.codec == compress::CodecId::kThreshold) {
    b.kind = Bound::Kind::kNone;
    b.text = "none(threshold)";
    return b;
  }
  if (c == Coll::kAllReduce)
    b.cast_hops =
        policy::allreduce_lossy_hops(static_cast<int32_t>(nranks), dec.action->consistency);
  if (p.codec == compress::CodecId::kCast) {
    b.kind = Bound::Kind::kCast;
    b.cast_to = p.cast.to;
    b.text = std::string("cast=") + compress::dtype_name(p.cast.to);
    return b;
  }
  // quantize: the loosest the engine may use, with the schedule's start and the stream's
  // multiplier.
  const double mult = std::max(1.0, dec.action->schedule.start) * std::max(1.0, dec.eb_multiplier);
  b.value = p.quantize.error_bound * mult;
  const char* name = "rel";
  switch (p.quantize.mode) {
    case compress::BoundMode::kAbs:
      b.kind = Bound::Kind::kAbs;
      name = "abs";
      break;
    case compress::BoundMode::kRelRow:
      if (p.quantize.row_length != 0) {
        b.kind = Bound::Kind::kRelRow;
        b.row_length = p.quantize.row_length;
        name = "rel_row";
        break;
      }
      [[fallthrough]];
    default: b.kind = Bound::Kind::kRel;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%s=%.3g", name, b.value);
  b.text = text;
  return b;
}

Bound collnet_bound_for(const policy::Policy* policy, compress::Dtype d, uint64_t count, int nodes,
                        RedOp op) {
  Bound b;  // ranks are bit-identical on the collective network, whatever the codec
  if (policy == nullptr || nodes < 2) return b;
  const std::size_t es = compress::dtype_size(d);
  const uint64_t piece = std::max<uint64_t>(1, count / static_cast<uint64_t>(nodes));
  // What the collective network tells plan_message() about a piece (plugin/collnet/coll_comm.cc).
  policy::MessageMeta m;
  m.collective = policy::Collective::kAllReduce;
  m.proto = policy::Proto::kSimple;
  m.dtype = d == compress::Dtype::kFloat32    ? policy::DataType::kFloat32
            : d == compress::Dtype::kBfloat16 ? policy::DataType::kBfloat16
                                              : policy::DataType::kFloat16;
  m.algo = policy::Algo::kCollNetChain;
  m.bytes = piece * es;
  m.count = count;
  m.coll_bytes = count * es;
  m.nranks = nodes;
  m.collnet.op = op == RedOp::kMin   ? policy::ReduceOp::kMin
                 : op == RedOp::kMax ? policy::ReduceOp::kMax
                                     : policy::ReduceOp::kSum;
  m.collnet.nodes = nodes;
  m.collnet.stream_count = count;
  m.collnet.position_known = true;
  m.collnet.hop = policy::CollNetHop::kContribution;
  const policy::Plan contribution =
      policy::plan_message(*policy, m, policy::Path::kCollNet, true, nullptr);
  m.collnet.hop = policy::CollNetHop::kResult;
  const policy::Plan result =
      policy::plan_message(*policy, m, policy::Path::kCollNet, true, nullptr);
  const bool lossy_c = contribution.compress && contribution.lossy;
  const bool lossy_r = result.compress && result.lossy;
  if (!lossy_c && !lossy_r) return b;
  const compress::CodecParams& p = lossy_r ? result.params : contribution.params;
  if (p.codec == compress::CodecId::kThreshold) {
    b.kind = Bound::Kind::kNone;
    b.text = "none(threshold)";
    return b;
  }
  if (p.codec == compress::CodecId::kCast) {
    b.kind = Bound::Kind::kCast;
    b.cast_to = p.cast.to;
    b.cast_hops = (lossy_c ? 1 : 0) + (lossy_r ? 1 : 0);
    b.text = std::string("cast=") + compress::dtype_name(p.cast.to);
    return b;
  }
  // quantize: plan_message() scaled each hop's bound by its share and by the schedule's first
  // multiplier; the loosest the stream may use is max(1, start) times the rule's.
  const policy::Decision dec = policy->decide(m);
  const double first = policy::schedule_multiplier(dec.action->schedule, 0);
  const double loosest = std::max(1.0, dec.action->schedule.start) / (first > 0 ? first : 1.0);
  const double contributions = op == RedOp::kSum || op == RedOp::kAvg ? nodes - 1 : 1;
  b.value = loosest * ((lossy_c ? contributions * contribution.params.quantize.error_bound : 0.0) +
                       (lossy_r ? result.params.quantize.error_bound : 0.0));
  b.kind = p.quantize.mode == compress::BoundMode::kAbs ? Bound::Kind::kAbs : Bound::Kind::kRel;
  char text[64];
  std::snprintf(text, sizeof text, "%s=%.3g", b.kind == Bound::Kind::kAbs ? "abs" : "rel", b.value);
  b.text = text;
  return b;
}

}  // namespace squeeze::perf

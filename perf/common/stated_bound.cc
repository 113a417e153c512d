#include "perf/common/stated_bound.h"

#include <algorithm>
#include <cstdio>

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
    default:
      b.kind = Bound::Kind::kRel;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%s=%.3g", name, b.value);
  b.text = text;
  return b;
}

}  // namespace squeeze::perf

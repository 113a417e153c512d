#include "plugin/tuner/tuner.h"

#include "plugin/nccl/tuner_abi.h"
#include "plugin/policy/names.h"

namespace squeeze::tuner {

using policy::Collective;

uint64_t call_bytes(Collective c, uint64_t nbytes, int32_t nranks) {
  if ((c == Collective::kAllGather || c == Collective::kReduceScatter) && nranks > 0) {
    return nbytes / static_cast<uint64_t>(nranks);
  }
  return nbytes;
}

bool steer(const policy::Policy& p, const CollQuery& q, float* table, int num_algo, int num_proto) {
  if (table == nullptr || !p.tuner_enabled()) return false;
  if (num_algo <= nccl::kAlgoRing || num_proto <= nccl::kProtoSimple) return false;
  Collective c = policy::collective_from_nccl_func(q.nccl_func);
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kBroadcast:
    case Collective::kReduce:
      break;
    default:
      return false;  // NCCL does not tune point-to-point or all-to-all
  }
  policy::MessageMeta m;
  m.collective = c;
  m.proto = policy::Proto::kSimple;
  m.algo = policy::Algo::kRing;
  m.dtype = q.dtype_hint;
  m.coll_bytes = call_bytes(c, q.nbytes, q.nranks);
  m.bytes = m.coll_bytes;
  m.nranks = q.nranks;
  m.comm = q.comm;
  if (!p.may_compress(m)) return false;
  float& entry = table[nccl::kAlgoRing * num_proto + nccl::kProtoSimple];
  if (entry < 0.0f) return false;  // disabled (-1): NCCL_ALGO/NCCL_PROTO or topology ruled it out
  if (entry == 0.0f) return false;
  entry = 0.0f;
  return true;
}

}  // namespace squeeze::tuner

#include "plugin/tuner/tuner.h"

#include <utility>

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
    case Collective::kReduce: break;
    default: return false;  // NCCL does not tune point-to-point or all-to-all
  }
  policy::MessageMeta m;
  m.collective = c;
  m.proto = policy::Proto::kSimple;
  m.dtype = q.dtype_hint;
  m.coll_bytes = call_bytes(c, q.nbytes, q.nranks);
  m.bytes = m.coll_bytes;
  m.nranks = q.nranks;
  m.comm = q.comm;
  // Sets an entry NCCL left enabled to 0, the cheapest (a negative entry is disabled: -1, by
  // NCCL_ALGO/NCCL_PROTO, the topology, or no CollNet).
  auto take = [&](int algo) {
    float& entry = table[algo * num_proto + nccl::kProtoSimple];
    if (entry <= 0.0f) return false;
    entry = 0.0f;
    return true;
  };
  if (c == Collective::kAllReduce) {
    for (const auto& [algo, as] :
         {std::pair{nccl::kAlgoCollNetChain, policy::Algo::kCollNetChain},
          std::pair{nccl::kAlgoCollNetDirect, policy::Algo::kCollNetDirect}}) {
      if (algo >= num_algo || table[algo * num_proto + nccl::kProtoSimple] < 0.0f) continue;
      m.algo = as;
      if (p.may_compress(m)) return take(algo);
    }
  }
  m.algo = policy::Algo::kRing;
  if (!p.may_compress(m)) return false;
  return take(nccl::kAlgoRing);
}

}  // namespace squeeze::tuner

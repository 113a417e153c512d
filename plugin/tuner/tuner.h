// Squeeze's built-in NCCL tuner (v5), pure logic. Compression only ever applies to SIMPLE
// messages (LL and LL128 are never touched), and a ring sends each chunk over the network as
// one message per hop; so for collectives and sizes that the policy compresses, the tuner
// makes NCCL choose Ring/Simple by setting that entry of NCCL's cost table to 0, but only when
// NCCL left it enabled (not -1). Everything else keeps NCCL's own choice.
//
// All-reduces go to Squeeze's collective network instead where NCCL offers it: there both
// halves are coded and every rank still ends bit-identical (plugin/collnet/README.md), where
// the ring can code only the reduce-scatter half. NCCL 2.28.9 (src/enqueue.cc getAlgoInfo)
// starts every entry at -1 and fills CollNetChain and CollNetDirect (Simple only; their LL and
// LL128 entries stay -1) only when the communicator has CollNet (NCCL_COLLNET_ENABLE=1 or
// config.collnetEnable, at least NCCL_COLLNET_NODE_THRESHOLD nodes, a CollNetChain graph),
// reduceSupport said yes to the (op, dtype) and at most 8 ranks share a node; it then takes
// the smallest entry that is not negative. So an all-reduce the policy compresses on CollNet
// gets CollNetChain/Simple set to 0 when that entry is not -1, else CollNetDirect/Simple (NVSwitch
// systems) likewise; with neither offered it is steered to Ring/Simple as above.
//
// NCCL calls the tuner only for collectives (Broadcast, Reduce, AllGather, ReduceScatter,
// AllReduce), never for Send, Recv or AlltoAll, and never tells it the dtype: the tuner uses
// a dtype hint from the profiler when it has one, otherwise it steers when some dtype would be
// compressed.
#pragma once

#include <cstdint>

#include "plugin/policy/policy.h"

namespace squeeze::tuner {

struct CollQuery {
  int nccl_func = -1;   // ncclFunc_t
  uint64_t nbytes = 0;  // NCCL's nBytes: element size x max(send, recv) count
  int32_t nranks = 0;
  policy::DataType dtype_hint = policy::DataType::kUnknown;
  const policy::CommMatch* comm = nullptr;
};

// The size the policy compares with min_bytes/max_bytes (count x dtype size of the call):
// NCCL's nBytes divided by nranks for AllGather and ReduceScatter.
uint64_t call_bytes(policy::Collective c, uint64_t nbytes, int32_t nranks);

// Edits table (float[num_algo][num_proto]) in place: at most one entry, set to 0. Returns true
// when it changed an entry.
bool steer(const policy::Policy& p, const CollQuery& q, float* table, int num_algo, int num_proto);

}  // namespace squeeze::tuner

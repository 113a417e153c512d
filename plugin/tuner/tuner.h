// Squeeze's built-in NCCL tuner (v5), pure logic. Compression only ever applies to SIMPLE
// messages (LL and LL128 are never touched), and a ring sends each chunk over the network as
// one message per hop; so for collectives and sizes that the policy compresses, the tuner
// makes NCCL choose Ring/Simple by setting that entry of NCCL's cost table to 0, but only when
// NCCL left it enabled (not -1). Everything else keeps NCCL's own choice.
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
  int nccl_func = -1;     // ncclFunc_t
  uint64_t nbytes = 0;    // NCCL's nBytes: element size x max(send, recv) count
  int32_t nranks = 0;
  policy::DataType dtype_hint = policy::DataType::kUnknown;
  const policy::CommMatch* comm = nullptr;
};

// The size the policy compares with min_bytes/max_bytes (count x dtype size of the call):
// NCCL's nBytes divided by nranks for AllGather and ReduceScatter.
uint64_t call_bytes(policy::Collective c, uint64_t nbytes, int32_t nranks);

// Edits table (float[num_algo][num_proto]) in place. Returns true when it changed an entry.
bool steer(const policy::Policy& p, const CollQuery& q, float* table, int num_algo, int num_proto);

}  // namespace squeeze::tuner

// All-to-all as NCCL 2.28 runs ncclAlltoAll over the network: one Send and one Recv p2p task
// per peer (src/enqueue.cc), each on its own p2p connection with a FIFO of NCCL_STEPS slots
// of the p2p chunk size (NCCL_P2P_NET_CHUNKSIZE, 128 KiB), one slot per message
// (ALLTOALL_SLICESTEPS 1), all peers progressed by one loop like NCCL's proxy thread. The
// rank's own block is copied locally.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compress/codec.h"
#include "perf/collective/comm.h"

namespace squeeze::perf {

struct AlltoAllParams {
  std::size_t chunk_bytes = 128 * 1024;  // NCCL_P2P_NET_CHUNKSIZE
};

// `in` and `out` hold nranks blocks of `count` elements; block q of `in` goes to rank q and
// block q of `out` comes from rank q.
void alltoall(Communicator& comm, const AlltoAllParams& p, const uint8_t* in, uint8_t* out, std::size_t count,
              compress::Dtype d, const char* nccl_dtype);

}  // namespace squeeze::perf

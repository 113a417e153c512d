// All-to-all as NCCL 2.28 runs ncclAlltoAll over the network: one Send and one Recv p2p task
// per peer (src/enqueue.cc), each on its own p2p connection with a FIFO of NCCL_STEPS slots
// of the p2p chunk size (NCCL_P2P_NET_CHUNKSIZE, 128 KiB), one slot per message
// (ALLTOALL_SLICESTEPS 1), all peers progressed by one loop like NCCL's proxy thread. The
// rank's own block is copied locally.
//
// With gpu_copies (squeeze-perf --copies gpu) the copies that NCCL's GPU kernels make stay
// out of alltoall(): each connection's SIMPLE buffer holds the whole block, message m in
// slot m, alltoall_stage() places the input there once, and alltoall_collect() reads the
// output (and copies the own block) after each call. alltoall() then does only what NCCL's
// proxy thread does, so a CPU-only host spends its cores as one whose GPU makes the copies.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compress/codec.h"
#include "perf/collective/comm.h"

namespace squeeze::perf {

struct AlltoAllParams {
  std::size_t chunk_bytes = 128 * 1024;  // NCCL_P2P_NET_CHUNKSIZE
  bool gpu_copies = false;
};

// Bytes of each connection's SIMPLE buffer for blocks of `block` bytes.
std::size_t alltoall_fifo_bytes(const AlltoAllParams& p, std::size_t block);

// `in` and `out` hold nranks blocks of `count` elements; block q of `in` goes to rank q and
// block q of `out` comes from rank q.
void alltoall(Communicator& comm, const AlltoAllParams& p, const uint8_t* in, uint8_t* out,
              std::size_t count, compress::Dtype d, const char* nccl_dtype);

// gpu_copies only: block q of `in` into the send FIFO to rank q (once: the plugin never
// writes a send buffer), and each receive FIFO into block q of `out`, zeroing the FIFO so
// that a message missing in the next call cannot pass for received, plus the own block.
void alltoall_stage(Communicator& comm, const uint8_t* in, std::size_t block);
void alltoall_collect(Communicator& comm, const uint8_t* in, uint8_t* out, std::size_t block);

}  // namespace squeeze::perf

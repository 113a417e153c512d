// Ring all-reduce on one channel with NCCL's Simple-protocol schedule (NCCL 2.28.9
// src/device/all_reduce.h runRing): the buffer is processed in loops of nranks chunks; in each
// loop a rank does 2(n-1) steps on one chunk each (send; n-2 x recvReduceSend;
// recvReduceCopySend; n-2 x recvCopySend; recv), every step as SlicePerChunk (2) messages of
// up to sliceSteps FIFO steps each, sized as prims_simple.h sizes them. The reduction (what NCCL's
// kernel does; sum, prod, min or max) runs on the host here, in float, rounded to the dtype at
// every hop, so the raw result is bit-identical to the reference below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "compress/codec.h"
#include "perf/collective/comm.h"
#include "perf/common/reduce_op.h"

namespace squeeze::perf {

struct RingParams {
  std::size_t step_bytes = 512 * 1024;  // NCCL_BUFFSIZE / NCCL_STEPS
  int slice_steps = 2;                  // ALLREDUCE_SLICESTEPS
  int chunk_steps = 4;                  // ALLREDUCE_CHUNKSTEPS
};

class RingSchedule {
 public:
  // op: the reduction each hop applies (the caller premultiplies the inputs for avg and
  // passes kSum).
  RingSchedule(std::size_t count, int nranks, compress::Dtype d, const RingParams& p,
               RedOp op = RedOp::kSum);

  struct Xfer {
    std::size_t loop_off;  // first element of the loop
    std::size_t loop_len;  // elements in the loop
    std::size_t chunk;     // elements per segment in this loop
    uint32_t step;         // 0 .. 2(n-1)-1
    uint32_t slice;        // 0 .. nslices-1
    uint32_t nslices;      // messages per step (SlicePerChunk)
  };
  // The k-th message on each ring connection, in order (the same shape on every rank).
  const std::vector<Xfer>& xfers() const { return xfers_; }
  // Elements [first, second) of segment `seg` (0..n-1) that message x carries.
  std::pair<std::size_t, std::size_t> range(const Xfer& x, int seg) const;
  std::size_t slice_bytes() const { return slice_elems_ * elem_; }
  int nranks() const { return n_; }
  std::size_t count() const { return count_; }
  compress::Dtype dtype() const { return dtype_; }
  RedOp op() const { return op_; }

  // out = what a raw ring produces: per segment j, the ranks' inputs reduced in ring order
  // starting at rank j+1, rounded to the dtype after every operation.
  void reference(const std::vector<const uint8_t*>& inputs, uint8_t* out) const;

 private:
  std::size_t count_;
  int n_;
  compress::Dtype dtype_;
  RedOp op_;
  std::size_t elem_, slice_elems_;
  std::vector<Xfer> xfers_;
};

// One all-reduce of s.count() elements from `in` to `out` over comm's ring connections
// (send to rank+1, receive from rank-1), with the profiler events and setNetAttr NCCL issues.
void ring_allreduce(Communicator& comm, const RingSchedule& s, const RingParams& p,
                    const uint8_t* in, uint8_t* out, const char* nccl_dtype);

}  // namespace squeeze::perf

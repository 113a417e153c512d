// Plays NCCL 2.28.9's CollNet proxy for CollNetChain on host memory
// (src/transport/coll_net.cc, plugin/nccl/COLLNET.md), against a connected
// collComm:
// - one shared buffer of 2 x NCCL_STEPS x channels x 512 KiB, registered twice
// (the send and
//   the receive connection each register all of it);
// - a collective of N bytes is cut into steps of channels x chunk bytes (chunk
// as NCCL picks it
//   for CollNetChain with one rank per node); per step one iallreduce of
//   exactly that many bytes, from the step's send slot to its receive slot (the
//   last step's tail is whatever the slot held before, as in NCCL);
// - at most NCCL_STEPS calls in flight; a slot is reused once its call
// completed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tests/collnet/collnet_api.h"

namespace squeeze::testing {

class ChainProxy {
 public:
  static constexpr int kSteps = 8;                      // NCCL_STEPS
  static constexpr std::size_t kSlotBytes = 512 << 10;  // SIMPLE buffer 4 MiB / NCCL_STEPS
  ChainProxy(CollNetApi& api, void* coll_comm, int channels);
  ~ChainProxy();
  ChainProxy(const ChainProxy&) = delete;
  ChainProxy& operator=(const ChainProxy&) = delete;

  int setup();  // regMr of the shared buffer by the send and the receive side
  // NCCL's CollNetChain chunk for a collective of `bytes` (depth 1: one rank
  // per node).
  std::size_t chunk_bytes(std::size_t bytes) const;
  // One all-reduce of count elements of elem bytes (ncclDataType_t dtype,
  // ncclRedOp_t op). chunk 0: NCCL's choice. Returns the plugin's error, or -1
  // on timeout.
  int allreduce(const void* in, void* out, uint64_t count, int dtype, std::size_t elem, int op,
                double timeout_s, std::size_t chunk = 0);
  uint64_t calls() const { return calls_; }

 private:
  uint8_t* send_slot(int step) {
    return region_.data() + static_cast<std::size_t>(step % kSteps) * stride();
  }
  uint8_t* recv_slot(int step) { return send_slot(step) + kSteps * stride(); }
  std::size_t stride() const { return static_cast<std::size_t>(channels_) * kSlotBytes; }

  CollNetApi& api_;
  void* comm_;
  int channels_;
  std::vector<uint8_t> region_;
  void* send_mh_ = nullptr;
  void* recv_mh_ = nullptr;
  uint64_t calls_ = 0;
};

}  // namespace squeeze::testing

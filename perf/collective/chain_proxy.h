// Plays NCCL 2.28.9's CollNet proxy for CollNetChain on host memory (src/transport/coll_net.cc,
// plugin/nccl/COLLNET.md) against a connected collComm:
// - one shared buffer of 2 x NCCL_STEPS x channels x 512 KiB, registered twice (the send and
//   the receive connection each register all of it, NCCL_PTR_HOST);
// - a collective of N bytes is cut into steps of channels x chunk bytes (chunk as NCCL picks it
//   for CollNetChain with one rank per node); per step one iallreduce of exactly that many
//   bytes, from the step's send slot to its receive slot (the last step's tail is whatever the
//   slot held before, as in NCCL);
// - at most NCCL_STEPS calls in flight; a null request is retried; a slot is reused once its
//   call completed; requests are tested oldest first, and a test that finds nothing done
//   yields the CPU, as NCCL's proxy thread does when no request progressed.
// The copies between the user's buffers and the slots stand for what NCCL's GPU kernel does.
// squeeze-perf (--route collnet) and the collective network's tests share this proxy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "perf/collective/collnet_table.h"

namespace squeeze::perf {

class ChainProxy {
 public:
  static constexpr int kSteps = 8;                      // NCCL_STEPS
  static constexpr std::size_t kSlotBytes = 512 << 10;  // SIMPLE buffer 4 MiB / NCCL_STEPS
  static constexpr int kTimedOut = -1;                  // allreduce(): no progress in time

  ChainProxy(CollNetTable& table, void* coll_comm, int channels);
  ~ChainProxy();  // deregMr of both registrations
  ChainProxy(const ChainProxy&) = delete;
  ChainProxy& operator=(const ChainProxy&) = delete;

  int setup();  // regMr of the shared buffer by the send and the receive side
  // NCCL's CollNetChain chunk for a collective of `bytes` (depth 1: one rank per node).
  std::size_t chunk_bytes(std::size_t bytes) const;
  // One all-reduce of count elements of elem bytes (ncclDataType_t dtype, ncclRedOp_t op).
  // chunk 0: NCCL's choice. Returns 0, the plugin's error code, or kTimedOut when a call made
  // no progress for timeout_s; error() then says which call and what failed.
  int allreduce(const void* in, void* out, uint64_t count, int dtype, std::size_t elem, int op,
                double timeout_s, std::size_t chunk = 0);
  // Copies in and posts only the first `calls` calls of such an all-reduce, and returns
  // without waiting for them (a rank that dies mid-collective, in the tests).
  int post_first(const void* in, uint64_t count, int dtype, std::size_t elem, int op,
                 std::size_t calls, double timeout_s);
  uint64_t calls() const { return calls_; }
  int channels() const { return channels_; }
  const std::string& error() const { return error_; }

 private:
  // An all-reduce of count elements of elem bytes, cut as NCCL cuts it: n steps (calls) of
  // loop bytes each, the last one's tail past `bytes` whatever the slot held.
  struct Steps {
    uint64_t count = 0;
    std::size_t elem = 0, bytes = 0, loop = 0, n = 0;
  };
  Steps steps_of(uint64_t count, std::size_t elem, std::size_t chunk) const;
  // Copies step t of `in` into its send slot and posts its iallreduce. While the plugin has no
  // room (a null request) it calls no_room(): 0 tries again, anything else ends the post and is
  // returned. Returns 0 with *req set, the plugin's error code, or no_room()'s.
  int post_call(std::size_t t, const void* in, const Steps& st, int dtype, int op,
                const std::function<int()>& no_room, void** req);
  // "iallreduce of call 3 of 64 failed: ..." / "... made no progress for 1 s".
  std::string call_failed(std::size_t t, const Steps& st, const char* what, int r,
                          double timeout_s) const;
  uint8_t* send_slot(std::size_t step) { return region_.data() + (step % kSteps) * stride(); }
  uint8_t* recv_slot(std::size_t step) { return send_slot(step) + kSteps * stride(); }
  std::size_t stride() const { return static_cast<std::size_t>(channels_) * kSlotBytes; }

  CollNetTable& table_;
  void* comm_;
  int channels_;
  std::vector<uint8_t> region_;
  void* send_mh_ = nullptr;
  void* recv_mh_ = nullptr;
  uint64_t calls_ = 0;
  std::string error_;
};

}  // namespace squeeze::perf

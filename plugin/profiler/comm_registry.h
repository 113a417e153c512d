// The communicators our profiler was initialised for, keyed by NCCL's commHash (the same
// value NCCL passes as commId to the net plugin's init, the profiler's init and the tuner's
// init), so the net engine and the tuner can learn a communicator's name, size and rank.
// Also keeps, per communicator, the last few collective API calls (func, dtype, count), which
// lets the tuner, whose API never carries the dtype, recover it, and the all-reduces NCCL runs
// on a CollNet algorithm, which lets the collective network tell which tensor (and where in
// it) each of its iallreduce calls carries.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugin/policy/message_meta.h"

namespace squeeze::profiler {

struct CommInfo {
  uint64_t comm_hash = 0;
  std::string name;  // may be empty: NCCL gives a name only when the user set one
  int32_t nranks = 0;
  int32_t rank = -1;
  int32_t nnodes = 0;
};

// One all-reduce NCCL runs with CollNetDirect or CollNetChain (its Coll event).
struct CollNetColl {
  uint64_t seq = 0;  // the Coll event's sequence number (per communicator, per function)
  uint64_t count = 0;
  policy::DataType dtype = policy::DataType::kUnknown;
  policy::Algo algo = policy::Algo::kUnknown;
  int32_t nchannels = 0;
};

// The profiler context NCCL stores per communicator. Opaque outside this library.
struct ProfilerContext {
  CommInfo info;
  struct ApiCall {
    policy::Collective func = policy::Collective::kUnknown;
    policy::DataType dtype = policy::DataType::kUnknown;
    uint64_t count = 0;
  };
  static constexpr std::size_t kRecentCalls = 16;
  std::array<ApiCall, kRecentCalls> recent{};
  std::size_t next = 0;
  // CollNet all-reduces not yet claimed by the collective network, oldest first (bounded: a
  // communicator whose collective network never asks keeps only the newest).
  static constexpr std::size_t kCollNetPending = 256;
  std::deque<CollNetColl> collnet;
};

class CommRegistry {
 public:
  static CommRegistry& instance();

  ProfilerContext* add(CommInfo info);
  void remove(const void* ctx);  // ignores contexts it does not own
  // Copies the info of ctx; false when ctx is not a live context of ours (NULL, foreign, stale).
  bool context_info(const void* ctx, CommInfo* out) const;
  // The newest live communicator with this hash.
  bool lookup(uint64_t comm_hash, CommInfo* out) const;

  void note_api_call(const void* ctx, policy::Collective func, policy::DataType dtype,
                     uint64_t count);
  // The dtype of the recent API call of `func` on this communicator whose size matches the
  // tuner's nBytes (count x size, times nranks for allgather/reducescatter). False when none
  // or when matching calls disagree.
  bool recent_dtype(uint64_t comm_hash, policy::Collective func, uint64_t nbytes,
                    policy::DataType* out) const;

  void note_collnet_coll(const void* ctx, const CollNetColl& coll);
  // The oldest recorded CollNet all-reduce of this communicator with a sequence number above
  // `after_seq` (any, when !have_after), and forgets it and those before it. False when none.
  bool take_collnet_coll(uint64_t comm_hash, bool have_after, uint64_t after_seq, CollNetColl* out);

  std::size_t live() const;
  uint64_t inits() const;  // how many times our profiler was initialised in this process

 private:
  ProfilerContext* find(const void* ctx) const;  // mu_ held
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<ProfilerContext>> contexts_;
  uint64_t inits_ = 0;
};

// For the net engine: the communicator behind a commId, if our profiler knows it.
inline bool lookup_comm(uint64_t comm_hash, CommInfo* out) {
  return CommRegistry::instance().lookup(comm_hash, out);
}

}  // namespace squeeze::profiler

// Memory registrations of one protection domain, cached by address range.
//
// Two kinds of entries share the cache:
// - regions NCCL registers (regMr / regMrDmaBuf through register_memory): reference-counted,
//   dropped from the cache when the last registration of them is released, since NCCL may
//   free the memory right after deregMr;
// - buffers handed to post() without a registration (the engine's staging frames, or NCCL's
//   buffers when the layer above passes none): registered on first use, page-aligned, and
//   kept (least recently used first out, at most `max_implicit`) so a staging buffer that is
//   reused is registered once. Overlapping implicit ranges merge into one registration.
// In-flight operations hold their entry (shared_ptr), so an MR is never deregistered under a
// posted work request. Thread-safe: regMr runs on NCCL's service thread, posts on its
// progress thread.
//
// An implicit entry assumes the memory stays mapped at that address while cached: memory
// that is unmapped and mapped again at the same address would need the cache flushed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/ib/verbs_owned.h"
#include "transport/transport.h"

namespace squeeze::transport::ib {

// Every MR allows local writes (receives, flush reads) and remote writes and reads.
constexpr int kMrAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

struct MrEntry {
  Owned<ibv_mr> mr;
  uintptr_t start = 0;  // registered range [start, end)
  uintptr_t end = 0;
  int ptr_type = kPtrHost;
  bool dmabuf = false;
  int explicit_refs = 0;  // registrations from register_region() (guarded by the cache's lock)
  uint32_t lkey() const { return mr->lkey; }
  uint32_t rkey() const { return mr->rkey; }
  bool covers(const void* p, std::size_t n) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    return a >= start && a <= end && n <= end - a;
  }
};

class MrCache {
 public:
  // relaxed_ordering: register with IBV_ACCESS_RELAXED_ORDERING (needs api->reg_mr_iova2).
  MrCache(const VerbsApi* api, ibv_pd* pd, std::size_t max_implicit, std::string where,
          bool relaxed_ordering = false);
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // A registration covering [p, p+n), n > 0, for memory handed over unregistered.
  Status find_or_register(const void* p, std::size_t n, std::shared_ptr<MrEntry>* out);
  // regMr / regMrDmaBuf. Reuses a covering entry of the same memory type when one exists.
  Status register_region(const MemoryDesc& mem, std::shared_ptr<MrEntry>* out);
  // Drops one register_region() reference.
  void release(const std::shared_ptr<MrEntry>& e);

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;     // new registrations
    uint64_t evictions = 0;  // implicit entries dropped (LRU or merged into a wider range)
    std::size_t entries = 0;
  };
  Stats stats() const;
  // Whether registrations carry IBV_ACCESS_RELAXED_ORDERING.
  bool relaxed_ordering() const { return relaxed_ordering_; }

 private:
  Status reg(uintptr_t start, uintptr_t end, int ptr_type, const MemoryDesc* dmabuf,
             std::shared_ptr<MrEntry>* out);
  void evict_implicit();
  const VerbsApi* api_;
  ibv_pd* pd_;
  std::size_t max_implicit_;
  std::string where_;
  bool relaxed_ordering_;
  uintptr_t page_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<MrEntry>> entries_;  // least recently used first
  Stats stats_;
};

// What register_memory() hands back: the cache entry, released when NCCL deregisters.
class IbRegistration final : public Registration {
 public:
  // `owner` keeps the device (protection domain, cache) alive as long as the registration.
  IbRegistration(std::shared_ptr<const void> owner, MrCache* cache, std::shared_ptr<MrEntry> e)
      : owner_(std::move(owner)), cache_(cache), entry_(std::move(e)) {}
  ~IbRegistration() override {
    cache_->release(entry_);
    entry_.reset();  // before the owner
  }
  const std::shared_ptr<MrEntry>& entry() const { return entry_; }

 private:
  std::shared_ptr<const void> owner_;
  MrCache* cache_;
  std::shared_ptr<MrEntry> entry_;
};

}  // namespace squeeze::transport::ib

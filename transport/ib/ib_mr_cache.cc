#include "transport/ib/ib_mr_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace squeeze::transport::ib {

namespace {
std::string range_str(uintptr_t start, uintptr_t end) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "[0x%zx, 0x%zx)", static_cast<std::size_t>(start),
                static_cast<std::size_t>(end));
  return buf;
}
}  // namespace

MrCache::MrCache(const VerbsApi* api, ibv_pd* pd, std::size_t max_implicit, std::string where,
                 bool relaxed_ordering)
    : api_(api),
      pd_(pd),
      max_implicit_(std::max<std::size_t>(1, max_implicit)),
      where_(std::move(where)),
      relaxed_ordering_(relaxed_ordering && api->reg_mr_iova2 != nullptr) {
  long ps = sysconf(_SC_PAGESIZE);
  page_ = ps > 0 ? static_cast<uintptr_t>(ps) : 4096;
}

Status MrCache::reg(uintptr_t start, uintptr_t end, int ptr_type, const MemoryDesc* dmabuf,
                    std::shared_ptr<MrEntry>* out) {
  ibv_mr* mr = nullptr;
  std::size_t len = end - start;
  const int access = kMrAccess | (relaxed_ordering_ ? IBV_ACCESS_RELAXED_ORDERING : 0);
  if (dmabuf != nullptr) {
    if (api_->reg_dmabuf_mr == nullptr)
      return Status::Usage("dma-buf registration on " + where_ +
                           " needs ibv_reg_dmabuf_mr (rdma-core 34 or newer)");
    mr = api_->reg_dmabuf_mr(pd_, dmabuf->dmabuf_offset, len, static_cast<uint64_t>(start),
                             dmabuf->dmabuf_fd, access);
  } else if (relaxed_ordering_) {
    // Relaxed ordering is an optional access flag only ibv_reg_mr_iova2 (IBVERBS_1.8) takes.
    mr = api_->reg_mr_iova2(pd_, reinterpret_cast<void*>(start), len, static_cast<uint64_t>(start),
                            access);
  } else {
    mr = api_->reg_mr(pd_, reinterpret_cast<void*>(start), len, access);
  }
  if (mr == nullptr)
    return Status::System(std::string(dmabuf              ? "ibv_reg_dmabuf_mr"
                                      : relaxed_ordering_ ? "ibv_reg_mr_iova2"
                                                          : "ibv_reg_mr") +
                          " of " + range_str(start, end) +
                          (ptr_type == kPtrCuda ? " (GPU memory)" : "") + " on " + where_ + ": " +
                          verbs_error(-1));
  auto e = std::make_shared<MrEntry>();
  e->mr = Owned<ibv_mr>(api_, mr);
  e->start = start;
  e->end = end;
  e->ptr_type = ptr_type;
  e->dmabuf = dmabuf != nullptr;
  ++stats_.misses;
  *out = std::move(e);
  return Status::Ok();
}

Status MrCache::find_or_register(const void* p, std::size_t n, std::shared_ptr<MrEntry>* out) {
  if (p == nullptr || n == 0)
    return Status::Usage("registration of an empty or null range on " + where_);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if ((*it)->covers(p, n)) {
      *out = *it;
      ++stats_.hits;
      if ((*it)->explicit_refs == 0) {  // most recently used goes last
        auto e = *it;
        entries_.erase(std::next(it).base());
        entries_.push_back(std::move(e));
      }
      return Status::Ok();
    }
  }
  auto a = reinterpret_cast<uintptr_t>(p);
  if (n > UINTPTR_MAX - a - page_)
    return Status::Usage("range " + range_str(a, a) + " + " + std::to_string(n) + " wraps");
  uintptr_t start = a & ~(page_ - 1);
  uintptr_t end = (a + n + page_ - 1) & ~(page_ - 1);
  // Merge with cached implicit ranges this one overlaps or touches: their union is mapped.
  std::vector<std::shared_ptr<MrEntry>> merged;
  for (bool grew = true; grew;) {
    grew = false;
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      const MrEntry& e = **it;
      if (e.explicit_refs > 0 || e.dmabuf || e.ptr_type != kPtrHost || e.end < start ||
          e.start > end)
        continue;
      start = std::min(start, e.start);
      end = std::max(end, e.end);
      merged.push_back(*it);
      entries_.erase(it);
      grew = true;
      break;
    }
  }
  std::shared_ptr<MrEntry> e;
  if (Status s = reg(start, end, kPtrHost, nullptr, &e); !s.ok()) {
    for (auto& m : merged) entries_.push_back(std::move(m));  // keep what worked before
    return s;
  }
  stats_.evictions += merged.size();
  entries_.push_back(e);
  evict_implicit();
  *out = std::move(e);
  return Status::Ok();
}

void MrCache::evict_implicit() {
  std::size_t implicit = 0;
  for (const auto& e : entries_) implicit += e->explicit_refs == 0 ? 1 : 0;
  for (auto it = entries_.begin(); it != entries_.end() && implicit > max_implicit_;) {
    if ((*it)->explicit_refs == 0) {
      it = entries_.erase(it);
      --implicit;
      ++stats_.evictions;
    } else {
      ++it;
    }
  }
}

Status MrCache::register_region(const MemoryDesc& mem, std::shared_ptr<MrEntry>* out) {
  if (mem.data == nullptr || mem.size == 0)
    return Status::Usage("regMr of an empty or null buffer on " + where_);
  if (mem.ptr_type != kPtrHost && mem.ptr_type != kPtrCuda)
    return Status::Usage("regMr: memory type " + std::to_string(mem.ptr_type) +
                         " is neither host (1) nor CUDA (2)");
  auto a = reinterpret_cast<uintptr_t>(mem.data);
  if (mem.size > UINTPTR_MAX - a - page_)
    return Status::Usage("regMr: range wraps around the address space");
  std::lock_guard<std::mutex> lock(mu_);
  const bool dmabuf = mem.dmabuf_fd >= 0;
  if (!dmabuf) {
    for (auto& e : entries_) {
      if (e->ptr_type == mem.ptr_type && !e->dmabuf && e->covers(mem.data, mem.size)) {
        ++e->explicit_refs;
        ++stats_.hits;
        *out = e;
        return Status::Ok();
      }
    }
  }
  uintptr_t start = dmabuf ? a : a & ~(page_ - 1);
  uintptr_t end = dmabuf ? a + mem.size : (a + mem.size + page_ - 1) & ~(page_ - 1);
  std::shared_ptr<MrEntry> e;
  if (Status s = reg(start, end, mem.ptr_type, dmabuf ? &mem : nullptr, &e); !s.ok()) return s;
  e->explicit_refs = 1;
  entries_.push_back(e);
  *out = std::move(e);
  return Status::Ok();
}

void MrCache::release(const std::shared_ptr<MrEntry>& e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (e->explicit_refs > 0 && --e->explicit_refs == 0) {
    // NCCL may free this memory now: forget the range; the MR goes with its last holder.
    auto it = std::find(entries_.begin(), entries_.end(), e);
    if (it != entries_.end()) entries_.erase(it);
  }
}

MrCache::Stats MrCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.entries = entries_.size();
  return s;
}

}  // namespace squeeze::transport::ib

#include "plugin/profiler/comm_registry.h"

#include <algorithm>

#include "plugin/policy/names.h"

namespace squeeze::profiler {

CommRegistry& CommRegistry::instance() {
  // Never destroyed: NCCL may call into the library from its threads while the process exits.
  static CommRegistry* r = new CommRegistry();
  return *r;
}

ProfilerContext* CommRegistry::add(CommInfo info) {
  auto ctx = std::make_unique<ProfilerContext>();
  ctx->info = std::move(info);
  std::lock_guard<std::mutex> lock(mu_);
  contexts_.push_back(std::move(ctx));
  ++inits_;
  return contexts_.back().get();
}

ProfilerContext* CommRegistry::find(const void* ctx) const {
  if (ctx == nullptr) return nullptr;
  for (const auto& c : contexts_) {
    if (c.get() == ctx) return c.get();
  }
  return nullptr;
}

void CommRegistry::remove(const void* ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(contexts_.begin(), contexts_.end(),
                         [ctx](const auto& c) { return c.get() == ctx; });
  if (it != contexts_.end()) contexts_.erase(it);
}

bool CommRegistry::context_info(const void* ctx, CommInfo* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  const ProfilerContext* c = find(ctx);
  if (c == nullptr) return false;
  *out = c->info;
  return true;
}

bool CommRegistry::lookup(uint64_t comm_hash, CommInfo* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = contexts_.rbegin(); it != contexts_.rend(); ++it) {
    if ((*it)->info.comm_hash == comm_hash) {
      *out = (*it)->info;
      return true;
    }
  }
  return false;
}

void CommRegistry::note_api_call(const void* ctx, policy::Collective func, policy::DataType dtype,
                                 uint64_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  ProfilerContext* c = find(ctx);
  if (c == nullptr) return;
  c->recent[c->next % ProfilerContext::kRecentCalls] = {func, dtype, count};
  ++c->next;
}

bool CommRegistry::recent_dtype(uint64_t comm_hash, policy::Collective func, uint64_t nbytes,
                                policy::DataType* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  bool found = false;
  policy::DataType seen = policy::DataType::kUnknown;
  for (const auto& c : contexts_) {
    if (c->info.comm_hash != comm_hash) continue;
    uint64_t factor =
        (func == policy::Collective::kAllGather || func == policy::Collective::kReduceScatter)
            ? static_cast<uint64_t>(std::max(c->info.nranks, 1))
            : 1;
    for (const auto& call : c->recent) {
      if (call.func != func || call.dtype == policy::DataType::kUnknown) continue;
      if (call.count * policy::dtype_size(call.dtype) * factor != nbytes) continue;
      if (found && seen != call.dtype) return false;  // ambiguous
      found = true;
      seen = call.dtype;
    }
  }
  if (found) *out = seen;
  return found;
}

void CommRegistry::note_collnet_coll(const void* ctx, const CollNetColl& coll) {
  std::lock_guard<std::mutex> lock(mu_);
  ProfilerContext* c = find(ctx);
  if (c == nullptr) return;
  if (c->collnet.size() >= ProfilerContext::kCollNetPending) c->collnet.pop_front();
  c->collnet.push_back(coll);
}

bool CommRegistry::take_collnet_coll(uint64_t comm_hash, bool have_after, uint64_t after_seq,
                                     CollNetColl* out) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = contexts_.rbegin(); it != contexts_.rend(); ++it) {
    if ((*it)->info.comm_hash != comm_hash) continue;
    auto& q = (*it)->collnet;
    while (!q.empty() && have_after && q.front().seq <= after_seq) q.pop_front();
    if (q.empty()) return false;
    *out = q.front();
    q.pop_front();
    return true;
  }
  return false;
}

std::size_t CommRegistry::live() const {
  std::lock_guard<std::mutex> lock(mu_);
  return contexts_.size();
}

uint64_t CommRegistry::inits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return inits_;
}

}  // namespace squeeze::profiler

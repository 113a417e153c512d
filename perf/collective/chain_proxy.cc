#include "perf/collective/chain_proxy.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>

#include "perf/common/nccl_result.h"

namespace squeeze::perf {

ChainProxy::ChainProxy(CollNetTable& table, void* coll_comm, int channels)
    : table_(table), comm_(coll_comm), channels_(channels), region_(2 * kSteps * stride(), 0) {}

ChainProxy::~ChainProxy() {
  if (send_mh_ != nullptr) table_.dereg_mr(comm_, send_mh_);
  if (recv_mh_ != nullptr) table_.dereg_mr(comm_, recv_mh_);
}

int ChainProxy::setup() {
  if (int r = table_.reg_mr(comm_, region_.data(), region_.size(), nccl::kPtrHost, &send_mh_);
      r != 0) {
    error_ = std::string("regMr of the send side failed: ") + nccl_result_name(r);
    return r;
  }
  if (int r = table_.reg_mr(comm_, region_.data(), region_.size(), nccl::kPtrHost, &recv_mh_);
      r != 0) {
    error_ = std::string("regMr of the receive side failed: ") + nccl_result_name(r);
    return r;
  }
  return 0;
}

// src/enqueue.cc (CollNetChain): min(256 KiB, stepSize), halved while the collective has fewer
// than depth x 64 chunks per channel (down to 128 KiB), x 8 (64 KiB), x 1 (32 KiB).
std::size_t ChainProxy::chunk_bytes(std::size_t bytes) const {
  const auto ch = static_cast<std::size_t>(channels_);
  std::size_t chunk = std::min<std::size_t>(256 << 10, kSlotBytes);
  while (bytes / (ch * chunk) < 64 && chunk > 131072) chunk /= 2;
  while (bytes / (ch * chunk) < 8 && chunk > 65536) chunk /= 2;
  while (bytes / (ch * chunk) < 1 && chunk > 32768) chunk /= 2;
  return chunk;
}

// NCCL cuts the collective into steps of `loop` bytes (channels x chunk); step t is one call.
ChainProxy::Steps ChainProxy::steps_of(uint64_t count, std::size_t elem, std::size_t chunk) const {
  Steps st;
  st.count = count;
  st.elem = elem;
  st.bytes = count * elem;
  st.loop = static_cast<std::size_t>(channels_) * (chunk != 0 ? chunk : chunk_bytes(st.bytes));
  st.n = std::max<std::size_t>(1, (st.bytes + st.loop - 1) / st.loop);
  return st;
}

std::string ChainProxy::call_failed(std::size_t t, const Steps& st, const char* what, int r,
                                    double timeout_s) const {
  return std::string(what) + " of call " + std::to_string(t) + " of " + std::to_string(st.n) +
         (r == kTimedOut ? " made no progress for " + std::to_string(timeout_s) + " s"
                         : std::string(" failed: ") + nccl_result_name(r));
}

int ChainProxy::post_call(std::size_t t, const void* in, const Steps& st, int dtype, int op,
                          const std::function<int()>& no_room, void** req) {
  const std::size_t begin = t * st.loop;
  const std::size_t n = std::min(st.loop, st.bytes - std::min(st.bytes, begin));
  if (n != 0) std::memcpy(send_slot(t), static_cast<const uint8_t*>(in) + begin, n);
  *req = nullptr;
  while (*req == nullptr) {
    if (int r = table_.iallreduce(comm_, send_slot(t), recv_slot(t), st.loop / st.elem, dtype, op,
                                  send_mh_, recv_mh_, req);
        r != 0)
      return r;
    if (*req == nullptr)  // the plugin has no room: NCCL tries again later
      if (int r = no_room(); r != 0) return r;
  }
  ++calls_;
  return 0;
}

int ChainProxy::allreduce(const void* in, void* out, uint64_t count, int dtype, std::size_t elem,
                          int op, double timeout_s, std::size_t chunk) {
  error_.clear();
  const Steps st = steps_of(count, elem, chunk);
  const auto limit = std::chrono::duration<double>(timeout_s);
  auto deadline = std::chrono::steady_clock::now() + limit;
  struct Pending {
    std::size_t step;
    void* req;
  };
  std::deque<Pending> pending;
  auto failed = [&](std::size_t step, const char* what, int r) {
    error_ = call_failed(step, st, what, r, timeout_s);
    return r;
  };
  auto complete_front = [&]() -> int {
    const Pending p = pending.front();
    int done = 0, size = 0;
    while (!done) {
      if (int r = table_.test(p.req, &done, &size); r != 0) return failed(p.step, "test", r);
      if (done) break;
      if (std::chrono::steady_clock::now() > deadline) return failed(p.step, "test", kTimedOut);
      sched_yield();  // as NCCL's proxy thread when nothing progressed (src/proxy.cc)
    }
    deadline = std::chrono::steady_clock::now() + limit;
    const std::size_t begin = p.step * st.loop;
    const std::size_t n = std::min(st.loop, st.bytes - std::min(st.bytes, begin));
    if (n != 0) std::memcpy(static_cast<uint8_t*>(out) + begin, recv_slot(p.step), n);
    pending.pop_front();
    return 0;
  };
  for (std::size_t t = 0; t < st.n; ++t) {
    while (pending.size() >= static_cast<std::size_t>(kSteps))
      if (int r = complete_front(); r != 0) return r;
    // No room: complete the oldest call (a failure there says so itself), or wait for room.
    auto no_room = [&]() -> int {
      if (!pending.empty()) return complete_front();
      if (std::chrono::steady_clock::now() > deadline) return kTimedOut;
      sched_yield();
      return 0;
    };
    void* req = nullptr;
    if (int r = post_call(t, in, st, dtype, op, no_room, &req); r != 0)
      return error_.empty() ? failed(t, "iallreduce", r) : r;
    pending.push_back({t, req});
  }
  while (!pending.empty())
    if (int r = complete_front(); r != 0) return r;
  return 0;
}

int ChainProxy::post_first(const void* in, uint64_t count, int dtype, std::size_t elem, int op,
                           std::size_t calls, double timeout_s) {
  error_.clear();
  const Steps st = steps_of(count, elem, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  auto no_room = [&]() -> int {
    return std::chrono::steady_clock::now() > deadline ? kTimedOut : 0;
  };
  for (std::size_t t = 0; t < std::min({calls, st.n, static_cast<std::size_t>(kSteps)}); ++t) {
    void* req = nullptr;
    if (int r = post_call(t, in, st, dtype, op, no_room, &req); r != 0) {
      error_ = call_failed(t, st, "iallreduce", r, timeout_s);
      return r;
    }
  }
  return 0;
}

}  // namespace squeeze::perf

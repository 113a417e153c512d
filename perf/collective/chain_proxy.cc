#include "perf/collective/chain_proxy.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>

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

int ChainProxy::allreduce(const void* in, void* out, uint64_t count, int dtype, std::size_t elem,
                          int op, double timeout_s, std::size_t chunk) {
  error_.clear();
  const std::size_t bytes = count * elem;
  if (chunk == 0) chunk = chunk_bytes(bytes);
  const std::size_t loop = static_cast<std::size_t>(channels_) * chunk;  // one call
  const std::size_t steps = std::max<std::size_t>(1, (bytes + loop - 1) / loop);
  const auto limit = std::chrono::duration<double>(timeout_s);
  auto deadline = std::chrono::steady_clock::now() + limit;
  struct Pending {
    std::size_t step;
    void* req;
  };
  std::deque<Pending> pending;
  auto failed = [&](std::size_t step, const char* what, int r) {
    error_ = std::string(what) + " of call " + std::to_string(step) + " of " +
             std::to_string(steps) +
             (r == kTimedOut ? " made no progress for " + std::to_string(timeout_s) + " s"
                             : std::string(" failed: ") + nccl_result_name(r));
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
    const std::size_t begin = p.step * loop;
    const std::size_t n = std::min(loop, bytes - std::min(bytes, begin));
    if (n != 0) std::memcpy(static_cast<uint8_t*>(out) + begin, recv_slot(p.step), n);
    pending.pop_front();
    return 0;
  };
  for (std::size_t t = 0; t < steps; ++t) {
    while (pending.size() >= static_cast<std::size_t>(kSteps))
      if (int r = complete_front(); r != 0) return r;
    const std::size_t begin = t * loop;
    const std::size_t n = std::min(loop, bytes - std::min(bytes, begin));
    if (n != 0) std::memcpy(send_slot(t), static_cast<const uint8_t*>(in) + begin, n);
    void* req = nullptr;
    while (req == nullptr) {
      if (int r = table_.iallreduce(comm_, send_slot(t), recv_slot(t), loop / elem, dtype, op,
                                    send_mh_, recv_mh_, &req);
          r != 0)
        return failed(t, "iallreduce", r);
      if (req == nullptr) {  // the plugin has no room: NCCL tries again later
        if (pending.empty()) {
          if (std::chrono::steady_clock::now() > deadline)
            return failed(t, "iallreduce", kTimedOut);
          sched_yield();
          continue;
        }
        if (int r = complete_front(); r != 0) return r;
      }
    }
    ++calls_;
    pending.push_back({t, req});
  }
  while (!pending.empty())
    if (int r = complete_front(); r != 0) return r;
  return 0;
}

int ChainProxy::post_first(const void* in, uint64_t count, int dtype, std::size_t elem, int op,
                           std::size_t calls, double timeout_s) {
  error_.clear();
  const std::size_t bytes = count * elem;
  const std::size_t loop = static_cast<std::size_t>(channels_) * chunk_bytes(bytes);
  const std::size_t steps = std::max<std::size_t>(1, (bytes + loop - 1) / loop);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (std::size_t t = 0; t < std::min({calls, steps, static_cast<std::size_t>(kSteps)}); ++t) {
    const std::size_t begin = t * loop;
    const std::size_t n = std::min(loop, bytes - std::min(bytes, begin));
    if (n != 0) std::memcpy(send_slot(t), static_cast<const uint8_t*>(in) + begin, n);
    void* req = nullptr;
    while (req == nullptr) {
      if (int r = table_.iallreduce(comm_, send_slot(t), recv_slot(t), loop / elem, dtype, op,
                                    send_mh_, recv_mh_, &req);
          r != 0) {
        error_ = std::string("iallreduce of call ") + std::to_string(t) +
                 " failed: " + nccl_result_name(r);
        return r;
      }
      if (req == nullptr && std::chrono::steady_clock::now() > deadline) {
        error_ = "iallreduce of call " + std::to_string(t) + " found no room in time";
        return kTimedOut;
      }
    }
    ++calls_;
  }
  return 0;
}

}  // namespace squeeze::perf

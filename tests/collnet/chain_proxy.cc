#include "tests/collnet/chain_proxy.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>

namespace squeeze::testing {

ChainProxy::ChainProxy(CollNetApi& api, void* coll_comm, int channels)
    : api_(api), comm_(coll_comm), channels_(channels), region_(2 * kSteps * stride(), 0) {}

ChainProxy::~ChainProxy() {
  if (send_mh_ != nullptr) api_.dereg_mr(comm_, send_mh_);
  if (recv_mh_ != nullptr) api_.dereg_mr(comm_, recv_mh_);
}

int ChainProxy::setup() {
  if (int r =
          api_.reg_mr(comm_, region_.data(), region_.size(), squeeze::nccl::kPtrHost, &send_mh_);
      r != 0)
    return r;
  return api_.reg_mr(comm_, region_.data(), region_.size(), squeeze::nccl::kPtrHost, &recv_mh_);
}

// src/enqueue.cc (CollNetChain): min(256 KiB, stepSize), halved while the
// collective has fewer than depth x 64 chunks per channel (down to 128 KiB), x
// 8 (64 KiB), x 1 (32 KiB).
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
  const std::size_t bytes = count * elem;
  if (chunk == 0) chunk = chunk_bytes(bytes);
  const std::size_t loop =
      static_cast<std::size_t>(channels_) * chunk;  // one call, one group of channels
  const std::size_t steps = std::max<std::size_t>(1, (bytes + loop - 1) / loop);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  struct Pending {
    std::size_t step;
    void* req;
  };
  std::deque<Pending> pending;
  auto complete_front = [&]() -> int {
    const Pending p = pending.front();
    int done = 0, size = 0;
    while (!done) {
      if (int r = api_.test(p.req, &done, &size); r != 0) return r;
      if (!done && std::chrono::steady_clock::now() > deadline) return -1;
    }
    const std::size_t begin = p.step * loop;
    const std::size_t n = std::min(loop, bytes - std::min(bytes, begin));
    std::memcpy(static_cast<uint8_t*>(out) + begin, recv_slot(static_cast<int>(p.step)), n);
    pending.pop_front();
    return 0;
  };
  for (std::size_t t = 0; t < steps; ++t) {
    while (pending.size() >= static_cast<std::size_t>(kSteps))
      if (int r = complete_front(); r != 0) return r;
    const std::size_t begin = t * loop;
    const std::size_t n = std::min(loop, bytes - std::min(bytes, begin));
    std::memcpy(send_slot(static_cast<int>(t)), static_cast<const uint8_t*>(in) + begin, n);
    void* req = nullptr;
    while (req == nullptr) {
      if (int r =
              api_.iallreduce(comm_, send_slot(static_cast<int>(t)), recv_slot(static_cast<int>(t)),
                              loop / elem, dtype, op, send_mh_, recv_mh_, &req);
          r != 0)
        return r;
      if (req == nullptr) {
        if (pending.empty() || std::chrono::steady_clock::now() > deadline) return -1;
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

}  // namespace squeeze::testing

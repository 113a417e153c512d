#include "tests/collnet/rank_group.h"

#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

#include "tests/plugin/fork_peer.h"

namespace squeeze::testing {

namespace {
constexpr std::size_t kHeaderBytes = 64;
constexpr std::size_t kNumbers = 8;
}  // namespace

RankGroup::RankGroup(int nranks, std::size_t bytes_per_rank)
    : n_(nranks), per_rank_(bytes_per_rank) {
  size_ = kHeaderBytes +
          static_cast<std::size_t>(n_) * (kHandleBytes + kNumbers * sizeof(double) + per_rank_);
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap of the ranks' shared area failed");
  base_ = static_cast<uint8_t*>(p);
  std::memset(base_, 0, size_);
  new (base_) Header{};
}

RankGroup::~RankGroup() {
  if (base_ != nullptr) munmap(base_, size_);
}

uint8_t* RankGroup::handle_at(int rank) {
  return base_ + kHeaderBytes + static_cast<std::size_t>(rank) * kHandleBytes;
}

double* RankGroup::numbers(int rank) {
  return reinterpret_cast<double*>(base_ + kHeaderBytes +
                                   static_cast<std::size_t>(n_) * kHandleBytes) +
         static_cast<std::size_t>(rank) * kNumbers;
}

uint8_t* RankGroup::out(int rank) {
  return base_ + kHeaderBytes +
         static_cast<std::size_t>(n_) * (kHandleBytes + kNumbers * sizeof(double)) +
         static_cast<std::size_t>(rank) * per_rank_;
}

std::vector<int> RankGroup::run(const std::function<int(int rank)>& body, double timeout_s) {
  std::vector<std::unique_ptr<ForkPeer>> peers;
  for (int r = 0; r < n_; ++r)
    peers.push_back(std::make_unique<ForkPeer>([&body, r] { return body(r); }));
  std::vector<int> codes;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (auto& p : peers) {
    const double left = std::max(
        0.1, std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count());
    codes.push_back(p->wait(left));
  }
  return codes;
}

std::vector<void*> RankGroup::exchange_handles(int rank, const void* handle, double timeout_s) {
  std::memcpy(handle_at(rank), handle, kHandleBytes);
  header()->published.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (header()->published.load() < n_) {
    if (std::chrono::steady_clock::now() > deadline) return {};
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::vector<void*> out;
  for (int r = 0; r < n_; ++r) out.push_back(handle_at(r));
  return out;
}

bool RankGroup::barrier(double timeout_s) {
  const int gen = header()->generation.load();
  if (header()->arrived.fetch_add(1) + 1 == n_) {
    header()->arrived.store(0);
    header()->generation.fetch_add(1);
    return true;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (header()->generation.load() == gen) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

}  // namespace squeeze::testing

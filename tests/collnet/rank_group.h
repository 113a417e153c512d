// N ranks as N forked processes, as N nodes would run them, sharing one
// anonymous mapping: the listen handles NCCL would exchange, a barrier, and
// room for each rank's results. The parent never loads the plugin, so every
// rank starts from a fresh library with its own environment.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace squeeze::testing {

class RankGroup {
 public:
  static constexpr std::size_t kHandleBytes = 128;
  RankGroup(int nranks, std::size_t bytes_per_rank);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int nranks() const { return n_; }
  // Runs body(rank) in one child per rank and returns their exit codes (128 +
  // signal when killed; a child still running after timeout_s is killed).
  std::vector<int> run(const std::function<int(int rank)>& body, double timeout_s = 240);

  // In a child: publishes this rank's handle and waits for everybody's; returns
  // pointers to the shared copies, as NCCL passes them to connect.
  std::vector<void*> exchange_handles(int rank, const void* handle, double timeout_s = 60);
  // In a child: waits until every rank arrived (false on timeout).
  bool barrier(double timeout_s = 60);
  // Per-rank result area (bytes_per_rank), readable by the parent after run().
  uint8_t* out(int rank);
  // Per-rank small numbers (8 doubles each), e.g. timings.
  double* numbers(int rank);

 private:
  struct Header {
    std::atomic<int> published;
    std::atomic<int> arrived;
    std::atomic<int> generation;
  };
  int n_;
  std::size_t per_rank_;
  std::size_t size_ = 0;
  uint8_t* base_ = nullptr;
  Header* header() { return reinterpret_cast<Header*>(base_); }
  uint8_t* handle_at(int rank);
};

}  // namespace squeeze::testing

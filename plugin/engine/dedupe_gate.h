// Row dedupe only where rows repeat. It hashes every row of a message and adds a row map to
// the frame, and it pays only where a message holds the same row more than once. NCCL sends
// an all-to-all in 128 KiB messages (NCCL_P2P_NET_CHUNKSIZE), 256 rows of 128 float32; in
// squeeze-perf's DLRM embeddings so few rows repeat that dedupe moved the ratio from 6.90 to
// 6.93 and cost ~7% of a rank's time. So each stream of a sending comm keeps a gate: a
// message whose dedupe removed fewer than 1/32 of its rows closes it for the stream's next
// kRest messages, which skip dedupe; then one message probes again. A stream whose messages
// repeat rows keeps it open. Skipping gives up less than 1/32 of the ratio and changes no
// decoded value (duplicate rows get the same codes either way; tests/compress/quantize_test.cc).
#pragma once

#include <atomic>
#include <cstdint>

namespace squeeze::plugin {

class DedupeGate {
 public:
  static constexpr uint32_t kRest = 63;
  static constexpr uint64_t kMinRemovedShare = 32;  // dedupe must remove >= rows / 32

  // Progress thread, for a message whose rule asks for row dedupe: whether it runs it.
  bool open() {
    uint32_t rest = rest_.load(std::memory_order_relaxed);
    while (rest > 0) {
      if (rest_.compare_exchange_weak(rest, rest - 1, std::memory_order_relaxed)) return false;
    }
    return true;
  }
  // Codec worker, after a message that ran it: `rows` looked at, `unique` of them distinct.
  // Returns true when this closed the gate.
  bool saw(uint64_t rows, uint64_t unique) {
    if (rows == 0 || unique > rows || (rows - unique) * kMinRemovedShare >= rows) return false;
    rest_.store(kRest, std::memory_order_relaxed);
    return true;
  }

 private:
  std::atomic<uint32_t> rest_{0};
};

}  // namespace squeeze::plugin

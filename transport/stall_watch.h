// The stall deadline of a receive (SocketOptions::stall_timeout_ms, SQUEEZE_STALL_TIMEOUT_S):
// how long a message may sit halfway, with a receive posted for it, without real progress,
// before the request fails with Status::Remote. Shared by the three transports:
// - TCP counts bytes. Real progress is at least kProgressBytes (64 KiB) arriving, or the rest
//   of the header, payload or part being read (whichever is less): a peer that trickles a byte
//   now and then does not restart the clock. A link that delivers 64 KiB per deadline is
//   never failed: with the default 120 s that is 4.4 kbit/s, far below any healthy link.
// - UCX and verbs see no bytes of a message until it completes: their clock runs from the
//   moment a message is known to have started (UCX: its header arrived; verbs: one of its
//   parts arrived) until it completes.
// Only receiving sides have one: a sender whose bytes do not leave may face a receiver that
// has not posted its receive yet, which is no fault. A comm between messages does not run the
// clock either (an idle peer is not a stalled one). 0 disables the deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "transport/status.h"

namespace squeeze::transport {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr uint64_t kProgressBytes = 64 * 1024;

  explicit StallWatch(int timeout_ms = 0) : timeout_(timeout_ms) {}
  bool enabled() const { return timeout_.count() > 0; }
  int timeout_ms() const { return static_cast<int>(timeout_.count()); }

  // `bytes` of the header, payload or part being read arrived. Once kProgressBytes have
  // arrived since the clock started, that is progress: the clock stops until the next wait.
  void moved(uint64_t bytes) {
    if (!running_) return;
    got_ += bytes;
    if (got_ >= kProgressBytes) completed();
  }
  // The header, payload or part being read is complete (or none is halfway): progress.
  void completed() {
    running_ = false;
    got_ = 0;
  }
  // Nothing could move while a message is halfway. Starts the clock if it is not running;
  // true once it has run for the deadline without progress.
  bool expired(Clock::time_point now = Clock::now()) {
    if (!enabled()) return false;
    if (!running_) {
      running_ = true;
      since_ = now;
      got_ = 0;
      return false;
    }
    return now - since_ >= timeout_;
  }
  bool running() const { return running_; }
  // Milliseconds until the running clock reaches the deadline (at least 1); -1 when it does
  // not run. For a thread that sleeps in poll().
  int ms_left(Clock::time_point now = Clock::now()) const {
    if (!running_ || !enabled()) return -1;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(since_ + timeout_ - now);
    return left.count() < 1 ? 1 : static_cast<int>(left.count());
  }
  double waited_s(Clock::time_point now = Clock::now()) const {
    return running_ ? std::chrono::duration<double>(now - since_).count() : 0.0;
  }
  // Bytes that arrived since the clock started (less than kProgressBytes).
  uint64_t got() const { return got_; }

 private:
  std::chrono::milliseconds timeout_;
  bool running_ = false;
  uint64_t got_ = 0;
  Clock::time_point since_{};
};

// The error every transport returns at the deadline: "receive from PEER stalled: PROGRESS in
// WAITED s with MISSING", where `progress` says what arrived while the clock ran and `missing`
// what is still to come (e.g. "1113112 of 1114112 payload bytes missing").
inline Status stall_error(const std::string& peer, double waited_s, const std::string& progress,
                          const std::string& missing) {
  char waited[32];
  std::snprintf(waited, sizeof(waited), "%.1f", waited_s);
  return Status::Remote("receive from " + peer + " stalled: " + progress + " in " + waited +
                        " s with " + missing + " (stall deadline, SQUEEZE_STALL_TIMEOUT_S)");
}

// TCP's `progress` text: the bytes that arrived while the clock ran.
inline std::string bytes_progress(const StallWatch& w) {
  if (w.got() == 0) return "no byte";
  return std::to_string(w.got()) + (w.got() == 1 ? " byte" : " bytes") + " (less than 64 KiB)";
}

}  // namespace squeeze::transport

// Adaptive controllers for the lossy codecs: pure state machines with no I/O and no clock.
// They hold no locks; callers that share one between threads synchronise it themselves.
//
//  - ThresholdRefresh: when a stream's threshold codec must search tau again.
//  - ErrorBoundSchedule: the per-iteration level of the two-level adaptation of the DLRM
//    lossy-compression work: the error bound starts at m x base and decays to 1 x base over
//    N messages (step, linear, or log = geometric interpolation).
//  - StreamBounds: the per-table level: one multiplier per stream, with a default.
//  - AdaptiveErrorBound: both levels combined into the bound a message is encoded with.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace squeeze::compress {

// Counts the messages of one stream and says when the threshold must be searched again:
// on the first message, then every `refresh_every` messages (0 and 1 mean every message),
// on the next message after invalidate(), and after a message whose kept count drifted
// out of [target / 2, 2 * target] (observe_kept). The drift check matters with error
// feedback: the residual grows while tau stays, so a stale tau keeps ever more elements.
class ThresholdRefresh {
 public:
  explicit ThresholdRefresh(uint32_t refresh_every = 1) : every_(refresh_every) {}

  // True when the message about to be encoded must search tau. Does not count it.
  bool search_due() const { return !searched_ || every_ <= 1 || since_search_ >= every_; }
  // Records one encoded message; `searched` says whether it searched tau.
  void record(bool searched);
  // Forces a search on the next message (the stream's size or parameters changed, or the
  // reused tau stopped matching the data).
  void invalidate() { searched_ = false; }
  // After a message: kept of count elements were kept for a target fraction `keep`. Out
  // of [target / 2, 2 * target] (checked when target = keep * count >= 32) the next message
  // searches again.
  void observe_kept(uint64_t kept, uint64_t count, double keep);
  void set_refresh_every(uint32_t every) { every_ = every; }

  uint32_t refresh_every() const { return every_; }
  uint64_t messages() const { return messages_; }
  uint64_t searches() const { return searches_; }

 private:
  uint32_t every_;
  bool searched_ = false;
  uint64_t since_search_ = 0;  // messages recorded since (and including) the last search
  uint64_t messages_ = 0;
  uint64_t searches_ = 0;
};

enum class ScheduleKind : uint8_t {
  kConstant = 0,  // always 1 x
  kStep = 1,      // m x for messages [0, N), then 1 x
  kLinear = 2,    // m + (1 - m) * i / N, then 1 x
  kLog = 3,       // m ^ (1 - i / N) (geometric interpolation from m to 1), then 1 x
};
const char* schedule_kind_name(ScheduleKind k);  // "constant", "step", "linear", "log"
bool parse_schedule_kind(std::string_view s, ScheduleKind* out);

// Per-iteration error-bound multiplier. message_index counts the stream's messages from 0.
struct ErrorBoundSchedule {
  ScheduleKind kind = ScheduleKind::kConstant;
  double start_multiplier = 1.0;  // m: finite and > 0 (may be < 1 to start tighter)
  uint64_t decay_messages = 0;    // N: 0 means 1 x from the first message

  bool valid() const;  // start_multiplier finite and > 0
  // The multiplier for this message; 1 for every index >= N. Returns 1 when !valid().
  double multiplier(uint64_t message_index) const;
};

// Per-stream multipliers (streams are collective call sites, as the profiler names them).
class StreamBounds {
 public:
  // An invalid default (not finite, or <= 0) is replaced by 1.
  explicit StreamBounds(double default_multiplier = 1.0);
  // Multipliers must be finite and > 0; returns false (and changes nothing) otherwise.
  bool set(uint64_t stream, double multiplier);
  bool set_default(double multiplier);
  void erase(uint64_t stream) { by_stream_.erase(stream); }
  double multiplier(uint64_t stream) const;
  double default_multiplier() const { return default_; }
  std::size_t size() const { return by_stream_.size(); }

 private:
  double default_;
  std::unordered_map<uint64_t, double> by_stream_;
};

// Both levels: effective bound = base x stream multiplier x schedule multiplier.
struct AdaptiveErrorBound {
  StreamBounds streams;
  ErrorBoundSchedule schedule;

  double effective_error_bound(double base, uint64_t stream, uint64_t message_index) const {
    return base * streams.multiplier(stream) * schedule.multiplier(message_index);
  }
};

}  // namespace squeeze::compress

// The compression ratio as the plugin itself counts it: its statistics file (SQUEEZE_STATS,
// written by the plugin; see plugin/policy/stats.h). The emulator points SQUEEZE_STATS at a
// private directory per process unless the user set it, reads the totals after each
// communicator is finalized, and reports the difference, so each row's ratio covers exactly
// that collective and size: bytes handed to isend / bytes the plugin put on the wire.
#pragma once

#include <cstdint>
#include <string>

namespace squeeze::perf {

struct WireTotals {
  bool found = false;        // a stats file was there and parsed
  uint64_t bytes_in = 0;     // handed to the plugin in messages it encoded
  uint64_t bytes_out = 0;    // the frames it sent for them
  uint64_t raw_bytes = 0;    // handed and sent unchanged
  uint64_t messages = 0, raw_messages = 0;
  uint64_t handed() const { return bytes_in + raw_bytes; }
  uint64_t wire() const { return bytes_out + raw_bytes; }
};

class StatsFile {
 public:
  // Call before the plugin is loaded: sets SQUEEZE_STATS to a private file unless it is set.
  explicit StatsFile(int rank);
  ~StatsFile();  // removes the private directory
  StatsFile(const StatsFile&) = delete;
  StatsFile& operator=(const StatsFile&) = delete;

  // Sum of the totals of the stats file(s) this process's plugin wrote so far.
  WireTotals read() const;
  const std::string& where() const { return template_; }

 private:
  int rank_;
  std::string template_;  // SQUEEZE_STATS as the plugin sees it
  std::string private_dir_;
};

// after - before, field by field; not found when either is missing or the counters went
// backwards (the plugin restarted its counts).
WireTotals wire_delta(const WireTotals& before, const WireTotals& after);

}  // namespace squeeze::perf

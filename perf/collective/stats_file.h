// The compression ratio as the plugin itself counts it: its statistics file (SQUEEZE_STATS,
// written by the plugin at every finalize, named per rank after SQUEEZE_RANK; see
// plugin/policy/stats.h). Unless the user set SQUEEZE_STATS, squeeze-perf points it at a
// private directory that it removes at the end (also on SIGINT/SIGTERM). Each rank reads its
// totals after each communicator is finalized and reports the difference, so a row's ratio
// covers exactly that collective and size: bytes handed to isend / bytes put on the wire.
// A --baseline plugin instance writes to its own file beside it ("baseline." before the
// file name), so the two instances' counts stay apart.
#pragma once

#include <cstdint>
#include <string>

#include "perf/collective/scoped_env.h"

namespace squeeze::perf {

struct WireTotals {
  bool found = false;      // a stats file was there and parsed
  uint64_t bytes_in = 0;   // handed to the plugin in messages it encoded
  uint64_t bytes_out = 0;  // the frames it sent for them
  uint64_t raw_bytes = 0;  // handed and sent unchanged
  uint64_t messages = 0, raw_messages = 0;
  uint64_t collnet_handed = 0;  // of handed(): what the collective network carried
  uint64_t handed() const { return bytes_in + raw_bytes; }
  uint64_t wire() const { return bytes_out + raw_bytes; }
};

// Owns the private statistics directory of a run (ranks first..first+count-1 write there).
// Does nothing when SQUEEZE_STATS is already set. Create it before forking ranks.
class StatsDir {
 public:
  StatsDir(int first_rank, int count);
  ~StatsDir();  // unsets SQUEEZE_STATS and removes the directory
  StatsDir(const StatsDir&) = delete;
  StatsDir& operator=(const StatsDir&) = delete;

 private:
  std::string dir_;
};

// One rank's view of the plugin's statistics file. Construct it before the plugin loads: it
// removes the rank's file from an earlier run, which this run's plugin would overwrite.
class StatsFile {
 public:
  // baseline: the file of the --baseline instance.
  explicit StatsFile(int rank, bool baseline = false);
  WireTotals read() const;  // the totals written so far (not found when there is no file)
  // Points SQUEEZE_STATS at this file's template for the scope, so that the plugin instance
  // finalized inside it writes here (the plugin reads the variable when it writes).
  ScopedEnv plugin_writes_here() const;

 private:
  std::string path_;      // SQUEEZE_STATS with this rank applied
  std::string template_;  // SQUEEZE_STATS as given
};

// The SQUEEZE_STATS template of a --baseline instance, given the main one's:
// /tmp/d/stats.json -> /tmp/d/baseline.stats.json.
std::string baseline_template(const std::string& main_template);

// after - before, field by field; not found when either is missing or the counters went
// backwards (the plugin restarted its counts).
WireTotals wire_delta(const WireTotals& before, const WireTotals& after);

}  // namespace squeeze::perf

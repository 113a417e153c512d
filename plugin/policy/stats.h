// Per-rule, per-collective, per-route statistics of what the plugin did: messages, bytes in and
// out, ratio, encode and decode time, raw bypasses by cause, and the largest observed error.
// The route says which of the library's two NCCL plugins carried the message: the net plugin
// (ring all-reduce, all-to-all, send/recv) or the collective network (plugin/collnet).
// Recording is a handful of relaxed atomic adds on a cache-line-aligned cell (no lock, no
// allocation), so the progress threads can call it on every message. Reading (summary line,
// JSON file) happens at finalize.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compress/codec.h"
#include "plugin/policy/message_meta.h"
#include "plugin/policy/policy.h"
#include "plugin/policy/raw_cause.h"

namespace squeeze::policy {

inline constexpr int kNumCodecs = 5;  // compress::CodecId values

enum class Route : uint8_t { kNet = 0, kCollNet = 1 };
inline constexpr int kNumRoutes = 2;
const char* route_name(Route r);  // "net", "collnet"

class Stats {
 public:
  // One slot per rule, then one for the default (Policy::stats_slot()).
  explicit Stats(std::vector<std::string> rule_names, std::string policy_source = {});
  static std::unique_ptr<Stats> for_policy(const Policy& p);

  // Hot path. Out-of-range slots, collectives or routes are ignored.
  void record_encode(int slot, Collective c, uint64_t bytes_in, uint64_t bytes_out,
                     uint64_t encode_ns, Route route = Route::kNet) noexcept;
  void record_raw(int slot, Collective c, uint64_t bytes, RawCause why,
                  Route route = Route::kNet) noexcept;
  // largest |x - x'| seen
  void record_error(int slot, Collective c, double max_abs_error,
                    Route route = Route::kNet) noexcept;
  void record_decode(compress::CodecId codec, Collective c, uint64_t frame_bytes,
                     uint64_t bytes_out, uint64_t decode_ns, Route route = Route::kNet) noexcept;

  struct Counters {
    uint64_t messages = 0;  // encoded
    uint64_t bytes_in = 0;
    uint64_t bytes_out = 0;
    uint64_t encode_ns = 0;
    uint64_t raw_messages[kNumRawCauses] = {};
    uint64_t raw_bytes = 0;
    uint64_t error_samples = 0;
    double max_error = 0;
    uint64_t raw_total() const;
    void add(const Counters& o);
  };
  struct DecodeCounters {
    uint64_t messages = 0;
    uint64_t frame_bytes = 0;
    uint64_t bytes_out = 0;
    uint64_t decode_ns = 0;
    void add(const DecodeCounters& o);
  };
  int slots() const { return static_cast<int>(names_.size()); }
  const std::string& slot_name(int slot) const { return names_[static_cast<std::size_t>(slot)]; }
  Counters cell(int slot, Collective c, Route route = Route::kNet) const;
  DecodeCounters decode_cell(compress::CodecId codec, Collective c,
                             Route route = Route::kNet) const;
  Counters totals() const;  // every route
  DecodeCounters decode_totals() const;
  Counters route_totals(Route route) const;
  DecodeCounters route_decode_totals(Route route) const;

  // One line for NCCL's INFO log.
  std::string summary_line() const;
  // The per-rank JSON document; only cells that saw traffic appear. "totals", "rules[].collectives"
  // and "decode" keep their meaning (every route, net route, net route); the collective network's
  // cells appear under "routes", "rules[].collnet" and "collnet_decode".
  std::string to_json(int rank) const;
  // Writes to_json(rank) to stats_path_for_rank(path_template, rank), atomically (temp file
  // then rename). On failure returns false with *error naming the file and the reason.
  bool write_json(std::string_view path_template, int rank, std::string* error) const;

 private:
  struct alignas(64) Cell {
    std::atomic<uint64_t> messages{0}, bytes_in{0}, bytes_out{0}, encode_ns{0}, raw_bytes{0},
        error_samples{0};
    std::atomic<uint64_t> raw[kNumRawCauses] = {};
    std::atomic<uint64_t> max_error_bits{
        0};  // bits of a double >= 0, so integer order is value order
  };
  struct alignas(64) DecodeCell {
    std::atomic<uint64_t> messages{0}, frame_bytes{0}, bytes_out{0}, decode_ns{0};
  };
  Cell* cell_ptr(int slot, Collective c, Route route) noexcept;
  std::size_t cell_index(int slot, Collective c,
                         Route route) const noexcept;  // SIZE_MAX: out of range
  std::size_t decode_index(compress::CodecId codec, Collective c, Route route) const noexcept;

  std::vector<std::string> names_;
  std::string source_;
  std::unique_ptr<Cell[]> cells_;               // routes x slots x kNumCollectives
  std::unique_ptr<DecodeCell[]> decode_cells_;  // routes x kNumCodecs x kNumCollectives
};

// SQUEEZE_STATS names a path; each rank writes its own file. "%r" in the path is replaced by
// the rank; otherwise ".rank<R>" is inserted before a ".json" suffix, or ".rank<R>.json" is
// appended: stats.json -> stats.rank3.json, /tmp/sq -> /tmp/sq.rank3.json.
std::string stats_path_for_rank(std::string_view path_template, int rank);
inline constexpr const char* kStatsEnv = "SQUEEZE_STATS";

}  // namespace squeeze::policy

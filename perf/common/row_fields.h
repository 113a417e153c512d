// The fields of a result row that squeeze-perf (perf/collective) and squeeze-nccl-perf
// (perf/nccl) both write as JSON lines: their keys, and how each value is written (null where a
// figure is not finite or not stated). One definition, so that the two tools name and write
// them alike and a script reads either tool's rows. Each tool adds its own fields (what only
// it measures or runs on) after these.
#pragma once

#include <cmath>

#include <nlohmann/json.hpp>

namespace squeeze::perf {

namespace row_key {
inline constexpr char kBench[] = "bench";  // which tool wrote the row
inline constexpr char kCollective[] = "collective";
inline constexpr char kRoute[] = "route";
inline constexpr char kNranks[] = "nranks";
inline constexpr char kSize[] = "size";  // bytes per rank, as nccl-tests counts them
inline constexpr char kCount[] = "count";
inline constexpr char kType[] = "type";
inline constexpr char kRedop[] = "redop";
inline constexpr char kRoot[] = "root";
inline constexpr char kData[] = "data";
inline constexpr char kIters[] = "iters";
inline constexpr char kTimeUs[] = "time_us";
inline constexpr char kAlgbw[] = "algbw_GBps";
inline constexpr char kBusbw[] = "busbw_GBps";
inline constexpr char kRatio[] = "ratio";
inline constexpr char kBytesHanded[] = "bytes_handed";
inline constexpr char kBytesWire[] = "bytes_wire";
inline constexpr char kMaxAbsErr[] = "max_abs_err";
inline constexpr char kWrong[] = "wrong";
inline constexpr char kBound[] = "bound";
inline constexpr char kRanksAgree[] = "ranks_agree";
inline constexpr char kAgreeRequired[] = "agree_required";
inline constexpr char kPolicy[] = "policy";
inline constexpr char kLabel[] = "label";
}  // namespace row_key

// A JSON number, or null where v is NaN or infinite (JSON has neither).
inline nlohmann::json json_number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// Writes the fields both tools' rows carry into j. Row is squeeze-perf's perf::Row or
// squeeze-nccl-perf's perf::nccl::Row, which name these members alike (see their headers).
template <typename Row>
void put_row_fields(const Row& r, nlohmann::json& j) {
  namespace k = row_key;
  j[k::kCollective] = r.collective;
  j[k::kRoute] = r.route;
  j[k::kNranks] = r.nranks;
  j[k::kSize] = r.bytes;
  j[k::kCount] = r.count;
  j[k::kType] = r.type;
  j[k::kRedop] = r.redop;
  j[k::kRoot] = -1;  // neither tool runs a rooted collective
  j[k::kData] = r.data;
  j[k::kIters] = r.iters;
  j[k::kTimeUs] = json_number(r.time_us);
  j[k::kAlgbw] = json_number(r.algbw);
  j[k::kBusbw] = json_number(r.busbw);
  j[k::kRatio] = r.have_ratio ? json_number(r.ratio) : nlohmann::json(nullptr);
  j[k::kBytesHanded] = r.handed;
  j[k::kBytesWire] = r.wire;
  j[k::kMaxAbsErr] = json_number(r.max_err);
  j[k::kWrong] = r.wrong >= 0 ? nlohmann::json(r.wrong) : nlohmann::json(nullptr);
  j[k::kBound] = r.bound;
  j[k::kRanksAgree] = r.agree < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.agree == 1);
  j[k::kAgreeRequired] = r.agree_required;
}

}  // namespace squeeze::perf

#include "perf/common/nccl_table.h"

namespace squeeze::perf {
namespace {

// nccl-tests' widths: size 12, count 12, type 8, redop 6, root 6; the group's time 7, algbw 6,
// busbw 6, #wrong 5 (6 in the header). Squeeze's columns follow with their own widths.
constexpr const char* kPreHeader = "# %10s  %12s  %8s  %6s  %6s";
constexpr const char* kGroupHeader = "  %7s  %6s  %6s %6s";
constexpr const char* kExtraFormat = "  %7s  %9s  %15s  %5s";

}  // namespace

double busbw_factor(const std::string& collective, int nranks) {
  const double n = nranks;
  if (nranks < 2) return 0;
  return collective == "allreduce" ? 2.0 * (n - 1) / n : (n - 1) / n;
}

void ResultTable::header() {
  std::fprintf(out_, "#\n");
  std::fprintf(out_, kPreHeader, "", "", "", "", "");
  std::fprintf(out_, "           out-of-place          %-44s\n", "                   squeeze");
  std::fprintf(out_, kPreHeader, "size", "count", "type", "redop", "root");
  std::fprintf(out_, kGroupHeader, "time", "algbw", "busbw", "#wrong");
  std::fprintf(out_, kExtraFormat, "ratio", "max_err", "bound", "agree");
  std::fprintf(out_, "\n");
  std::fprintf(out_, kPreHeader, "(B)", "(elements)", "", "", "");
  std::fprintf(out_, kGroupHeader, "(us)", "(GB/s)", "(GB/s)", "");
  std::fprintf(out_, kExtraFormat, "", "", "", "");
  std::fprintf(out_, "\n");
  std::fflush(out_);
}

void ResultTable::row(const TableRow& r) {
  char time[32], wrong[32] = "  N/A", ratio[32] = "-", err[32];
  // nccl-tests' time format: fewer decimals as the time grows, always 7 wide.
  const char* tf = r.time_us >= 10000.0 ? "%7.0f" : r.time_us >= 100.0 ? "%7.1f" : "%7.2f";
  std::snprintf(time, sizeof time, tf, r.time_us);
  if (r.wrong >= 0) std::snprintf(wrong, sizeof wrong, "%5g", static_cast<double>(r.wrong));
  if (r.have_ratio) std::snprintf(ratio, sizeof ratio, "%.2f", r.ratio);
  std::snprintf(err, sizeof err, "%.3g", r.max_err);
  std::fprintf(out_, "%12zu  %12zu  %8s  %6s  %6d", r.bytes, r.count, r.type.c_str(),
               r.redop.c_str(), r.root);
  std::fprintf(out_, "  %7s  %6.2f  %6.2f  %5s", time, r.algbw, r.busbw, wrong);
  std::fprintf(out_, kExtraFormat, ratio, err, r.bound.c_str(), r.agree.c_str());
  std::fprintf(out_, "\n");
  std::fflush(out_);
  ++rows_;
  busbw_sum_ += r.busbw;
  rows_wrong_ += r.wrong > 0 ? 1 : 0;
}

void ResultTable::footer() {
  std::fprintf(out_, "# Out of bounds values : %d %s\n", rows_wrong_,
               rows_wrong_ != 0 ? "FAILED" : "OK");
  std::fprintf(out_, "# Avg bus bandwidth    : %g \n", rows_ > 0 ? busbw_sum_ / rows_ : 0.0);
  std::fprintf(out_, "#\n");
  std::fflush(out_);
  rows_ = rows_wrong_ = 0;
  busbw_sum_ = 0;
}

}  // namespace squeeze::perf

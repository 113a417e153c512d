// The result table of squeeze-perf and squeeze-nccl-perf in nccl-tests' language: nccl-tests'
// header lines, columns, order and number formats (size, count, type, redop, root, then the
// out-of-place group time, algbw, busbw, #wrong), its "# Out of bounds values" and "# Avg bus
// bandwidth" summary lines, and Squeeze's own columns after nccl-tests' (ratio, max_err,
// bound, agree), so that a parser written for nccl-tests reads these tables too
// (perf/nccl_table.py is one). The tools run one variant of each call, so the in-place group
// is not printed. One table per collective, as one nccl-tests binary prints one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace squeeze::perf {

struct TableRow {
  std::size_t bytes = 0;        // size (B): per rank, as nccl-tests counts it
  std::size_t count = 0;        // count (elements): of the call (all-to-all: per peer)
  std::string type;             // nccl-tests' names: float, half, bfloat16
  std::string redop;            // sum, prod, min, max, avg; "none" for all-to-all
  int root = -1;                // -1: no root, as for all-reduce and all-to-all
  double time_us = 0;           // time (us)
  double algbw = 0, busbw = 0;  // GB/s
  int64_t wrong = -1;           // #wrong; -1 prints N/A (no bound stated)
  // Squeeze's columns.
  bool have_ratio = false;  // ratio: bytes handed to the plugin / bytes on the wire
  double ratio = 1;
  double max_err = 0;  // max |result - exact|
  std::string bound;   // the policy's stated bound, one word ("exact", "rel=0.02")
  std::string agree;   // all-reduce ranks bit-identical: "yes", "NO", "no" (not required); "n/a"
};

// A tool's result row in the table's columns. Row: squeeze-perf's perf::Row or
// squeeze-nccl-perf's perf::nccl::Row, which name these members alike.
template <typename Row>
TableRow table_row(const Row& r) {
  TableRow t;
  t.bytes = r.bytes;
  t.count = r.count;
  t.type = r.type;
  t.redop = r.redop;
  t.time_us = r.time_us;
  t.algbw = r.algbw;
  t.busbw = r.busbw;
  t.wrong = r.wrong;
  t.have_ratio = r.have_ratio;
  t.ratio = r.ratio;
  t.max_err = r.max_err;
  t.bound = r.bound;
  t.agree = r.agree < 0 ? "n/a" : r.agree ? "yes" : r.agree_required ? "NO" : "no";
  return t;
}

// nccl-tests' busbw factors: all-reduce 2(n-1)/n, all-to-all (n-1)/n (0 for one rank).
double busbw_factor(const std::string& collective, int nranks);

class ResultTable {
 public:
  explicit ResultTable(std::FILE* out = stdout) : out_(out) {}
  void header();                // "#", the group line, the column names, their units
  void row(const TableRow& r);  // one line; counted into the summary
  void footer();                // the summary lines, then "#"; starts a new summary
 private:
  std::FILE* out_;
  int rows_ = 0, rows_wrong_ = 0;
  double busbw_sum_ = 0;
};

}  // namespace squeeze::perf

// The reduction of an all-reduce, under nccl-tests' names (-o): sum, prod, min, max, avg.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace squeeze::perf {

enum class RedOp : uint8_t { kSum, kProd, kMin, kMax, kAvg };

// "sum", "prod", "min", "max", "avg", in that order.
const std::vector<std::string>& red_op_names();
bool parse_red_op(const std::string& s, RedOp* out);
const char* red_op_name(RedOp op);

// a op b; kAvg adds (the division by the rank count is the caller's: NCCL multiplies each
// rank's input by 1/nranks before summing).
inline float apply_red_op(RedOp op, float a, float b) {
  switch (op) {
    case RedOp::kProd: return a * b;
    case RedOp::kMin: return a < b ? a : b;
    case RedOp::kMax: return a > b ? a : b;
    default: return a + b;
  }
}

}  // namespace squeeze::perf

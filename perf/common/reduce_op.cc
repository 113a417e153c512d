#include "perf/common/reduce_op.h"

namespace squeeze::perf {

const std::vector<std::string>& red_op_names() {
  static const std::vector<std::string> names = {"sum", "prod", "min", "max", "avg"};
  return names;
}

bool parse_red_op(const std::string& s, RedOp* out) {
  const auto& names = red_op_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == s) {
      *out = static_cast<RedOp>(i);
      return true;
    }
  }
  return false;
}

const char* red_op_name(RedOp op) { return red_op_names()[static_cast<std::size_t>(op)].c_str(); }

}  // namespace squeeze::perf

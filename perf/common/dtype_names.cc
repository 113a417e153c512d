#include "perf/common/dtype_names.h"

namespace squeeze::perf {

const std::vector<std::string>& float_dtype_names() {
  static const std::vector<std::string> names = {"float", "half", "bfloat16", "float32", "float16"};
  return names;
}

bool parse_float_dtype(const std::string& s, compress::Dtype* out) {
  if (s == "float" || s == "float32")
    *out = compress::Dtype::kFloat32;
  else if (s == "half" || s == "float16")
    *out = compress::Dtype::kFloat16;
  else if (s == "bfloat16")
    *out = compress::Dtype::kBfloat16;
  else
    return false;
  return true;
}

const char* nccl_tests_type_name(compress::Dtype d) {
  switch (d) {
    case compress::Dtype::kFloat16: return "half";
    case compress::Dtype::kBfloat16: return "bfloat16";
    case compress::Dtype::kFloat32: return "float";
    default: return "bytes";
  }
}

}  // namespace squeeze::perf

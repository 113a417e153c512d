// The float datatypes the perf tools run, under nccl-tests' names (float, half, bfloat16) and
// the codecs' names (float32, float16, bfloat16), which the tools accepted first.
#pragma once

#include <string>
#include <vector>

#include "compress/codec.h"

namespace squeeze::perf {

// Every name a tool accepts for -d / --dtype, nccl-tests' first.
const std::vector<std::string>& float_dtype_names();

// "float" or "float32", "half" or "float16", "bfloat16"; false for anything else.
bool parse_float_dtype(const std::string& s, compress::Dtype* out);

// nccl-tests' name of d: "float", "half", "bfloat16".
const char* nccl_tests_type_name(compress::Dtype d);

}  // namespace squeeze::perf

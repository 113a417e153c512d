// ncclResult_t values by name, for the perf tools' error messages.
#pragma once

#include <string>

namespace squeeze::perf {

// "ncclInvalidUsage (5)"; "ncclResult 42" for a value NCCL does not define.
std::string nccl_result_name(int rc);

}  // namespace squeeze::perf

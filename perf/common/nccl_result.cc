#include "perf/common/nccl_result.h"

#include "plugin/nccl/common.h"

namespace squeeze::perf {

std::string nccl_result_name(int rc) {
  const char* name = nullptr;
  switch (rc) {
    case kNcclSuccess: name = "ncclSuccess"; break;
    case kNcclUnhandledCudaError: name = "ncclUnhandledCudaError"; break;
    case kNcclSystemError: name = "ncclSystemError"; break;
    case kNcclInternalError: name = "ncclInternalError"; break;
    case kNcclInvalidArgument: name = "ncclInvalidArgument"; break;
    case kNcclInvalidUsage: name = "ncclInvalidUsage"; break;
    case kNcclRemoteError: name = "ncclRemoteError"; break;
    case kNcclInProgress: name = "ncclInProgress"; break;
    default: return "ncclResult " + std::to_string(rc);
  }
  return std::string(name) + " (" + std::to_string(rc) + ")";
}

}  // namespace squeeze::perf

#include "plugin/engine/result.h"

namespace squeeze::plugin {

nccl_result_t to_nccl(const transport::Status& s, const char* file, int line) {
  using C = transport::Status::Code;
  if (s.ok()) return kNcclSuccess;
  log_message(kLogWarn, kSubsysNet, file, line, "%s", s.message().c_str());
  switch (s.code()) {
    case C::kSystem: return kNcclSystemError;
    case C::kRemote: return kNcclRemoteError;
    case C::kInvalidUsage: return kNcclInvalidUsage;
    default: return kNcclInternalError;
  }
}

}  // namespace squeeze::plugin

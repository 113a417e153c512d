// Squeeze's own declarations of the parts of NCCL's plugin ABI shared by the net, profiler
// and tuner interfaces. Written from the ABI facts in shared/DESIGN.md §1 (NCCL 2.28.9, and
// NCCL 2.30.7 for net v12); layouts must match NCCL's bit for bit, names are ours.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// ncclResult_t values.
enum squeeze_nccl_result : int {
  kNcclSuccess = 0,
  kNcclUnhandledCudaError = 1,
  kNcclSystemError = 2,
  kNcclInternalError = 3,
  kNcclInvalidArgument = 4,
  kNcclInvalidUsage = 5,
  kNcclRemoteError = 6,
  kNcclInProgress = 7,
};
using nccl_result_t = int;  // ncclResult_t is an enum of int size.

// ncclDebugLogLevel
enum squeeze_nccl_log_level : int {
  kLogNone = 0,
  kLogVersion = 1,
  kLogWarn = 2,
  kLogInfo = 3,
  kLogAbort = 4,
  kLogTrace = 5,
};

// ncclDebugLogSubSys flags used by a net plugin.
constexpr unsigned long kSubsysInit = 0x1;
constexpr unsigned long kSubsysNet = 0x10;
constexpr unsigned long kSubsysTuning = 0x40;
constexpr unsigned long kSubsysEnv = 0x80;
constexpr unsigned long kSubsysProfile = 0x4000;

using nccl_logger_t = void (*)(int level, unsigned long flags, const char* file, int line,
                               const char* fmt, ...);

// ncclProfilerCallback_t: (eHandle, type 0=start 1=stop, pHandle, pluginId, extData)
using nccl_profiler_callback_t = nccl_result_t (*)(void** eHandle, int type, void* pHandle,
                                                   int64_t pluginId, void* extData);

}  // extern "C"

namespace squeeze::nccl {
constexpr int kPtrHost = 0x1;
constexpr int kPtrCuda = 0x2;
constexpr int kPtrDmabuf = 0x4;
constexpr std::size_t kHandleMaxSize = 128;
constexpr int kMaxRequests = 32;   // NCCL_NET_MAX_REQUESTS, per comm (x maxRecvs on the send side)
constexpr int kMaxDevsPerNic = 4;  // virtual devices per NIC, net v9..v11
constexpr int kMaxDevsPerNicV12 = 8;  // net v12 (NCCL 2.30)
constexpr int16_t kNetIdUndef = -1;   // NCCL_NET_ID_UNDEF: railId/planeId unknown (net v12)
constexpr std::size_t kMaxNetSizeBytes = std::size_t{1} << 40;  // 1 TiB
constexpr int kOptionalRecvCompletion = 0x1;
}  // namespace squeeze::nccl

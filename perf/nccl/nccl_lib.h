// libnccl, loaded at run time. The build needs only nccl.h; the library is found when the
// tool runs, so one build works with the CUDA toolkit's NCCL or with PyTorch's bundled one
// (the nvidia-nccl wheel) on a machine that has no toolkit NCCL.
#pragma once

#include <nccl.h>

#include <string>

namespace squeeze::perf::nccl {

class NcclLib {
 public:
  // Tries `path`, or each of nccl_lib_candidates() when empty. Throws std::runtime_error
  // naming every path tried and dlerror()'s reason.
  explicit NcclLib(const std::string& path);
  ~NcclLib();
  NcclLib(const NcclLib&) = delete;
  NcclLib& operator=(const NcclLib&) = delete;

  const std::string& path() const { return path_; }  // the one that loaded
  int version() const;                               // ncclGetVersion: 22809 for 2.28.9
  std::string version_string() const;                // "2.28.9"
  // "<call>: <ncclGetErrorString> (<ncclGetLastError>)" for an error result.
  std::string describe(const char* call, ncclResult_t r, ncclComm_t comm = nullptr) const;

  decltype(&::ncclGetVersion) GetVersion = nullptr;
  decltype(&::ncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&::ncclCommInitRank) CommInitRank = nullptr;
  decltype(&::ncclCommFinalize) CommFinalize = nullptr;  // may be null (NCCL < 2.18)
  decltype(&::ncclCommDestroy) CommDestroy = nullptr;
  decltype(&::ncclCommAbort) CommAbort = nullptr;
  decltype(&::ncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&::ncclGetErrorString) GetErrorString = nullptr;
  decltype(&::ncclGetLastError) GetLastError = nullptr;  // may be null
  decltype(&::ncclAllReduce) AllReduce = nullptr;
  decltype(&::ncclAlltoAll) AlltoAll = nullptr;  // may be null (NCCL < 2.28)
  decltype(&::ncclSend) Send = nullptr;
  decltype(&::ncclRecv) Recv = nullptr;
  decltype(&::ncclGroupStart) GroupStart = nullptr;
  decltype(&::ncclGroupEnd) GroupEnd = nullptr;

 private:
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace squeeze::perf::nccl

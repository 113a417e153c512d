#include "perf/nccl/nccl_lib.h"

#include <dlfcn.h>

#include <stdexcept>

#include "perf/nccl/paths.h"

namespace squeeze::perf::nccl {
namespace {

template <typename Fn>
void bind(void* h, const char* name, Fn* out, bool required, const std::string& path) {
  *out = reinterpret_cast<Fn>(dlsym(h, name));
  if (*out == nullptr && required)
    throw std::runtime_error(path + ": no symbol " + name + " (not libnccl?)");
}

}  // namespace

NcclLib::NcclLib(const std::string& path) {
  std::vector<std::string> tries =
      path.empty() ? nccl_lib_candidates() : std::vector<std::string>{path};
  std::string errors;
  for (const std::string& p : tries) {
    handle_ = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      path_ = p;
      break;
    }
    const char* e = dlerror();
    errors += "\n  " + p + ": " + (e != nullptr ? e : "unknown error");
  }
  if (handle_ == nullptr)
    throw std::runtime_error(
        "cannot load libnccl (give --nccl-lib PATH or SQUEEZE_NCCL_LIB; PyTorch's is in "
        "site-packages/nvidia/nccl*/lib):" +
        errors);
  try {
    bind(handle_, "ncclGetVersion", &GetVersion, true, path_);
    bind(handle_, "ncclGetUniqueId", &GetUniqueId, true, path_);
    bind(handle_, "ncclCommInitRank", &CommInitRank, true, path_);
    bind(handle_, "ncclCommFinalize", &CommFinalize, false, path_);
    bind(handle_, "ncclCommDestroy", &CommDestroy, true, path_);
    bind(handle_, "ncclCommAbort", &CommAbort, true, path_);
    bind(handle_, "ncclCommGetAsyncError", &CommGetAsyncError, true, path_);
    bind(handle_, "ncclGetErrorString", &GetErrorString, true, path_);
    bind(handle_, "ncclGetLastError", &GetLastError, false, path_);
    bind(handle_, "ncclAllReduce", &AllReduce, true, path_);
    bind(handle_, "ncclAlltoAll", &AlltoAll, false, path_);
    bind(handle_, "ncclSend", &Send, true, path_);
    bind(handle_, "ncclRecv", &Recv, true, path_);
    bind(handle_, "ncclGroupStart", &GroupStart, true, path_);
    bind(handle_, "ncclGroupEnd", &GroupEnd, true, path_);
  } catch (...) {
    dlclose(handle_);
    throw;
  }
  char info[4096] = {};
  if (dlinfo(handle_, RTLD_DI_ORIGIN, info) == 0 && path_.find('/') == std::string::npos)
    path_ = std::string(info) + "/" + path_;
}

NcclLib::~NcclLib() {
  // Never dlclose: NCCL's threads and atexit handlers may outlive this object.
}

int NcclLib::version() const {
  int v = 0;
  return GetVersion(&v) == ncclSuccess ? v : 0;
}

std::string NcclLib::version_string() const {
  const int v = version();
  // NCCL_VERSION(X,Y,Z) is X*10000 + Y*100 + Z from 2.9 on.
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

std::string NcclLib::describe(const char* call, ncclResult_t r, ncclComm_t comm) const {
  std::string s = std::string(call) + ": " + GetErrorString(r);
  if (GetLastError != nullptr) {
    const char* last = GetLastError(comm);
    if (last != nullptr && *last != '\0') s += " (" + std::string(last) + ")";
  }
  return s;
}

}  // namespace squeeze::perf::nccl

#include "perf/collective/plugin_lib.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace squeeze::perf {

void perf_logger(int level, unsigned long, const char* file, int line, const char* fmt, ...) {
  // Read once: the plugin may log on every message, and this runs inside the timed loop.
  static const bool verbose = std::getenv("SQUEEZE_PERF_VERBOSE") != nullptr;
  if (level > kLogWarn && !verbose) return;
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "[%s:%d] ", file, line);
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

void check_nccl(int rc, const char* what) {
  if (rc != kNcclSuccess)
    throw std::runtime_error(std::string("plugin ") + what + " failed with ncclResult " + std::to_string(rc));
}

PluginLib::PluginLib(const std::string& path) : path_(path) {
  lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) throw std::runtime_error("cannot load plugin " + path + ": " + dlerror());
  net_ = static_cast<nccl_net_v11*>(dlsym(lib_, "ncclNetPlugin_v11"));
  if (net_ == nullptr) throw std::runtime_error("plugin " + path + " exports no ncclNetPlugin_v11");
  profiler_ = static_cast<nccl_profiler_v5*>(dlsym(lib_, "ncclProfiler_v5"));
}

int PluginLib::device(const std::string& ifname) const {
  // Only valid after the first init(), as in NCCL.
  int n = 0;
  check_nccl(net_->devices(&n), "devices");
  if (ifname.empty()) return 0;
  std::string names;
  for (int d = 0; d < n; ++d) {
    nccl_net_props_v11 p{};
    check_nccl(net_->getProperties(d, &p), "getProperties");
    if (p.name != nullptr && ifname == p.name) return d;
    names += std::string(names.empty() ? "" : ", ") + (p.name != nullptr ? p.name : "?");
  }
  throw std::runtime_error("plugin has no device named '" + ifname + "' (it has: " + names +
                           "); check --ifname / SQUEEZE_SOCKET_IFNAME");
}

}  // namespace squeeze::perf

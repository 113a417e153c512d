// The plugin library as NCCL loads it: dlopen the .so, find ncclNetPlugin_v11 and, in the
// same library, the built-in profiler ncclProfiler_v5 (NCCL looks there when
// NCCL_PROFILER_PLUGIN is unset). Loaded once per process, after the local ranks fork.
#pragma once

#include <string>

#include "perf/common/plugin_log.h"  // perf_logger, the logger the plugin gets
#include "plugin/nccl/net_abi.h"
#include "plugin/nccl/profiler_abi.h"

namespace squeeze::perf {

class PluginLib {
 public:
  enum class Load {
    kShared,       // dlopen(path): the one instance, as NCCL loads it
    kPrivateCopy,  // dlopen a temporary copy of path: its own globals (policy, statistics,
                   // pays controller, codec threads), independent of a kShared instance
  };
  // Throws std::runtime_error naming the path and dlerror() (or the copy's error) on failure.
  explicit PluginLib(const std::string& path, Load load = Load::kShared);
  // The library is left loaded: the plugin's threads may outlive the last close, as they do
  // under NCCL until the process exits.
  ~PluginLib() = default;
  PluginLib(const PluginLib&) = delete;
  PluginLib& operator=(const PluginLib&) = delete;

  nccl_net_v11* net() const { return net_; }
  nccl_profiler_v5* profiler() const { return profiler_; }  // nullptr when the library has none
  const std::string& path() const { return path_; }
  int instance() const { return instance_; }  // 0: the shared load; 1: a private copy
  // Another symbol of the same library (dlsym), e.g. a CollNet table; nullptr when missing.
  void* symbol(const std::string& name) const;

  // The device named `ifname`; device 0 when the name is empty. Throws if `ifname` is given
  // but the plugin has no device of that name (the error lists the ones it has).
  int device(const std::string& ifname) const;

 private:
  std::string path_;
  int instance_ = 0;
  void* lib_ = nullptr;
  nccl_net_v11* net_ = nullptr;
  nccl_profiler_v5* profiler_ = nullptr;
};

// Throws std::runtime_error "plugin <what> failed: ncclInvalidUsage (5)" when rc != 0.
void check_nccl(int rc, const char* what);

}  // namespace squeeze::perf

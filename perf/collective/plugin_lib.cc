#include "perf/collective/plugin_lib.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "perf/collective/fd.h"
#include "perf/common/nccl_result.h"

namespace squeeze::perf {

void check_nccl(int rc, const char* what) {
  if (rc != kNcclSuccess)
    throw std::runtime_error(std::string("plugin ") + what + " failed: " + nccl_result_name(rc));
}

namespace {

// The dynamic loader keys libraries by file, so a second dlopen of the same path returns the
// loaded instance. A copy under another name is loaded afresh; it is unlinked once loaded.
void* dlopen_private_copy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read plugin " + path + ": " + std::strerror(errno));
  std::string tmpl = "/tmp/squeeze-perf-plugin-XXXXXX.so";
  Fd out(mkstemps(tmpl.data(), 3));
  if (!out.valid())
    throw std::runtime_error("cannot create a private copy of plugin " + path +
                             " in /tmp: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t done = 0;
  for (ssize_t n = 0; done < bytes.size(); done += static_cast<std::size_t>(n))
    if ((n = write(out.get(), bytes.data() + done, bytes.size() - done)) <= 0) break;
  const bool written = done == bytes.size();
  out.reset();
  void* lib = written ? dlopen(tmpl.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  const std::string why = written ? (lib == nullptr ? dlerror() : "") : "short write to " + tmpl;
  unlink(tmpl.c_str());
  if (lib == nullptr)
    throw std::runtime_error("cannot load a private copy of plugin " + path + ": " + why);
  return lib;
}

}  // namespace

PluginLib::PluginLib(const std::string& path, Load load) : path_(path) {
  if (load == Load::kPrivateCopy) {
    instance_ = 1;
    lib_ = dlopen_private_copy(path);
  } else {
    lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) throw std::runtime_error("cannot load plugin " + path + ": " + dlerror());
  }
  net_ = static_cast<nccl_net_v11*>(dlsym(lib_, "ncclNetPlugin_v11"));
  if (net_ == nullptr) throw std::runtime_error("plugin " + path + " exports no ncclNetPlugin_v11");
  profiler_ = static_cast<nccl_profiler_v5*>(dlsym(lib_, "ncclProfiler_v5"));
}

void* PluginLib::symbol(const std::string& name) const { return dlsym(lib_, name.c_str()); }

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

// Loads libnccl-net-squeeze.so and drives its ncclNetPlugin_v11 table the way NCCL's proxy
// does. Header-only, shared by the perf tools (with perf/common for the logger and names).
#pragma once

#include <dlfcn.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "perf/common/nccl_result.h"
#include "perf/common/plugin_log.h"
#include "plugin/nccl/net_abi.h"

namespace squeeze::perf {

class PluginNet {
 public:
  // path: the plugin; default is the one built next to the tool.
  explicit PluginNet(const char* path) {
    lib_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) throw std::runtime_error(std::string("cannot load plugin: ") + dlerror());
    net_ = static_cast<nccl_net_v11*>(dlsym(lib_, "ncclNetPlugin_v11"));
    if (net_ == nullptr) throw std::runtime_error("plugin has no ncclNetPlugin_v11");
    nccl_net_comm_config cfg{-1};
    check(net_->init(&ctx_, 1, &cfg, perf_logger, nullptr), "init");
  }
  nccl_net_v11* operator->() const { return net_; }
  void* ctx() const { return ctx_; }

  static void check(int rc, const char* what) {
    if (rc != 0)
      throw std::runtime_error(std::string("plugin ") + what + " failed: " + nccl_result_name(rc));
  }
  // The device whose name is `name`, or 0.
  int device(const std::string& name) const {
    int n = 0;
    check(net_->devices(&n), "devices");
    for (int d = 0; d < n; ++d) {
      nccl_net_props_v11 p{};
      check(net_->getProperties(d, &p), "getProperties");
      if (p.name != nullptr && name == p.name) return d;
    }
    return 0;
  }
  void* connect(int dev, void* handle) const {
    void* s = nullptr;
    nccl_net_device_handle* dh = nullptr;
    while (s == nullptr) check(net_->connect(ctx_, dev, handle, &s, &dh), "connect");
    return s;
  }
  void* accept(void* listen_comm) const {
    void* r = nullptr;
    nccl_net_device_handle* dh = nullptr;
    while (r == nullptr) check(net_->accept(listen_comm, &r, &dh), "accept");
    return r;
  }
  void* isend(void* s, void* data, std::size_t size, int tag, void* mh) const {
    void* req = nullptr;
    while (req == nullptr) check(net_->isend(s, data, size, tag, mh, nullptr, &req), "isend");
    return req;
  }
  void* irecv(void* r, void* data, std::size_t size, int tag, void* mh) const {
    void* req = nullptr;
    void* ph = nullptr;
    while (req == nullptr) check(net_->irecv(r, 1, &data, &size, &tag, &mh, &ph, &req), "irecv");
    return req;
  }
  // Polls until done; throws on error or after timeout_s.
  int wait(void* req, double timeout_s = 120) const {
    int done = 0, size = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!done) {
      check(net_->test(req, &done, &size), "test");
      if (done) break;
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("request timed out");
      sched_yield();  // as NCCL's proxy does when no request progressed
    }
    return size;
  }

 private:
  void* lib_ = nullptr;
  void* ctx_ = nullptr;
  nccl_net_v11* net_ = nullptr;
};

}  // namespace squeeze::perf

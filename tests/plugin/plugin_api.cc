#include "tests/plugin/plugin_api.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "tests/plugin_path.h"

namespace squeeze::testing {

namespace {
void test_logger(int level, unsigned long, const char* file, int line, const char* fmt, ...) {
  if (level > kLogWarn && getenv("SQUEEZE_TEST_VERBOSE") == nullptr) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  fprintf(stderr, "[plugin log %d] %s:%d %s\n", level, file, line, buf);
}
}  // namespace

PluginApi::PluginApi(int version) : version_(version) {
  setenv("SQUEEZE_SOCKET_IFNAME", "lo", 0);
  std::string why;
  lib_ = dlopen_plugin(&why);
  if (lib_ == nullptr) throw std::runtime_error(why);
  std::string sym = "ncclNetPlugin_v" + std::to_string(version);
  void* p = dlsym(lib_, sym.c_str());
  if (p == nullptr) throw std::runtime_error("missing symbol " + sym);
  switch (version) {
    case 8: v8_ = static_cast<nccl_net_v8*>(p); break;
    case 9: v9_ = static_cast<nccl_net_v9*>(p); break;
    case 10: v10_ = static_cast<nccl_net_v10*>(p); break;
    case 11: v11_ = static_cast<nccl_net_v11*>(p); break;
    case 12: v12_ = static_cast<nccl_net_v12*>(p); break;
    default: throw std::runtime_error("unsupported version");
  }
}

PluginApi::~PluginApi() {
  if (ctx_ != nullptr) finalize();
  // The library stays loaded: NCCL never unloads a plugin while comms may exist either.
}

#define SQ_DISPATCH(call8, call9, call10, call11, call12) \
  switch (version_) {                                     \
    case 8: return call8;                                 \
    case 9: return call9;                                 \
    case 10: return call10;                               \
    case 11: return call11;                               \
    default: return call12;                               \
  }

const char* PluginApi::name() const {
  SQ_DISPATCH(v8_->name, v9_->name, v10_->name, v11_->name, v12_->name)
}

int PluginApi::init() {
  nccl_net_comm_config cfg{-1};
  SQ_DISPATCH(v8_->init(test_logger), v9_->init(test_logger), v10_->init(test_logger, nullptr),
              v11_->init(&ctx_, 42, &cfg, test_logger, nullptr),
              v12_->init(&ctx_, 42, &cfg, test_logger, nullptr))
}

int PluginApi::finalize() {
  if (version_ < 11 || ctx_ == nullptr) return 0;
  int r = version_ == 11 ? v11_->finalize(ctx_) : v12_->finalize(ctx_);
  ctx_ = nullptr;
  return r;
}

int PluginApi::devices(int* n) {
  SQ_DISPATCH(v8_->devices(n), v9_->devices(n), v10_->devices(n), v11_->devices(n),
              v12_->devices(n))
}

int PluginApi::props(int dev, NetProps* out) {
  auto common = [&](const auto& p) {
    out->name = p.name != nullptr ? p.name : "";
    out->has_pci = p.pciPath != nullptr;
    out->guid = p.guid;
    out->ptr_support = p.ptrSupport;
    out->speed = p.speed;
    out->max_comms = p.maxComms;
    out->max_recvs = p.maxRecvs;
  };
  auto extended = [&](const auto& p) {
    common(p);
    out->vdevs = p.vProps.ndevs;
    out->max_p2p = p.maxP2pBytes;
    out->max_coll = p.maxCollBytes;
  };
  int r = 0;
  if (version_ == 8) {
    nccl_net_props_v8 p{};
    if ((r = v8_->getProperties(dev, &p)) == 0) common(p);
  } else if (version_ == 9 || version_ == 10) {
    nccl_net_props_v9 p{};
    r = version_ == 9 ? v9_->getProperties(dev, &p) : v10_->getProperties(dev, &p);
    if (r == 0) extended(p);
  } else if (version_ == 11) {
    nccl_net_props_v11 p{};
    if ((r = v11_->getProperties(dev, &p)) == 0) extended(p);
  } else {
    nccl_net_props_v12 p{};
    if ((r = v12_->getProperties(dev, &p)) == 0) {
      extended(p);
      out->rail_id = p.railId;
      out->plane_id = p.planeId;
    }
  }
  return r;
}

int PluginApi::listen(int dev, void* handle, void** l) {
  SQ_DISPATCH(v8_->listen(dev, handle, l), v9_->listen(dev, handle, l),
              v10_->listen(dev, handle, l), v11_->listen(ctx_, dev, handle, l),
              v12_->listen(ctx_, dev, handle, l))
}

int PluginApi::connect(int dev, void* handle, void** s) {
  nccl_net_comm_config cfg{-1};
  nccl_net_device_handle* dh = nullptr;
  SQ_DISPATCH(v8_->connect(dev, handle, s, &dh), v9_->connect(dev, handle, s, &dh),
              v10_->connect(dev, &cfg, handle, s, &dh), v11_->connect(ctx_, dev, handle, s, &dh),
              v12_->connect(ctx_, dev, handle, s, &dh))
}

int PluginApi::accept(void* l, void** r) {
  nccl_net_device_handle* dh = nullptr;
  SQ_DISPATCH(v8_->accept(l, r, &dh), v9_->accept(l, r, &dh), v10_->accept(l, r, &dh),
              v11_->accept(l, r, &dh), v12_->accept(l, r, &dh))
}

int PluginApi::reg_mr(void* comm, void* data, std::size_t size, void** mh, int type) {
  SQ_DISPATCH(v8_->regMr(comm, data, size, type, mh), v9_->regMr(comm, data, size, type, mh),
              v10_->regMr(comm, data, size, type, mh), v11_->regMr(comm, data, size, type, mh),
              v12_->regMr(comm, data, size, type, mh))
}

int PluginApi::dereg_mr(void* comm, void* mh) {
  SQ_DISPATCH(v8_->deregMr(comm, mh), v9_->deregMr(comm, mh), v10_->deregMr(comm, mh),
              v11_->deregMr(comm, mh), v12_->deregMr(comm, mh))
}

int PluginApi::isend(void* s, void* data, std::size_t size, int tag, void* mh, void** req) {
  SQ_DISPATCH(v8_->isend(s, data, static_cast<int>(size), tag, mh, req),
              v9_->isend(s, data, size, tag, mh, req),
              v10_->isend(s, data, size, tag, mh, nullptr, req),
              v11_->isend(s, data, size, tag, mh, nullptr, req),
              v12_->isend(s, data, size, tag, mh, nullptr, req))
}

int PluginApi::irecv(void* r, int n, void** data, std::size_t* sizes, int* tags, void** mhs,
                     void** req) {
  if (version_ == 8) {
    int small[8];
    for (int i = 0; i < n && i < 8; ++i) small[i] = static_cast<int>(sizes[i]);
    return v8_->irecv(r, n, data, small, tags, mhs, req);
  }
  void* phs[8] = {};
  SQ_DISPATCH(0, v9_->irecv(r, n, data, sizes, tags, mhs, req),
              v10_->irecv(r, n, data, sizes, tags, mhs, phs, req),
              v11_->irecv(r, n, data, sizes, tags, mhs, phs, req),
              v12_->irecv(r, n, data, sizes, tags, mhs, phs, req))
}

int PluginApi::test(void* req, int* done, int* sizes) {
  SQ_DISPATCH(v8_->test(req, done, sizes), v9_->test(req, done, sizes),
              v10_->test(req, done, sizes), v11_->test(req, done, sizes),
              v12_->test(req, done, sizes))
}

int PluginApi::close_send(void* s) {
  SQ_DISPATCH(v8_->closeSend(s), v9_->closeSend(s), v10_->closeSend(s), v11_->closeSend(s),
              v12_->closeSend(s))
}
int PluginApi::close_recv(void* r) {
  SQ_DISPATCH(v8_->closeRecv(r), v9_->closeRecv(r), v10_->closeRecv(r), v11_->closeRecv(r),
              v12_->closeRecv(r))
}
int PluginApi::close_listen(void* l) {
  SQ_DISPATCH(v8_->closeListen(l), v9_->closeListen(l), v10_->closeListen(l), v11_->closeListen(l),
              v12_->closeListen(l))
}

int PluginApi::set_net_attr(uint32_t op, uint32_t algo, uint32_t proto) {
  if (version_ < 11) return 0;
  nccl_net_attr_v11 a{};
  a.op = op;
  a.algo = algo;
  a.proto = proto;
  return version_ == 11 ? v11_->setNetAttr(ctx_, &a) : v12_->setNetAttr(ctx_, &a);
}

int connect_pair(PluginApi& api, int dev, void** send_comm, void** recv_comm, void** listen_comm) {
  alignas(8) unsigned char handle[128] = {};
  *send_comm = *recv_comm = nullptr;
  if (int r = api.listen(dev, handle, listen_comm); r != 0) return r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (*send_comm == nullptr || *recv_comm == nullptr) {
    if (*send_comm == nullptr)
      if (int r = api.connect(dev, handle, send_comm); r != 0) return r;
    if (*recv_comm == nullptr)
      if (int r = api.accept(*listen_comm, recv_comm); r != 0) return r;
    if (std::chrono::steady_clock::now() > deadline) return -1;
  }
  return 0;
}

int wait_request(PluginApi& api, void* req, int* sizes, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int done = 0;
  while (!done) {
    if (int r = api.test(req, &done, sizes); r != 0) return r;
    if (!done && std::chrono::steady_clock::now() > deadline) return -1;
  }
  return 0;
}

int loopback_device(PluginApi& api) {
  int n = 0;
  if (api.devices(&n) != 0) return -1;
  for (int d = 0; d < n; ++d) {
    NetProps p;
    if (api.props(d, &p) == 0 && p.name == "lo") return d;
  }
  return -1;
}

}  // namespace squeeze::testing

#include "tests/collnet/collnet_api.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

void* symbol(void* lib, const std::string& name) {
  void* p = dlsym(lib, name.c_str());
  if (p == nullptr) throw std::runtime_error("missing symbol " + name);
  return p;
}
}  // namespace

CollNetApi::CollNetApi(int version, bool private_copy) : version_(version) {
  setenv("SQUEEZE_SOCKET_IFNAME", "lo", 0);
  const PluginChoice choice = find_plugin();
  std::string path = choice.path;
  if (private_copy) {
    static int copies = 0;
    copy_path_ =
        std::filesystem::temp_directory_path() /
        ("squeeze-collnet-" + std::to_string(getpid()) + "-" + std::to_string(copies++) + ".so");
    std::filesystem::copy_file(path, copy_path_, std::filesystem::copy_options::overwrite_existing);
    path = copy_path_;
  }
  lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) {
    const char* e = dlerror();
    throw std::runtime_error("dlopen " + path + " (plugin " + choice.path + ", chosen by " +
                             choice.source + "; looked at: " + choice.tried +
                             "): " + (e != nullptr ? e : "failed"));
  }
  net_ = static_cast<nccl_net_v11*>(symbol(lib_, "ncclNetPlugin_v11"));
  prof_ = static_cast<nccl_profiler_v5*>(symbol(lib_, "ncclProfiler_v5"));
  void* t = symbol(lib_, "ncclCollNetPlugin_v" + std::to_string(version));
  switch (version) {
    case 8: v8_ = static_cast<nccl_collnet_v8*>(t); break;
    case 9:
    case 10: v9_ = static_cast<nccl_collnet_v9*>(t); break;
    case 11: v11_ = static_cast<nccl_collnet_v11*>(t); break;
    case 12: v12_ = static_cast<nccl_collnet_v12*>(t); break;
    default: throw std::runtime_error("unsupported CollNet version " + std::to_string(version));
  }
}

CollNetApi::~CollNetApi() {
  if (ctx_ != nullptr || net_ctx_ != nullptr) finalize();
  // The library stays loaded, as NCCL keeps it; a private copy's file can go.
  if (!copy_path_.empty()) std::filesystem::remove(copy_path_);
}

#define SQ_CN(call8, call9, call11, call12) \
  do {                                      \
    if (v8_ != nullptr) return call8;       \
    if (v9_ != nullptr) return call9;       \
    if (v11_ != nullptr) return call11;     \
    return call12;                          \
  } while (0)

const char* CollNetApi::name() const { SQ_CN(v8_->name, v9_->name, v11_->name, v12_->name); }
bool CollNetApi::has_iallgather() const {
  SQ_CN(v8_->iallgather != nullptr, v9_->iallgather != nullptr, v11_->iallgather != nullptr,
        v12_->iallgather != nullptr);
}
bool CollNetApi::has_ireducescatter() const {
  SQ_CN(v8_->ireducescatter != nullptr, v9_->ireducescatter != nullptr,
        v11_->ireducescatter != nullptr, v12_->ireducescatter != nullptr);
}

int CollNetApi::init(uint64_t comm_id) {
  nccl_net_comm_config cfg{-1};
  if (int r = net_->init(&net_ctx_, comm_id, &cfg, test_logger, nullptr); r != 0) return r;
  SQ_CN(v8_->init(test_logger), v9_->init(test_logger), v11_->init(&ctx_, comm_id, test_logger),
        v12_->init(&ctx_, comm_id, test_logger));
}

int CollNetApi::finalize() {
  int r = 0;
  if (v11_ != nullptr && ctx_ != nullptr) r = v11_->finalize(ctx_);
  if (v12_ != nullptr && ctx_ != nullptr) r = v12_->finalize(ctx_);
  ctx_ = nullptr;
  if (net_ctx_ != nullptr) {
    const int n = net_->finalize(net_ctx_);
    if (r == 0) r = n;
  }
  net_ctx_ = nullptr;
  if (prof_ctx_ != nullptr) prof_->finalize(prof_ctx_);
  prof_ctx_ = nullptr;
  return r;
}

int CollNetApi::devices(int* n) {
  SQ_CN(v8_->devices(n), v9_->devices(n), v11_->devices(n), v12_->devices(n));
}

int CollNetApi::props(int dev, CollNetProps* out) {
  auto common = [&](const auto& p) {
    out->name = p.name != nullptr ? p.name : "";
    out->pci_path = p.pciPath != nullptr ? p.pciPath : "";
    out->ptr_support = p.ptrSupport;
  };
  int r = 0;
  if (v8_ != nullptr) {
    nccl_net_props_v8 p{};
    if ((r = v8_->getProperties(dev, &p)) == 0) common(p);
  } else if (v9_ != nullptr) {
    nccl_net_props_v9 p{};
    if ((r = v9_->getProperties(dev, &p)) == 0) {
      common(p);
      out->max_coll = p.maxCollBytes;
    }
  } else if (v11_ != nullptr) {
    nccl_net_props_v11 p{};
    if ((r = v11_->getProperties(dev, &p)) == 0) {
      common(p);
      out->max_coll = p.maxCollBytes;
    }
  } else {
    nccl_net_props_v12 p{};
    if ((r = v12_->getProperties(dev, &p)) == 0) {
      common(p);
      out->max_coll = p.maxCollBytes;
    }
  }
  return r;
}

int CollNetApi::net_props(int dev, CollNetProps* out) {
  nccl_net_props_v11 p{};
  const int r = net_->getProperties(dev, &p);
  if (r == 0) {
    out->name = p.name != nullptr ? p.name : "";
    out->pci_path = p.pciPath != nullptr ? p.pciPath : "";
    out->ptr_support = p.ptrSupport;
    out->max_coll = p.maxCollBytes;
  }
  return r;
}

int CollNetApi::listen(int dev, void* handle, void** l) {
  SQ_CN(v8_->listen(dev, handle, l), v9_->listen(dev, handle, l),
        v11_->listen(ctx_, dev, handle, l), v12_->listen(ctx_, dev, handle, l));
}
int CollNetApi::connect(void** handles, int nranks, int rank, void* l, void** c) {
  SQ_CN(v8_->connect(handles, nranks, rank, l, c), v9_->connect(handles, nranks, rank, l, c),
        v11_->connect(handles, nranks, rank, l, c), v12_->connect(handles, nranks, rank, l, c));
}
int CollNetApi::reduce_support(int dtype, int op, int* s) {
  SQ_CN(v8_->reduceSupport(dtype, op, s), v9_->reduceSupport(dtype, op, s),
        v11_->reduceSupport(dtype, op, s), v12_->reduceSupport(dtype, op, s));
}
int CollNetApi::reg_mr(void* c, void* data, std::size_t size, int type, void** mh) {
  SQ_CN(v8_->regMr(c, data, size, type, mh), v9_->regMr(c, data, size, type, mh),
        v11_->regMr(c, data, size, type, mh), v12_->regMr(c, data, size, type, mh));
}
int CollNetApi::dereg_mr(void* c, void* mh) {
  SQ_CN(v8_->deregMr(c, mh), v9_->deregMr(c, mh), v11_->deregMr(c, mh), v12_->deregMr(c, mh));
}
int CollNetApi::iallreduce(void* c, void* send, void* recv, std::size_t count, int dtype, int op,
                           void* smh, void* rmh, void** req) {
  SQ_CN(v8_->iallreduce(c, send, recv, static_cast<int>(count), dtype, op, smh, rmh, req),
        v9_->iallreduce(c, send, recv, count, dtype, op, smh, rmh, req),
        v11_->iallreduce(c, send, recv, count, dtype, op, smh, rmh, req),
        v12_->iallreduce(c, send, recv, count, dtype, op, smh, rmh, req));
}
int CollNetApi::iflush(void* c, void* data, int size, void* mh, void** req) {
  SQ_CN(v8_->iflush(c, data, size, mh, req), v9_->iflush(c, data, size, mh, req),
        v11_->iflush(c, data, size, mh, req), v12_->iflush(c, data, size, mh, req));
}
int CollNetApi::test(void* req, int* done, int* size) {
  SQ_CN(v8_->test(req, done, size), v9_->test(req, done, size), v11_->test(req, done, size),
        v12_->test(req, done, size));
}
int CollNetApi::close_coll(void* c) {
  SQ_CN(v8_->closeColl(c), v9_->closeColl(c), v11_->closeColl(c), v12_->closeColl(c));
}
int CollNetApi::close_listen(void* l) {
  SQ_CN(v8_->closeListen(l), v9_->closeListen(l), v11_->closeListen(l), v12_->closeListen(l));
}

int CollNetApi::profiler_init(uint64_t comm_id, int nnodes, int nranks, int rank) {
  int mask = 0;
  return prof_->init(&prof_ctx_, comm_id, &mask, "collnet_test", nnodes, nranks, rank, test_logger);
}

void CollNetApi::announce_allreduce(uint64_t seq, uint64_t count, const char* nccl_dtype,
                                    int nchannels) {
  if (prof_ctx_ == nullptr) return;
  nccl_profiler_event_descr_v5 d{};
  d.type = kProfileColl;
  d.coll.seqNumber = seq;
  d.coll.func = "AllReduce";
  d.coll.count = count;
  d.coll.datatype = nccl_dtype;
  d.coll.nChannels = static_cast<uint8_t>(nchannels);
  d.coll.algo = "COLLNET_CHAIN";
  d.coll.proto = "SIMPLE";
  void* h = nullptr;
  prof_->startEvent(prof_ctx_, &h, &d);
  if (h != nullptr) prof_->stopEvent(h);  // NCCL stops Coll events before the proxy runs them
}

}  // namespace squeeze::testing

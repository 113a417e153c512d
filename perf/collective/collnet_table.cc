#include "perf/collective/collnet_table.h"

#include <climits>
#include <stdexcept>

namespace squeeze::perf {

CollNetTable::CollNetTable(const PluginLib& lib, int version) : version_(version) {
  if (version < 8 || version > 12)
    throw std::runtime_error("CollNet table version " + std::to_string(version) +
                             ": expected 8 to 12");
  const std::string sym = "ncclCollNetPlugin_v" + std::to_string(version);
  void* t = lib.symbol(sym);
  if (t == nullptr)
    throw std::runtime_error("plugin " + lib.path() + " exports no " + sym +
                             " (no collective network)");
  switch (version) {
    case 8: v8_ = static_cast<nccl_collnet_v8*>(t); break;
    case 9:
    case 10: v9_ = static_cast<nccl_collnet_v9*>(t); break;
    case 11: v11_ = static_cast<nccl_collnet_v11*>(t); break;
    default: v12_ = static_cast<nccl_collnet_v12*>(t); break;
  }
}

CollNetTable::~CollNetTable() {
  if (initialized_) finalize();
}

// One expression per table layout; v10 shares v9's.
#define SQ_CN(call8, call9, call11, call12) \
  do {                                      \
    if (v8_ != nullptr) return call8;       \
    if (v9_ != nullptr) return call9;       \
    if (v11_ != nullptr) return call11;     \
    return call12;                          \
  } while (0)

const char* CollNetTable::name() const { SQ_CN(v8_->name, v9_->name, v11_->name, v12_->name); }

bool CollNetTable::has_iallgather() const {
  SQ_CN(v8_->iallgather != nullptr, v9_->iallgather != nullptr, v11_->iallgather != nullptr,
        v12_->iallgather != nullptr);
}

bool CollNetTable::has_ireducescatter() const {
  SQ_CN(v8_->ireducescatter != nullptr, v9_->ireducescatter != nullptr,
        v11_->ireducescatter != nullptr, v12_->ireducescatter != nullptr);
}

int CollNetTable::init(uint64_t comm_id, nccl_logger_t log) {
  int r = 0;
  if (v8_ != nullptr)
    r = v8_->init(log);
  else if (v9_ != nullptr)
    r = v9_->init(log);
  else if (v11_ != nullptr)
    r = v11_->init(&ctx_, comm_id, log);
  else
    r = v12_->init(&ctx_, comm_id, log);
  initialized_ = r == 0;
  return r;
}

int CollNetTable::finalize() {
  int r = 0;
  if (v11_ != nullptr && ctx_ != nullptr) r = v11_->finalize(ctx_);
  if (v12_ != nullptr && ctx_ != nullptr) r = v12_->finalize(ctx_);
  ctx_ = nullptr;
  initialized_ = false;
  return r;
}

int CollNetTable::devices(int* n) {
  SQ_CN(v8_->devices(n), v9_->devices(n), v11_->devices(n), v12_->devices(n));
}

int CollNetTable::props(int dev, CollNetProps* out) {
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

int CollNetTable::listen(int dev, void* handle, void** l) {
  SQ_CN(v8_->listen(dev, handle, l), v9_->listen(dev, handle, l),
        v11_->listen(ctx_, dev, handle, l), v12_->listen(ctx_, dev, handle, l));
}

int CollNetTable::connect(void** handles, int nranks, int rank, void* l, void** c) {
  SQ_CN(v8_->connect(handles, nranks, rank, l, c), v9_->connect(handles, nranks, rank, l, c),
        v11_->connect(handles, nranks, rank, l, c), v12_->connect(handles, nranks, rank, l, c));
}

int CollNetTable::reduce_support(int dtype, int op, int* s) {
  SQ_CN(v8_->reduceSupport(dtype, op, s), v9_->reduceSupport(dtype, op, s),
        v11_->reduceSupport(dtype, op, s), v12_->reduceSupport(dtype, op, s));
}

int CollNetTable::reg_mr(void* c, void* data, std::size_t size, int type, void** mh) {
  SQ_CN(v8_->regMr(c, data, size, type, mh), v9_->regMr(c, data, size, type, mh),
        v11_->regMr(c, data, size, type, mh), v12_->regMr(c, data, size, type, mh));
}

int CollNetTable::dereg_mr(void* c, void* mh) {
  SQ_CN(v8_->deregMr(c, mh), v9_->deregMr(c, mh), v11_->deregMr(c, mh), v12_->deregMr(c, mh));
}

int CollNetTable::iallreduce(void* c, void* send, void* recv, std::size_t count, int dtype, int op,
                             void* smh, void* rmh, void** req) {
  if (v8_ != nullptr && count > static_cast<std::size_t>(INT_MAX)) return kNcclInvalidArgument;
  SQ_CN(v8_->iallreduce(c, send, recv, static_cast<int>(count), dtype, op, smh, rmh, req),
        v9_->iallreduce(c, send, recv, count, dtype, op, smh, rmh, req),
        v11_->iallreduce(c, send, recv, count, dtype, op, smh, rmh, req),
        v12_->iallreduce(c, send, recv, count, dtype, op, smh, rmh, req));
}

int CollNetTable::iflush(void* c, void* data, int size, void* mh, void** req) {
  SQ_CN(v8_->iflush(c, data, size, mh, req), v9_->iflush(c, data, size, mh, req),
        v11_->iflush(c, data, size, mh, req), v12_->iflush(c, data, size, mh, req));
}

int CollNetTable::test(void* req, int* done, int* size) {
  SQ_CN(v8_->test(req, done, size), v9_->test(req, done, size), v11_->test(req, done, size),
        v12_->test(req, done, size));
}

int CollNetTable::close_coll(void* c) {
  SQ_CN(v8_->closeColl(c), v9_->closeColl(c), v11_->closeColl(c), v12_->closeColl(c));
}

int CollNetTable::close_listen(void* l) {
  SQ_CN(v8_->closeListen(l), v9_->closeListen(l), v11_->closeListen(l), v12_->closeListen(l));
}

#undef SQ_CN

}  // namespace squeeze::perf

#include "plugin/collnet/coll_net.h"

#include <chrono>
#include <memory>
#include <thread>

#include "plugin/collnet/coll_comm.h"
#include "plugin/collnet/mesh.h"
#include "plugin/collnet/nccl_types.h"
#include "plugin/engine/result.h"
#include "plugin/log.h"

namespace squeeze::collnet {

namespace {

struct ListenComm {
  static constexpr uint32_t kMagic = 0x4e53494cu;  // "LISN"
  uint32_t magic = kMagic;
  int dev = 0;
  uint64_t comm_id = 0;
  std::unique_ptr<transport::Listener> listener;
};

CollComm* as_comm(void* p, const char* what) {
  auto* c = static_cast<CollComm*>(p);
  if (c == nullptr || !c->valid()) {
    SQ_WARN("collective network %s: %p is not a Squeeze collective network comm", what, p);
    return nullptr;
  }
  return c;
}

}  // namespace

nccl_result_t CollNet::init(nccl_logger_t log, uint64_t comm_id, CollNetContext** ctx) {
  // The net plugin's init reads the settings and the policy and opens the
  // transport (NCCL initialises the net table first; a process that loads only
  // this table still works).
  if (nccl_result_t r = net_.init(log, nullptr, nullptr); r != kNcclSuccess) return r;
  if (ctx != nullptr) {
    auto c = std::make_unique<CollNetContext>();
    c->comm_id = comm_id;
    *ctx = c.release();
  }
  return kNcclSuccess;
}

nccl_result_t CollNet::finalize(CollNetContext* ctx) {
  delete ctx;
  net_.report_stats();
  return kNcclSuccess;
}

nccl_result_t CollNet::devices(int* ndev) { return net_.devices(ndev); }

// The net table's properties, unchanged: NCCL puts the net and the collective
// network devices in one topology node per name and pciPath (the collective
// network first), and the first table's ptrSupport sets the node's GPUDirect
// flag for both.
nccl_result_t CollNet::properties(int dev, nccl_net_props_v12* props) {
  return net_.properties(dev, props);
}

nccl_result_t CollNet::listen(CollNetContext* ctx, int dev, void* handle, void** listen_comm) {
  *listen_comm = nullptr;
  transport::Transport* t = net_.transport();
  if (t == nullptr) {
    SQ_WARN("collective network listen: called before init");
    return kNcclInvalidUsage;
  }
  if (dev < 0 || dev >= static_cast<int>(t->devices().size())) {
    SQ_WARN("collective network listen: no device %d", dev);
    return kNcclInvalidArgument;
  }
  auto l = std::make_unique<ListenComm>();
  l->dev = dev;
  l->comm_id = ctx != nullptr ? ctx->comm_id : 0;
  SQ_CHECK_STATUS(t->listen(dev, handle, &l->listener));
  *listen_comm = l.release();
  return kNcclSuccess;
}

nccl_result_t CollNet::connect(void* const* handles, int nranks, int rank, void* listen_comm,
                               void** coll_comm) {
  *coll_comm = nullptr;
  auto* l = static_cast<ListenComm*>(listen_comm);
  transport::Transport* t = net_.transport();
  const plugin::Engine* engine = net_.engine();
  const params::Settings* settings = net_.settings();
  if (l == nullptr || l->magic != ListenComm::kMagic) {
    SQ_WARN("collective network connect: %p is not a Squeeze listen comm", listen_comm);
    return kNcclInvalidArgument;
  }
  if (t == nullptr || engine == nullptr || settings == nullptr) {
    SQ_WARN("collective network connect: called before init");
    return kNcclInvalidUsage;
  }
  if (handles == nullptr || nranks < 1 || rank < 0 || rank >= nranks) {
    SQ_WARN("collective network connect: rank %d of %d nodes%s", rank, nranks,
            handles == nullptr ? ", no handles" : "");
    return kNcclInvalidArgument;
  }
  for (int i = 0; i < nranks; ++i) {
    if (handles[i] == nullptr) {
      SQ_WARN("collective network connect: node %d has no handle", i);
      return kNcclInvalidArgument;
    }
  }
  const auto timeout = std::chrono::seconds(settings->integer(params::Id::kCollNetConnectTimeoutS));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MeshConnector mesh(*t, l->dev, *l->listener, handles, nranks, rank);
  for (;;) {
    bool done = false;
    SQ_CHECK_STATUS(mesh.progress(&done));
    if (done) break;
    if (std::chrono::steady_clock::now() > deadline) {
      SQ_WARN(
          "collective network connect: node %d of %d: the mesh did not "
          "complete within %lld s (%s); missing: %s",
          rank, nranks, static_cast<long long>(timeout.count()),
          settings->source(params::Id::kCollNetConnectTimeoutS), mesh.missing().c_str());
      return kNcclSystemError;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  auto comm = std::make_unique<CollComm>(*engine, l->dev, nranks, rank, l->comm_id, mesh.take());
  SQ_INFO(kSubsysInit | kSubsysNet,
          "collective network: node %d of %d connected on device %d over %s", rank, nranks, l->dev,
          t->name());
  *coll_comm = comm.release();
  return kNcclSuccess;
}

nccl_result_t CollNet::reduce_support(int dtype, int op, int* supported) {
  if (supported == nullptr) return kNcclInvalidArgument;
  *supported = reduce_supported(dtype, op) ? 1 : 0;
  return kNcclSuccess;
}

nccl_result_t CollNet::reg_mr(void* coll_comm, void* data, std::size_t size, int type,
                              void** mhandle) {
  *mhandle = nullptr;
  CollComm* c = as_comm(coll_comm, "regMr");
  if (c == nullptr) return kNcclInvalidArgument;
  transport::MemoryDesc mem;
  mem.data = data;
  mem.size = size;
  mem.ptr_type = type;
  return c->reg_mr(mem, mhandle);
}

nccl_result_t CollNet::reg_mr_dmabuf(void* coll_comm, void* data, std::size_t size, int type,
                                     uint64_t offset, int fd, void** mhandle) {
  *mhandle = nullptr;
  CollComm* c = as_comm(coll_comm, "regMrDmaBuf");
  if (c == nullptr) return kNcclInvalidArgument;
  transport::MemoryDesc mem;
  mem.data = data;
  mem.size = size;
  mem.ptr_type = type;
  mem.dmabuf_fd = fd;
  mem.dmabuf_offset = offset;
  return c->reg_mr(mem, mhandle);
}

nccl_result_t CollNet::dereg_mr(void* coll_comm, void* mhandle) {
  CollComm* c = as_comm(coll_comm, "deregMr");
  if (c == nullptr) return kNcclInvalidArgument;
  return c->dereg_mr(mhandle);
}

nccl_result_t CollNet::iallreduce(void* coll_comm, void* send, void* recv, std::size_t count,
                                  int dtype, int op, void* send_mh, void* recv_mh, void** request) {
  *request = nullptr;
  CollComm* c = as_comm(coll_comm, "iallreduce");
  if (c == nullptr) return kNcclInvalidArgument;
  return c->iallreduce(send, recv, count, dtype, op, send_mh, recv_mh, request);
}

nccl_result_t CollNet::iflush(void* coll_comm, void* data, int size, void* mhandle,
                              void** request) {
  (void)data;
  (void)size;
  (void)mhandle;
  *request = nullptr;
  return as_comm(coll_comm, "iflush") != nullptr ? kNcclSuccess : kNcclInvalidArgument;
}

nccl_result_t CollNet::test(void* request, int* done, int* size) {
  *done = 0;
  auto* call = static_cast<Call*>(request);
  if (call == nullptr || call->magic != Call::kMagic || call->comm == nullptr ||
      !call->comm->valid()) {
    SQ_WARN("collective network test: %p is not a request in flight", request);
    return kNcclInvalidArgument;
  }
  return call->comm->test(call, done, size);
}

nccl_result_t CollNet::close_coll(void* coll_comm) {
  CollComm* c = as_comm(coll_comm, "closeColl");
  if (c == nullptr) return kNcclInvalidArgument;
  delete c;
  return kNcclSuccess;
}

nccl_result_t CollNet::close_listen(void* listen_comm) {
  auto* l = static_cast<ListenComm*>(listen_comm);
  if (l == nullptr || l->magic != ListenComm::kMagic) return kNcclInvalidArgument;
  l->magic = 0;
  delete l;
  return kNcclSuccess;
}

}  // namespace squeeze::collnet

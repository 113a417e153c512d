// The collective network's entry points whose signature is the same in every
// CollNet table version (v8..v11), each a guarded call into the one
// implementation (plugin/collnet). The per-version files add only what differs.
// The collective network reaches the net plugin's engine through the Net
// instance handed over here: only the ABI adapters call instance().
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/collnet/coll_net.h"
#include "plugin/engine/net.h"
#include "plugin/engine/result.h"

namespace squeeze::plugin::collnet_entries {

inline collnet::CollNet& collnet() {
  static auto* c = new collnet::CollNet(Net::instance());  // never destroyed, as Net
  return *c;
}

inline nccl_result_t devices(int* n) {
  return guarded("CollNet devices", [&] { return collnet().devices(n); });
}
inline nccl_result_t connect(void* handles[], int nranks, int rank, void* l, void** c) {
  return guarded("CollNet connect", [&] { return collnet().connect(handles, nranks, rank, l, c); });
}
inline nccl_result_t reduce_support(nccl_data_type_t dtype, nccl_red_op_t op, int* supported) {
  return guarded("CollNet reduceSupport",
                 [&] { return collnet::CollNet::reduce_support(dtype, op, supported); });
}
inline nccl_result_t reg_mr(void* c, void* data, std::size_t size, int type, void** mh) {
  return guarded("CollNet regMr", [&] { return collnet().reg_mr(c, data, size, type, mh); });
}
inline nccl_result_t reg_mr_dmabuf(void* c, void* data, std::size_t size, int type, uint64_t offset,
                                   int fd, void** mh) {
  return guarded("CollNet regMrDmaBuf",
                 [&] { return collnet().reg_mr_dmabuf(c, data, size, type, offset, fd, mh); });
}
inline nccl_result_t dereg_mr(void* c, void* mh) {
  return guarded("CollNet deregMr", [&] { return collnet().dereg_mr(c, mh); });
}
inline nccl_result_t iallreduce(void* c, void* send, void* recv, std::size_t count,
                                nccl_data_type_t dtype, nccl_red_op_t op, void* smh, void* rmh,
                                void** req) {
  return guarded("CollNet iallreduce", [&] {
    return collnet().iallreduce(c, send, recv, count, dtype, op, smh, rmh, req);
  });
}
inline nccl_result_t iflush(void* c, void* data, int size, void* mh, void** req) {
  return guarded("CollNet iflush", [&] { return collnet().iflush(c, data, size, mh, req); });
}
inline nccl_result_t test(void* req, int* done, int* size) {
  return guarded("CollNet test", [&] { return collnet().test(req, done, size); });
}
inline nccl_result_t close_coll(void* c) {
  return guarded("CollNet closeColl", [&] { return collnet().close_coll(c); });
}
inline nccl_result_t close_listen(void* l) {
  return guarded("CollNet closeListen", [&] { return collnet().close_listen(l); });
}
// v11, v12: a context per communicator, with its commId.
inline nccl_result_t init_ctx(void** ctx, uint64_t comm_id, nccl_logger_t log) {
  return guarded("CollNet init", [&] {
    collnet::CollNetContext* c = nullptr;
    const nccl_result_t r = collnet().init(log, comm_id, &c);
    if (r == kNcclSuccess) *ctx = c;
    return r;
  });
}
inline nccl_result_t listen_ctx(void* ctx, int dev, void* handle, void** l) {
  return guarded("CollNet listen", [&] {
    return collnet().listen(static_cast<collnet::CollNetContext*>(ctx), dev, handle, l);
  });
}
inline nccl_result_t finalize_ctx(void* ctx) {
  return guarded("CollNet finalize",
                 [&] { return collnet().finalize(static_cast<collnet::CollNetContext*>(ctx)); });
}
// v8..v10: no context (no commId), one init for the process.
inline nccl_result_t init_no_ctx(nccl_logger_t log) {
  return guarded("CollNet init", [&] { return collnet().init(log, 0, nullptr); });
}
inline nccl_result_t listen_no_ctx(int dev, void* handle, void** l) {
  return guarded("CollNet listen", [&] { return collnet().listen(nullptr, dev, handle, l); });
}

}  // namespace squeeze::plugin::collnet_entries

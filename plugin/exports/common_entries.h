// The entry points whose signature is the same in every net table version (v8..v11), each a
// guarded call into the engine. The per-version files add only what differs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/engine/net.h"
#include "plugin/engine/result.h"

namespace squeeze::plugin::entries {

inline nccl_result_t devices(int* n) {
  return guarded("devices", [&] { return Net::instance().devices(n); });
}
inline nccl_result_t accept(void* l, void** r, nccl_net_device_handle** dh) {
  return guarded("accept", [&] { return Net::instance().accept(l, r, dh); });
}
inline nccl_result_t reg_mr(void* comm, void* data, std::size_t size, int type, void** mh) {
  return guarded("regMr", [&] { return Net::instance().reg_mr(comm, data, size, type, mh); });
}
inline nccl_result_t reg_mr_dmabuf(void* comm, void* data, std::size_t size, int type,
                                   uint64_t offset, int fd, void** mh) {
  return guarded("regMrDmaBuf", [&] {
    return Net::instance().reg_mr_dmabuf(comm, data, size, type, offset, fd, mh);
  });
}
inline nccl_result_t dereg_mr(void* comm, void* mh) {
  return guarded("deregMr", [&] { return Net::instance().dereg_mr(comm, mh); });
}
inline nccl_result_t iflush(void* r, int n, void** data, int* sizes, void** mhs, void** req) {
  return guarded("iflush", [&] { return Net::instance().iflush(r, n, data, sizes, mhs, req); });
}
inline nccl_result_t test(void* req, int* done, int* sizes) {
  return guarded("test", [&] { return Net::instance().test(req, done, sizes); });
}
inline nccl_result_t close_send(void* s) {
  return guarded("closeSend", [&] { return Net::instance().close_send(s); });
}
inline nccl_result_t close_recv(void* r) {
  return guarded("closeRecv", [&] { return Net::instance().close_recv(r); });
}
inline nccl_result_t close_listen(void* l) {
  return guarded("closeListen", [&] { return Net::instance().close_listen(l); });
}
// v8..v10 have no ctx: the engine's shared context stands in.
inline nccl_result_t listen_no_ctx(int dev, void* handle, void** l) {
  return guarded("listen", [&] { return Net::instance().listen(nullptr, dev, handle, l); });
}

}  // namespace squeeze::plugin::entries

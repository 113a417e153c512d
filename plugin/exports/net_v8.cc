// ncclNetPlugin_v8: int sizes and v8 properties. Grouped receives convert each of the n
// sizes (a known external plugin's v8 irecv adapter dropped all but the first).
#include <array>

#include "plugin/engine/net.h"
#include "plugin/engine/result.h"
#include "plugin/exports/legacy_props.h"
#include "transport/transport.h"

namespace {
using squeeze::plugin::guarded;
using squeeze::plugin::Net;

Net& net() { return Net::instance(); }

nccl_result_t init(nccl_logger_t log) { return guarded("init", [&] { return net().init(log, nullptr, nullptr); }); }
nccl_result_t devices(int* n) { return guarded("devices", [&] { return net().devices(n); }); }
nccl_result_t get_properties(int dev, nccl_net_props_v8* p) {
  return guarded("getProperties", [&] {
    nccl_net_props_v11 full{};
    nccl_result_t r = net().properties(dev, &full);
    if (r == kNcclSuccess) squeeze::plugin::to_v8(full, p);
    return r;
  });
}
nccl_result_t listen(int dev, void* handle, void** l) {
  return guarded("listen", [&] { return net().listen(nullptr, dev, handle, l); });
}
nccl_result_t connect(int dev, void* handle, void** s, nccl_net_device_handle** dh) {
  return guarded("connect", [&] { return net().connect(nullptr, dev, handle, s, dh); });
}
nccl_result_t accept(void* l, void** r, nccl_net_device_handle** dh) {
  return guarded("accept", [&] { return net().accept(l, r, dh); });
}
nccl_result_t reg_mr(void* comm, void* data, size_t size, int type, void** mh) {
  return guarded("regMr", [&] { return net().reg_mr(comm, data, size, type, mh); });
}
nccl_result_t dereg_mr(void* comm, void* mh) { return guarded("deregMr", [&] { return net().dereg_mr(comm, mh); }); }
nccl_result_t isend(void* s, void* data, int size, int tag, void* mh, void** req) {
  return guarded("isend", [&] {
    if (size < 0) return static_cast<nccl_result_t>(kNcclInvalidArgument);
    return net().isend(s, data, static_cast<size_t>(size), tag, mh, nullptr, req);
  });
}
nccl_result_t irecv(void* r, int n, void** data, int* sizes, int* tags, void** mhs, void** req) {
  return guarded("irecv", [&] {
    std::array<size_t, squeeze::transport::kMaxRecvs> big{};
    if (n < 1 || n > squeeze::transport::kMaxRecvs) return static_cast<nccl_result_t>(kNcclInvalidArgument);
    for (int i = 0; i < n; ++i) {
      if (sizes[i] < 0) return static_cast<nccl_result_t>(kNcclInvalidArgument);
      big[i] = static_cast<size_t>(sizes[i]);
    }
    return net().irecv(r, n, data, big.data(), tags, mhs, nullptr, req);
  });
}
nccl_result_t iflush(void* r, int n, void** data, int* sizes, void** mhs, void** req) {
  return guarded("iflush", [&] { return net().iflush(r, n, data, sizes, mhs, req); });
}
nccl_result_t test(void* req, int* done, int* sizes) {
  return guarded("test", [&] { return net().test(req, done, sizes); });
}
nccl_result_t close_send(void* s) { return guarded("closeSend", [&] { return net().close_send(s); }); }
nccl_result_t close_recv(void* r) { return guarded("closeRecv", [&] { return net().close_recv(r); }); }
nccl_result_t close_listen(void* l) { return guarded("closeListen", [&] { return net().close_listen(l); }); }
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_net_v8 ncclNetPlugin_v8 = {
    "Squeeze", init, devices, get_properties, listen, connect, accept, reg_mr, nullptr, dereg_mr,
    isend,     irecv, iflush, test,           close_send, close_recv, close_listen, nullptr, nullptr,
};
}

// ncclNetPlugin_v11: the native version; every call goes straight to the engine.
#include "plugin/engine/net.h"
#include "plugin/engine/result.h"
#include "plugin/exports/common_entries.h"

namespace {
using namespace squeeze::plugin::entries;
using squeeze::plugin::guarded;
using squeeze::plugin::Net;
using squeeze::plugin::NetContext;

nccl_result_t init(void** ctx, uint64_t comm_id, nccl_net_comm_config* config, nccl_logger_t log,
                   nccl_profiler_callback_t prof) {
  return guarded("init", [&] {
    NetContext* c = nullptr;
    nccl_result_t r = Net::instance().init(log, prof, &c);
    if (r != kNcclSuccess) return r;
    c->comm_id = comm_id;
    (void)config;  // the traffic class: our transports set none
    *ctx = c;
    return r;
  });
}
nccl_result_t get_properties(int dev, nccl_net_props_v11* p) {
  return guarded("getProperties", [&] { return Net::instance().properties(dev, p); });
}
nccl_result_t listen(void* ctx, int dev, void* handle, void** l) {
  return guarded("listen", [&] { return Net::instance().listen(static_cast<NetContext*>(ctx), dev, handle, l); });
}
nccl_result_t connect(void* ctx, int dev, void* handle, void** s, nccl_net_device_handle** dh) {
  return guarded("connect",
                 [&] { return Net::instance().connect(static_cast<NetContext*>(ctx), dev, handle, s, dh); });
}
nccl_result_t isend(void* s, void* data, size_t size, int tag, void* mh, void* ph, void** req) {
  return guarded("isend", [&] { return Net::instance().isend(s, data, size, tag, mh, ph, req); });
}
nccl_result_t irecv(void* r, int n, void** data, size_t* sizes, int* tags, void** mhs, void** phs, void** req) {
  return guarded("irecv", [&] { return Net::instance().irecv(r, n, data, sizes, tags, mhs, phs, req); });
}
nccl_result_t finalize(void* ctx) {
  return guarded("finalize", [&] { return Net::instance().finalize(static_cast<NetContext*>(ctx)); });
}
nccl_result_t set_net_attr(void* ctx, nccl_net_attr_v11* attr) {
  return guarded("setNetAttr", [&] { return Net::instance().set_attr(static_cast<NetContext*>(ctx), attr); });
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_net_v11 ncclNetPlugin_v11 = {
    "Squeeze", init,       devices,    get_properties, listen,  connect, accept,   reg_mr,
    reg_mr_dmabuf, dereg_mr,   isend,      irecv,          iflush,  test,    close_send, close_recv,
    close_listen, nullptr, nullptr,    nullptr,        finalize, set_net_attr,
};
}

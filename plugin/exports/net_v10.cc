// ncclNetPlugin_v10 and ncclNetPlugin_v9: thin adapters over the engine. They have no
// ctx (the engine's default context stands in); v10 passes a comm config to connect and
// profiler handles to isend/irecv, v9 passes neither.
#include "plugin/engine/net.h"
#include "plugin/engine/result.h"
#include "plugin/exports/common_entries.h"
#include "plugin/exports/legacy_props.h"

namespace {
using namespace squeeze::plugin::entries;
using squeeze::plugin::guarded;
using squeeze::plugin::Net;

Net& net() { return Net::instance(); }

nccl_result_t init_v10(nccl_logger_t log, nccl_profiler_callback_t prof) {
  return guarded("init", [&] { return net().init(log, prof, nullptr); });
}
nccl_result_t init_v9(nccl_logger_t log) {
  return guarded("init", [&] { return net().init(log, nullptr, nullptr); });
}
nccl_result_t get_properties_v9(int dev, nccl_net_props_v9* p) {
  return guarded("getProperties", [&] {
    nccl_net_props_v12 full{};
    nccl_result_t r = net().properties(dev, &full);
    if (r == kNcclSuccess) r = squeeze::plugin::to_v9(full, p);
    return r;
  });
}
nccl_result_t connect_v10(int dev, nccl_net_comm_config* config, void* handle, void** s,
                          nccl_net_device_handle** dh) {
  (void)config;
  return guarded("connect", [&] { return net().connect(nullptr, dev, handle, s, dh); });
}
nccl_result_t connect_v9(int dev, void* handle, void** s, nccl_net_device_handle** dh) {
  return guarded("connect", [&] { return net().connect(nullptr, dev, handle, s, dh); });
}
nccl_result_t isend_v10(void* s, void* data, size_t size, int tag, void* mh, void* ph, void** req) {
  return guarded("isend", [&] { return net().isend(s, data, size, tag, mh, ph, req); });
}
nccl_result_t isend_v9(void* s, void* data, size_t size, int tag, void* mh, void** req) {
  return guarded("isend", [&] { return net().isend(s, data, size, tag, mh, nullptr, req); });
}
nccl_result_t irecv_v10(void* r, int n, void** data, size_t* sizes, int* tags, void** mhs,
                        void** phs, void** req) {
  return guarded("irecv", [&] { return net().irecv(r, n, data, sizes, tags, mhs, phs, req); });
}
nccl_result_t irecv_v9(void* r, int n, void** data, size_t* sizes, int* tags, void** mhs,
                       void** req) {
  return guarded("irecv", [&] { return net().irecv(r, n, data, sizes, tags, mhs, nullptr, req); });
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_net_v10 ncclNetPlugin_v10 = {
    "Squeeze",  init_v10,      devices,      get_properties_v9, listen_no_ctx, connect_v10, accept,
    reg_mr,     reg_mr_dmabuf, dereg_mr,     isend_v10,         irecv_v10,     iflush,      test,
    close_send, close_recv,    close_listen, nullptr,           nullptr,       nullptr,
};
}

extern "C" {
__attribute__((visibility("default"))) nccl_net_v9 ncclNetPlugin_v9 = {
    "Squeeze",  init_v9,       devices,      get_properties_v9, listen_no_ctx, connect_v9, accept,
    reg_mr,     reg_mr_dmabuf, dereg_mr,     isend_v9,          irecv_v9,      iflush,     test,
    close_send, close_recv,    close_listen, nullptr,           nullptr,       nullptr,
};
}

// The entry points of the net tables that take NCCL's per-communicator ctx, v11 and v12: their
// signatures are the same in both versions (v12 changes only the property and virtual-device
// types). Each is a guarded call into the engine.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/engine/net.h"
#include "plugin/engine/result.h"

namespace squeeze::plugin::entries {

inline nccl_result_t init_ctx(void** ctx, uint64_t comm_id, nccl_net_comm_config* config,
                              nccl_logger_t log, nccl_profiler_callback_t prof) {
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
inline nccl_result_t listen_ctx(void* ctx, int dev, void* handle, void** l) {
  return guarded("listen", [&] {
    return Net::instance().listen(static_cast<NetContext*>(ctx), dev, handle, l);
  });
}
inline nccl_result_t connect_ctx(void* ctx, int dev, void* handle, void** s,
                                 nccl_net_device_handle** dh) {
  return guarded("connect", [&] {
    return Net::instance().connect(static_cast<NetContext*>(ctx), dev, handle, s, dh);
  });
}
inline nccl_result_t isend_ph(void* s, void* data, std::size_t size, int tag, void* mh, void* ph,
                              void** req) {
  return guarded("isend", [&] { return Net::instance().isend(s, data, size, tag, mh, ph, req); });
}
inline nccl_result_t irecv_ph(void* r, int n, void** data, std::size_t* sizes, int* tags,
                              void** mhs, void** phs, void** req) {
  return guarded("irecv",
                 [&] { return Net::instance().irecv(r, n, data, sizes, tags, mhs, phs, req); });
}
inline nccl_result_t finalize_ctx(void* ctx) {
  return guarded("finalize",
                 [&] { return Net::instance().finalize(static_cast<NetContext*>(ctx)); });
}
inline nccl_result_t set_net_attr(void* ctx, nccl_net_attr_v11* attr) {
  return guarded("setNetAttr",
                 [&] { return Net::instance().set_attr(static_cast<NetContext*>(ctx), attr); });
}

}  // namespace squeeze::plugin::entries

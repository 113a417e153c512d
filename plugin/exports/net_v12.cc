// ncclNetPlugin_v12 (NCCL 2.30): the native version; every call goes straight to the engine,
// whose properties have the v12 layout. The older tables beside it convert down.
//
// Which table NCCL picks, when the library exports several: src/plugin/net.cc dlsym()s
// "ncclNetPlugin_vN" from the newest version it knows down to v6 and takes the first it finds
// (ncclNetPluginLoad, over the ncclNetVersion[] list).
// - NCCL 2.30.7 (v2.30.7-1): the list is {12, 11, 10, 9, 8, 7, 6}, so it loads this table.
// - NCCL 2.28.9 (v2.28.9-1): the list is {11, 10, 9, 8, 7, 6}; it never asks for v12 and
//   loads ncclNetPlugin_v11. Exporting v12 changes nothing for it.
#include "plugin/engine/net.h"
#include "plugin/engine/result.h"
#include "plugin/exports/common_entries.h"
#include "plugin/exports/ctx_entries.h"

namespace {
using namespace squeeze::plugin::entries;
using squeeze::plugin::guarded;
using squeeze::plugin::Net;

nccl_result_t get_properties_v12(int dev, nccl_net_props_v12* p) {
  return guarded("getProperties", [&] { return Net::instance().properties(dev, p); });
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_net_v12 ncclNetPlugin_v12 = {
    .name = "Squeeze",
    .init = init_ctx,
    .devices = devices,
    .getProperties = get_properties_v12,
    .listen = listen_ctx,
    .connect = connect_ctx,
    .accept = accept,
    .regMr = reg_mr,
    .regMrDmaBuf = reg_mr_dmabuf,
    .deregMr = dereg_mr,
    .isend = isend_ph,
    .irecv = irecv_ph,
    .iflush = iflush,
    .test = test,
    .closeSend = close_send,
    .closeRecv = close_recv,
    .closeListen = close_listen,
    .getDeviceMr = nullptr,    // host-side networking: no device offload
    .irecvConsumed = nullptr,  // likewise
    .makeVDevice = nullptr,    // no NIC merging: NCCL then uses the physical devices
    .finalize = finalize_ctx,
    .setNetAttr = set_net_attr,
};
}

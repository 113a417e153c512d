// ncclNetPlugin_v11: v12's functions (plugin/exports/ctx_entries.h) except getProperties, which
// converts the engine's v12 properties down (4 virtual devices per NIC, no rail or plane).
// NCCL 2.28.9 loads this table: it does not know v12 (see net_v12.cc).
#include "plugin/engine/net.h"
#include "plugin/engine/result.h"
#include "plugin/exports/common_entries.h"
#include "plugin/exports/ctx_entries.h"
#include "plugin/exports/legacy_props.h"

namespace {
using namespace squeeze::plugin::entries;
using squeeze::plugin::guarded;
using squeeze::plugin::Net;

nccl_result_t get_properties_v11(int dev, nccl_net_props_v11* p) {
  return guarded("getProperties", [&] {
    nccl_net_props_v12 full{};
    nccl_result_t r = Net::instance().properties(dev, &full);
    if (r == kNcclSuccess) r = squeeze::plugin::to_v11(full, p);
    return r;
  });
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_net_v11 ncclNetPlugin_v11 = {
    .name = "Squeeze",
    .init = init_ctx,
    .devices = devices,
    .getProperties = get_properties_v11,
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

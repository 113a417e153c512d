// ncclCollNetPlugin_v11, the version NCCL 2.28 looks for first: v12's entries except
// getProperties, which converts the engine's v12 properties down. iallgather and
// ireducescatter are null: NCCL 2.28 then never routes AllGather or ReduceScatter to
// CollNetDirect (src/graph/tuning.cc checks the pointers); Squeeze implements all-reduce only
// (plugin/nccl/COLLNET.md).
#include "plugin/exports/collnet_entries.h"
#include "plugin/exports/legacy_props.h"

namespace {
using namespace squeeze::plugin::collnet_entries;
using squeeze::plugin::guarded;

nccl_result_t get_properties_v11(int dev, nccl_net_props_v11* p) {
  return guarded("CollNet getProperties", [&] {
    nccl_net_props_v12 full{};
    nccl_result_t r = collnet().properties(dev, &full);
    if (r == kNcclSuccess) r = squeeze::plugin::to_v11(full, p);
    return r;
  });
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_collnet_v11 ncclCollNetPlugin_v11 = {
    .name = "Squeeze",
    .init = init_ctx,
    .devices = devices,
    .getProperties = get_properties_v11,
    .listen = listen_ctx,
    .connect = connect,
    .reduceSupport = reduce_support,
    .regMr = reg_mr,
    .regMrDmaBuf = reg_mr_dmabuf,
    .deregMr = dereg_mr,
    .iallreduce = iallreduce,
    .iallgather = nullptr,
    .ireducescatter = nullptr,
    .iflush = iflush,
    .test = test,
    .closeColl = close_coll,
    .closeListen = close_listen,
    .makeVDevice = nullptr,
    .finalize = finalize_ctx,
};
}

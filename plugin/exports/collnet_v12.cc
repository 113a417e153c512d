// ncclCollNetPlugin_v12, the version NCCL 2.30 looks for first: v11's table over the v12
// properties, so every call goes straight to the collective network. iallgather and
// ireducescatter are null: NCCL then never routes AllGather or ReduceScatter to CollNetDirect
// (src/graph/tuning.cc checks the pointers), which is right, for Squeeze implements
// all-reduce only. (NCCL 2.30's adapter for a v11 table would wrap them in non-null stubs:
// another reason it must find this one; plugin/nccl/COLLNET.md.)
#include "plugin/exports/collnet_entries.h"

namespace {
using namespace squeeze::plugin::collnet_entries;
using squeeze::plugin::guarded;

nccl_result_t get_properties(int dev, nccl_net_props_v12* p) {
  return guarded("CollNet getProperties", [&] { return collnet().properties(dev, p); });
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_collnet_v12 ncclCollNetPlugin_v12 = {
    .name = "Squeeze",
    .init = init_ctx,
    .devices = devices,
    .getProperties = get_properties,
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

// ncclCollNetPlugin_v10 and _v9 (NCCL 2.26-2.27 and 2.24-2.25 take them as their newest):
// thin adapters over the same implementation. No context (no commId, so error feedback stays
// off: plugin/collnet/call_identity.h) and v9 properties; the same table layout for both.
#include "plugin/exports/collnet_entries.h"
#include "plugin/exports/legacy_props.h"

namespace {
using namespace squeeze::plugin::collnet_entries;
using squeeze::plugin::guarded;

nccl_result_t get_properties_v9(int dev, nccl_net_props_v9* p) {
  return guarded("CollNet getProperties", [&] {
    nccl_net_props_v12 full{};
    nccl_result_t r = collnet().properties(dev, &full);
    if (r == kNcclSuccess) r = squeeze::plugin::to_v9(full, p);
    return r;
  });
}

constexpr nccl_collnet_v9 table() {
  return {
      .name = "Squeeze",
      .init = init_no_ctx,
      .devices = devices,
      .getProperties = get_properties_v9,
      .listen = listen_no_ctx,
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
  };
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_collnet_v10 ncclCollNetPlugin_v10 = table();
__attribute__((visibility("default"))) nccl_collnet_v9 ncclCollNetPlugin_v9 = table();
}

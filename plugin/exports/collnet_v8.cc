// ncclCollNetPlugin_v8 (NCCL 2.20-2.23 take it as their newest): int count in iallreduce and
// v8 properties; otherwise as v9.
#include "plugin/exports/collnet_entries.h"
#include "plugin/exports/legacy_props.h"

namespace {
using namespace squeeze::plugin::collnet_entries;
using squeeze::plugin::guarded;

nccl_result_t get_properties_v8(int dev, nccl_net_props_v8* p) {
  return guarded("CollNet getProperties", [&] {
    nccl_net_props_v12 full{};
    const nccl_result_t r = collnet().properties(dev, &full);
    if (r == kNcclSuccess) squeeze::plugin::to_v8(full, p);
    return r;
  });
}

nccl_result_t iallreduce_v8(void* c, void* send, void* recv, int count, nccl_data_type_t dtype,
                            nccl_red_op_t op, void* smh, void* rmh, void** req) {
  if (count < 0) {
    *req = nullptr;
    return kNcclInvalidArgument;
  }
  return iallreduce(c, send, recv, static_cast<std::size_t>(count), dtype, op, smh, rmh, req);
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_collnet_v8 ncclCollNetPlugin_v8 = {
    .name = "Squeeze",
    .init = init_no_ctx,
    .devices = devices,
    .getProperties = get_properties_v8,
    .listen = listen_no_ctx,
    .connect = connect,
    .reduceSupport = reduce_support,
    .regMr = reg_mr,
    .regMrDmaBuf = reg_mr_dmabuf,
    .deregMr = dereg_mr,
    .iallreduce = iallreduce_v8,
    .iallgather = nullptr,
    .ireducescatter = nullptr,
    .iflush = iflush,
    .test = test,
    .closeColl = close_coll,
    .closeListen = close_listen,
};
}

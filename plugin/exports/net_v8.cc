// ncclNetPlugin_v8: int sizes and v8 properties. Grouped receives convert each of the n
// sizes (a known external plugin's v8 irecv adapter dropped all but the first).
#include <array>

#include "plugin/engine/net.h"
#include "plugin/engine/result.h"
#include "plugin/exports/common_entries.h"
#include "plugin/exports/legacy_props.h"
#include "transport/transport.h"

namespace {
using namespace squeeze::plugin::entries;
using squeeze::plugin::guarded;
using squeeze::plugin::Net;

Net& net() { return Net::instance(); }

nccl_result_t init(nccl_logger_t log) {
  return guarded("init", [&] { return net().init(log, nullptr, nullptr); });
}
nccl_result_t get_properties(int dev, nccl_net_props_v8* p) {
  return guarded("getProperties", [&] {
    nccl_net_props_v12 full{};
    nccl_result_t r = net().properties(dev, &full);
    if (r == kNcclSuccess) squeeze::plugin::to_v8(full, p);
    return r;
  });
}
nccl_result_t connect(int dev, void* handle, void** s, nccl_net_device_handle** dh) {
  return guarded("connect", [&] { return net().connect(nullptr, dev, handle, s, dh); });
}
nccl_result_t isend(void* s, void* data, int size, int tag, void* mh, void** req) {
  return guarded("isend", [&] {
    if (size < 0) return static_cast<nccl_result_t>(kNcclInvalidArgument);
    return net().isend(s, data, static_cast<size_t>(size), tag, mh, nullptr, req);
  });
}
nccl_result_t irecv(void* r, int n, void** data, int* sizes, int* tags, void** mhs, void** req) {
  return guarded("irecv", [&] {
    std::array<size_t, squeeze::transport::kMaxRecvs> big{};
    if (n < 1 || n > squeeze::transport::kMaxRecvs)
      return static_cast<nccl_result_t>(kNcclInvalidArgument);
    for (int i = 0; i < n; ++i) {
      if (sizes[i] < 0) return static_cast<nccl_result_t>(kNcclInvalidArgument);
      big[i] = static_cast<size_t>(sizes[i]);
    }
    return net().irecv(r, n, data, big.data(), tags, mhs, nullptr, req);
  });
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl_net_v8 ncclNetPlugin_v8 = {
    "Squeeze",  init,          devices,      get_properties, listen_no_ctx, connect, accept,
    reg_mr,     reg_mr_dmabuf, dereg_mr,     isend,          irecv,         iflush,  test,
    close_send, close_recv,    close_listen, nullptr,        nullptr,
};
}

// Converting the engine's properties (the v12 layout) to the older layouts of v8..v11.
#pragma once

#include "plugin/log.h"
#include "plugin/nccl/net_abi.h"

namespace squeeze::plugin {

// The fields every version has, under the same names; the rest of *out starts zeroed, as the
// engine's own properties do.
template <typename Props>
void copy_common_props(const nccl_net_props_v12& in, Props* out) {
  *out = Props{};
  out->name = in.name;
  out->pciPath = in.pciPath;
  out->guid = in.guid;
  out->ptrSupport = in.ptrSupport;
  out->regIsGlobal = in.regIsGlobal;
  out->speed = in.speed;
  out->port = in.port;
  out->latency = in.latency;
  out->maxComms = in.maxComms;
  out->maxRecvs = in.maxRecvs;
  out->netDeviceType = in.netDeviceType;
  out->netDeviceVersion = in.netDeviceVersion;
}

// v9..v11 add forceFlush, a virtual device list of at most 4 (v12: 8) and the size limits.
// Every device the engine reports is one NIC (vProps.ndevs == 1); a longer list cannot be
// described to these versions, so it is an error rather than a silently shortened list.
template <typename Props>
nccl_result_t copy_extended_props(const nccl_net_props_v12& in, Props* out) {
  if (in.vProps.ndevs < 0 || in.vProps.ndevs > nccl::kMaxDevsPerNic) {
    SQ_WARN("getProperties: device %s merges %d NICs; net v9..v11 describe at most %d", in.name,
            in.vProps.ndevs, nccl::kMaxDevsPerNic);
    return kNcclInternalError;
  }
  copy_common_props(in, out);
  out->forceFlush = in.forceFlush;
  out->vProps.ndevs = in.vProps.ndevs;
  for (int i = 0; i < in.vProps.ndevs; ++i) out->vProps.devs[i] = in.vProps.devs[i];
  out->maxP2pBytes = in.maxP2pBytes;
  out->maxCollBytes = in.maxCollBytes;
  return kNcclSuccess;
}

inline void to_v8(const nccl_net_props_v12& in, nccl_net_props_v8* out) {
  copy_common_props(in, out);
}

inline nccl_result_t to_v9(const nccl_net_props_v12& in, nccl_net_props_v9* out) {
  return copy_extended_props(in, out);
}

// v11 adds maxMultiRequestSize; v12 then adds railId and planeId, which v11 cannot carry.
inline nccl_result_t to_v11(const nccl_net_props_v12& in, nccl_net_props_v11* out) {
  nccl_result_t r = copy_extended_props(in, out);
  if (r == kNcclSuccess) out->maxMultiRequestSize = in.maxMultiRequestSize;
  return r;
}

}  // namespace squeeze::plugin

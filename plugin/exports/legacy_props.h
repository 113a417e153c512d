// Converting the engine's v11 properties to the older layouts. Shared by the v8..v10 tables.
#pragma once

#include "plugin/nccl/net_abi.h"

namespace squeeze::plugin {

// The fields every version has, under the same names.
template <typename Props>
void copy_common_props(const nccl_net_props_v11& in, Props* out) {
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

inline void to_v8(const nccl_net_props_v11& in, nccl_net_props_v8* out) { copy_common_props(in, out); }

inline void to_v9(const nccl_net_props_v11& in, nccl_net_props_v9* out) {
  copy_common_props(in, out);
  out->forceFlush = in.forceFlush;
  out->vProps = in.vProps;
  out->maxP2pBytes = in.maxP2pBytes;
  out->maxCollBytes = in.maxCollBytes;
}

}  // namespace squeeze::plugin

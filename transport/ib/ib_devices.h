// RDMA device discovery: one Squeeze device per active port, with NCCL-style properties
// (name "mlx5_0:1", PCI path from sysfs, GUID, speed = active speed x width, pointer
// support: host, CUDA when GPUDirect RDMA is possible, dma-buf when the library and the
// kernel have it). Each device owns its verbs context, protection domain and MR cache.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/ib/ib_mr_cache.h"
#include "transport/ib/ib_options.h"
#include "transport/ib/verbs_owned.h"
#include "transport/transport.h"

namespace squeeze::transport::ib {

struct IbDevice {
  // Declared first so it is destroyed last: every owner below calls through it.
  std::shared_ptr<const VerbsApi> api;
  Owned<ibv_context> ctx;
  Owned<ibv_pd> pd;
  std::string name;  // "mlx5_0:1"
  uint8_t port = 1;
  ibv_port_attr port_attr{};
  ibv_device_attr dev_attr{};
  int gid_index = 0;
  ibv_gid gid{};
  DeviceProps props;
  std::shared_ptr<MrCache> cache;
  ~IbDevice() {
    cache.reset();  // the cached MRs go before the protection domain (in-flight holders are gone)
    pd.reset();
    ctx.reset();
  }
};

// Opens every active port that passes the HCA filter. Empty with *why when none is usable:
// "ibv_get_device_list: Function not implemented", "no RDMA device found", ...
std::vector<std::shared_ptr<IbDevice>> discover_devices(const std::shared_ptr<const VerbsApi>& api,
                                                        const IbOptions& opts, std::string* why);

// NCCL's reading of a port's active_speed / active_width codes, in Mbps.
int port_speed_mbps(uint8_t active_speed, uint8_t active_width);

// True when nvidia-peermem (or the older nv_peer_mem) is loaded.
bool gpudirect_rdma_loaded();

}  // namespace squeeze::transport::ib

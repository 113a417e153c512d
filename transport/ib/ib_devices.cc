#include "transport/ib/ib_devices.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "transport/ib/hca_filter.h"
#include "transport/socket/interfaces.h"
#include "transport/socket/socket.h"

namespace squeeze::transport::ib {

namespace {

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

std::string pci_path_of(const ibv_device* dev) {
  std::string link = std::string(dev->ibdev_path) + "/device";
  char buf[PATH_MAX];
  if (dev->ibdev_path[0] == '\0' || realpath(link.c_str(), buf) == nullptr) return "";
  return buf;
}

bool gid_is_zero(const ibv_gid& g) {
  for (uint8_t b : g.raw)
    if (b != 0) return false;
  return true;
}
bool gid_is_ipv4_mapped(const ibv_gid& g) {
  for (int i = 0; i < 10; ++i)
    if (g.raw[i] != 0) return false;
  return g.raw[10] == 0xff && g.raw[11] == 0xff;
}

std::string gid_str(const ibv_gid& g) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, g.raw, buf, sizeof(buf));
  return buf;
}

// GID for the port: the configured index, else 0 on InfiniBand; on RoCE a RoCE v2 GID,
// IPv4-mapped first (routable), else the first non-zero GID.
bool choose_gid(const VerbsApi& api, IbDevice& d, const ibv_device* dev, const IbOptions& opts,
                std::string* why) {
  const bool roce = d.port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
  if (opts.gid_index >= 0 || !roce) {
    d.gid_index = opts.gid_index >= 0 ? opts.gid_index : 0;
    if (int rc = api.query_gid(d.ctx.get(), d.port, d.gid_index, &d.gid); rc != 0) {
      *why = d.name + ": ibv_query_gid(" + std::to_string(d.gid_index) + "): " + verbs_error(rc);
      return false;
    }
    return true;
  }
  int best = -1, best_rank = 0;
  const int n = std::min(d.port_attr.gid_tbl_len, 256);
  for (int i = 0; i < n; ++i) {
    ibv_gid g{};
    if (api.query_gid(d.ctx.get(), d.port, i, &g) != 0 || gid_is_zero(g)) continue;
    std::string type = read_line(std::string(dev->ibdev_path) + "/ports/" + std::to_string(d.port) +
                                 "/gid_attrs/types/" + std::to_string(i));
    bool v2 = type.find("v2") != std::string::npos;
    int rank = (v2 ? 2 : 0) + (gid_is_ipv4_mapped(g) ? 1 : 0) + 1;
    if (rank > best_rank) {
      best = i;
      best_rank = rank;
      d.gid = g;
    }
  }
  if (best < 0) {
    *why = d.name + ": RoCE port without a usable GID";
    return false;
  }
  d.gid_index = best;
  return true;
}

// Kernel dma-buf support, probed as NCCL does: registering fd -1 fails with EOPNOTSUPP or
// EPROTONOSUPPORT when unsupported (EBADF otherwise).
bool dmabuf_supported(const VerbsApi& api, ibv_pd* pd) {
  if (api.reg_dmabuf_mr == nullptr) return false;
  errno = 0;
  ibv_mr* mr = api.reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
  if (mr != nullptr) {
    api.dereg_mr(mr);
    return true;
  }
  return errno != EOPNOTSUPP && errno != EPROTONOSUPPORT;
}

}  // namespace

int port_speed_mbps(uint8_t active_speed, uint8_t active_width) {
  // Widths 1x, 4x, 8x, 12x, 2x; speeds SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR per lane.
  static const int kLanes[] = {1, 4, 8, 12, 2};
  static const int kLaneMbps[] = {2500, 5000, 10000, 10000, 14000, 25000, 50000, 100000};
  auto first_bit = [](unsigned v, int n) {
    int i = 0;
    while (i < n - 1 && (v & (1u << i)) == 0) ++i;
    return i;
  };
  return kLanes[first_bit(active_width, 5)] * kLaneMbps[first_bit(active_speed, 8)];
}

bool gpudirect_rdma_loaded() {
  for (const char* p :
       {"/sys/kernel/mm/memory_peers/nv_mem/version",
        "/sys/kernel/mm/memory_peers/nv_mem_nc/version", "/sys/module/nvidia_peermem/version"})
    if (access(p, F_OK) == 0) return true;
  return false;
}

std::vector<std::shared_ptr<IbDevice>> discover_devices(const std::shared_ptr<const VerbsApi>& api,
                                                        const IbOptions& opts, std::string* why) {
  std::vector<std::shared_ptr<IbDevice>> out;
  int n = 0;
  errno = 0;
  ibv_device** list = api->get_device_list(&n);
  if (list == nullptr) {
    *why = std::string("ibv_get_device_list: ") + std::strerror(errno != 0 ? errno : ENODEV);
    return out;
  }
  HcaFilter filter;
  if (std::string bad = HcaFilter::parse(opts.hca, &filter); !bad.empty()) {
    api->free_device_list(list);
    *why = opts.hca_variable + "='" + opts.hca + "': " + bad;
    return out;
  }
  const bool relaxed = opts.relaxed_ordering != 0 && api->reg_mr_iova2 != nullptr;
  const bool gdr = opts.gdr == 1 || (opts.gdr < 0 && gpudirect_rdma_loaded());
  std::string notes;
  auto note = [&](const std::string& s) { notes += (notes.empty() ? "" : "; ") + s; };
  for (int i = 0; i < n; ++i) {
    ibv_device* dev = list[i];
    Owned<ibv_context> probe(api.get(), api->open_device(dev));
    if (!probe) {
      note(std::string(dev->name) + ": ibv_open_device: " + verbs_error(-1));
      continue;
    }
    ibv_device_attr dattr{};
    if (int rc = api->query_device(probe.get(), &dattr); rc != 0) {
      note(std::string(dev->name) + ": ibv_query_device: " + verbs_error(rc));
      continue;
    }
    for (int p = 1; p <= dattr.phys_port_cnt; ++p) {
      auto d = std::make_shared<IbDevice>();
      d->api = api;
      d->port = static_cast<uint8_t>(p);
      d->dev_attr = dattr;
      d->name = std::string(dev->name) + ":" + std::to_string(p);
      if (!filter.selects(dev->name, p)) {
        note(d->name + " excluded by " + opts.hca_variable + "='" + opts.hca + "'");
        continue;
      }
      if (int rc = api->query_port(probe.get(), d->port, &d->port_attr); rc != 0) {
        note(d->name + ": ibv_query_port: " + verbs_error(rc));
        continue;
      }
      if (d->port_attr.state != IBV_PORT_ACTIVE) {
        note(d->name + " is not active (state " +
             std::to_string(static_cast<int>(d->port_attr.state)) + ")");
        continue;
      }
      d->ctx = Owned<ibv_context>(api.get(), api->open_device(dev));
      if (!d->ctx) {
        note(d->name + ": ibv_open_device: " + verbs_error(-1));
        continue;
      }
      std::string bad;
      if (!choose_gid(*api, *d, dev, opts, &bad)) {
        note(bad);
        continue;
      }
      d->pd = Owned<ibv_pd>(api.get(), api->alloc_pd(d->ctx.get()));
      if (!d->pd) {
        note(d->name + ": ibv_alloc_pd: " + verbs_error(-1));
        continue;
      }
      DeviceProps& pr = d->props;
      pr.name = d->name;
      pr.pci_path = pci_path_of(dev);
      pr.guid = dattr.sys_image_guid;
      pr.speed_mbps = port_speed_mbps(d->port_attr.active_speed, d->port_attr.active_width);
      pr.ptr_support = kPtrHost | (gdr ? kPtrCuda : 0) |
                       (opts.dmabuf && dmabuf_supported(*api, d->pd.get()) ? kPtrDmaBuf : 0);
      pr.force_flush = gdr && opts.gdr_flush;
      pr.max_recvs = kMaxRecvs;
      pr.max_comms = dattr.max_qp > 0 ? dattr.max_qp : pr.max_comms;
      pr.latency_us = 0;
      pr.address = d->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET
                       ? "gid " + gid_str(d->gid) + " (index " + std::to_string(d->gid_index) + ")"
                       : "lid " + std::to_string(d->port_attr.lid);
      d->cache = std::make_shared<MrCache>(api.get(), d->pd.get(), opts.mr_cache_entries, d->name,
                                           relaxed);
      out.push_back(std::move(d));
    }
  }
  api->free_device_list(list);
  if (out.empty()) *why = n == 0 ? "no RDMA device found" : "no usable RDMA port (" + notes + ")";
  return out;
}

}  // namespace squeeze::transport::ib

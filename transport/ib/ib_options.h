// Tunables of the ib transport, declared once. The defaults are what Squeeze uses when
// nothing is set; the plugin fills the struct from its parameter table (the SQUEEZE_IB_*
// variables named below), tests set it directly. Nothing here reads the environment.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "transport/socket/interfaces.h"

namespace squeeze::transport::ib {

constexpr int kMaxQpsPerConn = 8;

struct IbOptions {
  // Each field names the variables the plugin fills it from: Squeeze's own, then NCCL's
  // (plugin/params/param_table.h).
  // SQUEEZE_IB_QPS_PER_CONNECTION / NCCL_IB_QPS_PER_CONNECTION, 1..8: RC queue pairs per
  // connection; large messages are split across them.
  int qps_per_conn = 1;
  // SQUEEZE_IB_HCA / NCCL_IB_HCA: which RDMA ports to use, in NCCL's syntax (see
  // hca_filter.h): "mlx5_0,mlx5_1:2" prefixes with optional ports, "^mlx5_2" excludes,
  // "=mlx5_0" exact names; empty = all.
  std::string hca;
  // The variable `hca` came from, for the messages that name it.
  std::string hca_variable = "SQUEEZE_IB_HCA";
  // SQUEEZE_IB_GID_INDEX / NCCL_IB_GID_INDEX: GID table index for RoCE ports; -1 picks a RoCE
  // v2 IPv4 GID.
  int gid_index = -1;
  // SQUEEZE_IB_TIMEOUT / NCCL_IB_TIMEOUT (4.096 us * 2^timeout ack timeout) and
  // SQUEEZE_IB_RETRY_CNT / NCCL_IB_RETRY_CNT.
  int timeout = 20;
  int retry_cnt = 7;
  // SQUEEZE_IB_SL / NCCL_IB_SL, SQUEEZE_IB_TC / NCCL_IB_TC: service level and traffic class.
  int service_level = 0;
  int traffic_class = 0;
  // SQUEEZE_IB_PCI_RELAXED_ORDERING / NCCL_IB_PCI_RELAXED_ORDERING: 0 never; 1 or 2 register
  // buffers with IBV_ACCESS_RELAXED_ORDERING where the library has ibv_reg_mr_iova2
  // (IBVERBS_1.8), as NCCL does.
  int relaxed_ordering = 2;
  // SQUEEZE_IB_GDR: -1 detect (nvidia-peermem loaded), 0 off, 1 on.
  int gdr = -1;
  // SQUEEZE_IB_GDR_FLUSH=0 disables the iflush of GPU receives.
  bool gdr_flush = true;
  // SQUEEZE_IB_DMABUF=0 disables dma-buf registration even when the library has it.
  bool dmabuf = true;
  // SQUEEZE_IB_MR_CACHE: registrations the cache keeps for buffers handed over unregistered.
  std::size_t mr_cache_entries = 64;
  // Interfaces for the out-of-band TCP exchange of queue-pair information; empty = the first
  // interface the socket options pick, as for the TCP transport.
  std::vector<sock::Interface> oob_interfaces;
};

}  // namespace squeeze::transport::ib

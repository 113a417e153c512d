// One side of an ib connection: a completion queue, `nqps` RC queue pairs on one device, the
// out-of-band TCP socket that set them up (kept open to notice a vanished peer), and the
// helpers both comms share: queue-pair state transitions, receive credits for immediates,
// and errors that name the QP, the peer and the completion status.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/ib/ib_devices.h"
#include "transport/ib/ib_handshake.h"
#include "transport/socket/socket.h"

namespace squeeze::transport::ib {

// Work request ids: kind in the top byte, QP index in bits 16..23, slot in the low 16 bits.
enum class WrKind : uint8_t { kWrite = 1, kCts = 2, kRecv = 3, kFlush = 4 };
inline uint64_t wr_id(WrKind k, int qp, int slot) {
  return (static_cast<uint64_t>(k) << 56) | (static_cast<uint64_t>(qp & 0xff) << 16) |
         static_cast<uint64_t>(slot & 0xffff);
}
inline WrKind wr_kind(uint64_t id) { return static_cast<WrKind>(id >> 56); }
inline int wr_qp(uint64_t id) { return static_cast<int>((id >> 16) & 0xff); }
inline int wr_slot(uint64_t id) { return static_cast<int>(id & 0xffff); }

class IbEndpoint {
 public:
  IbEndpoint(std::shared_ptr<IbDevice> dev, const IbOptions& opts)
      : dev_(std::move(dev)), opts_(opts) {}
  // Creates the CQ and `nqps` QPs in INIT with send/receive queues of the given depths
  // (clamped to the device's limits), plus `extra_cqe` completion entries for other QPs on
  // this CQ.
  Status create(int nqps, int send_depth, int recv_depth, int extra_cqe);
  // Fills this side's half of the queue-pair exchange.
  void fill_info(Role role, uint64_t nonce, ConnInfo* out) const;
  // Moves every QP to RTR then RTS, towards the peer's QPs.
  Status connect(const ConnInfo& remote);
  // A QP connected to itself (for flush reads), on this endpoint's CQ.
  Status create_loopback(Owned<ibv_qp>* qp);
  void attach_oob(sock::Fd fd, std::string peer) {
    oob_ = std::move(fd);
    peer_ = std::move(peer);
  }

  // Posts `count` zero-length receives on QP `qp`, for RDMA writes with immediate.
  Status post_recvs(int qp, int count);
  Status post_send(int qp, ibv_send_wr* wr);
  // Polls up to n completions; <0 is an error.
  int poll(ibv_wc* wc, int n) { return dev_->api->poll_cq(cq_.get(), n, wc); }
  // "work completion error on QP 0x... (1 of 2, device mlx5_0:1) with peer ...: <status>
  // during <what>".
  Status wc_error(const ibv_wc& wc, const std::string& what) const;
  // Whether the peer is still there: its closing the TCP connection means it is gone.
  // Checked at most every few milliseconds; OK when unknown.
  Status check_peer();

  int nqps() const { return static_cast<int>(qps_.size()); }
  ibv_qp* qp(int i) const { return qps_[i].get(); }
  int send_depth() const { return send_depth_; }
  const std::string& peer() const { return peer_; }
  IbDevice& dev() const { return *dev_; }
  const std::shared_ptr<IbDevice>& dev_ptr() const { return dev_; }
  const IbOptions& opts() const { return opts_; }
  // regMr on either comm: NCCL's memory through the device's cache, checked against what the
  // device can register (GPU memory needs GPUDirect RDMA, dma-buf needs kernel support).
  Status register_memory(const MemoryDesc& mem, std::unique_ptr<Registration>* reg);
  // The registration for n > 0 bytes at p: the caller's own when it is ours and covers them,
  // else the cache's.
  Status registration_for(const void* p, std::size_t n, const Registration* reg,
                          std::shared_ptr<MrEntry>* out);
  // Largest byte count of one RDMA write.
  uint64_t max_write_bytes() const;
  std::string describe() const;  // "mlx5_0:1 with peer 10.0.0.2:4711"

 private:
  Status to_init(ibv_qp* qp, int access);
  Status to_rtr(ibv_qp* qp, uint32_t dest_qpn, uint32_t dest_psn, const ConnInfo& remote);
  Status to_rts(ibv_qp* qp, uint32_t psn);
  std::shared_ptr<IbDevice> dev_;  // first: destroyed last
  IbOptions opts_;
  Owned<ibv_cq> cq_;
  std::vector<Owned<ibv_qp>> qps_;
  std::vector<uint32_t> psns_;
  int send_depth_ = 0;
  int recv_depth_ = 0;
  sock::Fd oob_;
  std::string peer_ = "(connecting)";
  std::chrono::steady_clock::time_point last_check_{};
};

}  // namespace squeeze::transport::ib

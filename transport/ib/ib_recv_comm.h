// The receiving side of an ib connection. Each post() RDMA-writes a clear-to-send into the
// sender's FIFO offering, per item, NCCL's buffer and a transport-owned staging slot (frames
// land there; it is capacity + 64 KiB, registered once per request slot and item and reused).
// A message is complete when one immediate per part has arrived; its 32-byte record in this
// side's header slot then says raw or frame, tag and sizes. flush() reads a byte of a GPU
// buffer back through a loopback QP so GPUDirect writes are visible to the GPU (iflush).
//
// Stall deadline (stall_watch.h): a clear-to-send alone does not start the clock (NCCL posts
// receives long before their sends, and the sender may have no message yet). A message split
// over several QPs starts it when its first part arrives; each further part restarts it (a
// part is a share of 32 KiB or more: real progress); the last part stops it. Past the
// deadline with parts still missing, the receive fails (Status::Remote, naming the peer, the
// parts missing and the receive's size). A message of one part arrives in a single completion
// and has no halfway state: the NIC moves it without the sender's CPU once posted, and its ack
// timeout and retries (SQUEEZE_IB_TIMEOUT, SQUEEZE_IB_RETRY_CNT) and the out-of-band socket
// already catch a peer or link that goes away.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <vector>

#include "transport/ib/ib_endpoint.h"
#include "transport/ib/ib_wire.h"

namespace squeeze::transport::ib {

class IbRecvComm final : public RecvComm {
 public:
  static constexpr uint64_t kFrameSlack = 64 * 1024;  // a frame may exceed its decoded size by this
  static constexpr int kFlushBase =
      kMaxRequests;  // flush slots: kFlushBase + i, freed by test_flush

  // stall_timeout_ms: see above; 0 waits forever.
  IbRecvComm(std::shared_ptr<IbDevice> dev, const IbOptions& opts, int stall_timeout_ms = 0)
      : ep_(std::move(dev), opts), stall_timeout_(stall_timeout_ms) {}
  // QPs (as many as the sender asked for) towards the sender, receives posted, the control
  // region registered; a flush QP when the device has force_flush.
  Status create(const ConnInfo& sender);
  void local_info(uint64_t nonce, ConnInfo* out) const {
    ep_.fill_info(Role::kReceiver, nonce, out);
  }
  void attach_oob(sock::Fd fd, std::string peer) { ep_.attach_oob(std::move(fd), std::move(peer)); }

  Status register_memory(const MemoryDesc& mem, std::unique_ptr<Registration>* reg) override {
    return ep_.register_memory(mem, reg);
  }
  Status flush(std::span<const RecvItem> items, int* slot) override;
  Status test_flush(int slot, bool* done) override;
  Status post(std::span<const RecvItem> items, int* slot) override;
  Status test(int slot, bool* done, std::span<Received> out) override;
  void release(int slot) override;

 private:
  struct Staging {
    std::unique_ptr<uint8_t[]> buf;
    uint64_t cap = 0;
    Owned<ibv_mr> mr;
  };
  struct Op {
    bool in_use = false;
    bool abandoned = false;  // released before complete: freed once the sender's writes are in
    int n = 0;
    int filled = 0;
    uint64_t seq = 0;
    std::array<RecvItem, kMaxRecvs> items{};
    std::array<std::shared_ptr<MrEntry>, kMaxRecvs> mrs{};
    std::array<int, kMaxRecvs> parts_seen{};
    std::array<int, kMaxRecvs> parts_want{};
    std::array<bool, kMaxRecvs> done{};
    std::array<MessageHeader, kMaxRecvs> headers{};
    // When the item's last part arrived (its clock: parts_seen > 0 and not done).
    std::array<std::chrono::steady_clock::time_point, kMaxRecvs> part_at{};
  };
  struct alignas(64) Control {
    uint8_t cts[kMaxRequests][kCtsBytes];
    uint8_t records[kMaxRequests][kMaxRecvs][kRecordBytes];
    uint8_t flush_sink[64];
  };
  struct FlushOp {
    bool in_use = false;
    bool done = false;
  };

  Status progress();
  Status on_data(const ibv_wc& wc);
  Status staging_for(int slot, int item, uint64_t need, Staging** out);
  Status check_stall(const Op& op) const;  // a started message past the stall deadline
  Status fail(Status s) {
    if (error_.ok()) error_ = std::move(s);
    return error_;
  }

  IbEndpoint ep_;  // first: its QPs and CQ outlive the MRs below
  Owned<ibv_qp> flush_qp_;
  std::unique_ptr<Control> ctrl_ = std::make_unique<Control>();
  Owned<ibv_mr> ctrl_mr_;
  uint64_t fifo_addr_ = 0;  // the sender's CTS FIFO
  uint32_t fifo_rkey_ = 0;
  std::array<Op, kMaxRequests> ops_{};
  std::array<std::array<Staging, kMaxRecvs>, kMaxRequests> staging_{};
  std::vector<int> free_;
  std::array<FlushOp, kMaxRequests> flushes_{};
  uint64_t next_seq_ = 0;
  int cts_in_flight_ = 0;
  std::chrono::milliseconds stall_timeout_;
  Status error_;
};

}  // namespace squeeze::transport::ib

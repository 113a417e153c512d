// The receiving side of an ib connection. Each post() RDMA-writes a clear-to-send into the
// sender's FIFO offering, per item, NCCL's buffer and a transport-owned staging slot (frames
// land there; it is capacity + 64 KiB, registered once per request slot and item and reused).
// A message is complete when one immediate per part has arrived; its 32-byte record in this
// side's header slot then says raw or frame, tag and sizes. flush() reads a byte of a GPU
// buffer back through a loopback QP so GPUDirect writes are visible to the GPU (iflush).
#pragma once

#include <array>
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

  explicit IbRecvComm(std::shared_ptr<IbDevice> dev, const IbOptions& opts)
      : ep_(std::move(dev), opts) {}
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
  Status error_;
};

}  // namespace squeeze::transport::ib

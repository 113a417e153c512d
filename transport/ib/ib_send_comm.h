// The sending side of an ib connection. The receiver RDMA-writes a clear-to-send (CTS) into
// this side's FIFO for each receive it posts; messages wait in post order for their CTS,
// match an item of it by tag, and go out as RDMA writes: a raw payload into the receiver's
// buffer, a frame into the staging slot the CTS offers. A large payload is split across the
// connection's QPs; each QP's last write carries an immediate, and QP 0 ends with the
// 32-byte message record (kind, tag, sizes) written into the receiver's header slot, so the
// receiver knows the message is whole once it has one immediate per part.
#pragma once

#include <array>
#include <deque>
#include <memory>
#include <vector>

#include "transport/ib/ib_endpoint.h"
#include "transport/ib/ib_wire.h"

namespace squeeze::transport::ib {

class IbSendComm final : public SendComm {
 public:
  static constexpr int kSlots = kMaxRequests * kMaxRecvs;  // sends queued per comm

  explicit IbSendComm(std::shared_ptr<IbDevice> dev, const IbOptions& opts)
      : ep_(std::move(dev), opts) {}
  // QPs in INIT, the FIFO registered, receives posted for CTS immediates.
  Status create();
  void local_info(uint64_t nonce, ConnInfo* out) const;
  // QPs to RTS towards the receiver; the OOB socket stays with the comm.
  Status connect(const ConnInfo& remote) { return ep_.connect(remote); }
  void attach_oob(sock::Fd fd, std::string peer) { ep_.attach_oob(std::move(fd), std::move(peer)); }

  Status register_memory(const MemoryDesc& mem, std::unique_ptr<Registration>* reg) override;
  Status post(const SendItem& item, int* slot) override;
  Status test(int slot, bool* done) override;
  void release(int slot) override;

 private:
  struct Op {
    bool in_use = false;
    bool matched = false;
    bool done = false;
    MessageHeader header;
    const uint8_t* data = nullptr;
    const Registration* reg = nullptr;
    std::shared_ptr<MrEntry> mr;  // the payload's registration while writes are in flight
    int pending = 0;              // signaled writes not yet completed
  };
  struct FifoSlot {
    bool arrived = false;
    Cts cts;
    std::array<bool, kMaxRecvs> used{};
    int used_n = 0;
  };
  // The receiver writes CTS records here; message records are written from here.
  struct alignas(64) Control {
    uint8_t fifo[kMaxRequests][kCtsBytes];
    uint8_t records[kSlots][kRecordBytes];
  };

  Status progress();
  Status poll();
  Status on_cts(const ibv_wc& wc);
  Status match();
  // Posts the writes of op `slot` for item `it` of `fs`; false in *posted when the send
  // queues lack room (try again later).
  Status write_message(int slot, FifoSlot& fs, int it, bool* posted);
  Status reject(int slot, FifoSlot& fs, int it, RejectReason why, Status err);
  Status source_mr(Op& op);
  Status fail(Status s) {
    if (error_.ok()) error_ = std::move(s);
    return error_;
  }

  IbEndpoint ep_;  // first: its QPs and CQ outlive the MRs below
  std::unique_ptr<Control> ctrl_ = std::make_unique<Control>();
  Owned<ibv_mr> ctrl_mr_;
  std::array<Op, kSlots> ops_{};
  std::vector<int> free_;
  std::deque<int> unmatched_;  // posted, waiting for their CTS, oldest first
  std::array<FifoSlot, kMaxRequests> fifo_{};
  uint64_t next_seq_ = 0;     // CTS the oldest unmatched message goes to
  uint64_t arrived_seq_ = 0;  // CTS expected next from the receiver
  std::array<int, kMaxQpsPerConn> sq_used_{};
  Status error_;
};

}  // namespace squeeze::transport::ib

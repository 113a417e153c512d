// The UCX send and receive comms. Each message is two tagged UCX messages (ucx_wire.h): the
// 32-byte header, then the payload. The receiver keeps one header receive posted per
// message it expects, matches each arriving header (in sequence order) against the oldest
// posted receive, as the TCP transport does, and only then posts the payload receive:
// straight into NCCL's buffer for raw messages (zero copy: UCX's rendezvous lands large
// payloads there directly), into transport-owned staging for frames.
//
// Stall deadline (stall_watch.h): UCX reports no partial progress of a tagged message (a
// receive is in progress or complete, with no byte count), so the receiving side's clock runs
// from the moment a message's header arrived (the sender posts header and payload together)
// until its payload completes: the whole payload must arrive within the deadline. UCX moves a
// rendezvous payload only while the receiver progresses its worker too, so time in which
// nobody tested this comm (a gap of half the deadline or more) does not count.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "transport/frame_staging.h"
#include "transport/message_wire.h"
#include "transport/transport.h"
#include "transport/ucx/ucx_channel.h"

namespace squeeze::transport::ucx {

// Rounds of progress test() still makes once the peer is gone, to take in what it sent before
// (a rendezvous acknowledgement, the last payloads), as TCP delivers the bytes before the EOF.
constexpr int kMaxSettleRounds = 1000;

// Fixed pool of N slots; acquire() gives -1 when all are in use.
template <typename Op, int N>
class SlotPool {
 public:
  SlotPool() {
    for (int i = N - 1; i >= 0; --i) free_.push_back(i);
  }
  int acquire() {
    if (free_.empty()) return -1;
    int s = free_.back();
    free_.pop_back();
    ops_[s].in_use = true;
    return s;
  }
  void release(int s) {
    if (!valid(s)) return;
    ops_[s].reset();
    free_.push_back(s);
  }
  bool valid(int s) const { return s >= 0 && s < N && ops_[s].in_use; }
  Op& at(int s) { return ops_[s]; }
  std::array<Op, N>& all() { return ops_; }

 private:
  std::array<Op, N> ops_{};
  std::vector<int> free_;
};

class UcxSendComm final : public SendComm {
 public:
  static constexpr int kSlots = kMaxRequests * kMaxRecvs;  // 256 messages in flight
  // error: set when the endpoint could not be created; every post then fails with it.
  UcxSendComm(std::unique_ptr<Channel> ch, Status error)
      : ch_(std::move(ch)), error_(std::move(error)) {}
  ~UcxSendComm() override;
  Status post(const SendItem& item, int* slot) override;
  Status test(int slot, bool* done) override;
  void release(int slot) override { pool_.release(slot); }

 private:
  struct Op {
    bool in_use = false;
    bool done = false;
    uint8_t header[kWireHeaderBytes];
    Pending header_send, payload_send;
    void reset() {
      in_use = done = false;
      header_send.reset();
      payload_send.reset();
    }
  };
  Status check(Op& op);
  std::unique_ptr<Channel> ch_;
  Status error_;
  SlotPool<Op, kSlots> pool_;
  uint32_t next_seq_ = 0;
};

class UcxRecvComm final : public RecvComm {
 public:
  // stall_timeout_ms: a payload whose header arrived that long ago and that has not completed
  // fails the comm (Status::Remote naming the peer and the bytes); 0 waits forever.
  explicit UcxRecvComm(std::unique_ptr<Channel> ch, int stall_timeout_ms = 0)
      : ch_(std::move(ch)), stall_timeout_(stall_timeout_ms) {}
  ~UcxRecvComm() override;
  Status post(std::span<const RecvItem> items, int* slot) override;
  Status test(int slot, bool* done, std::span<Received> out) override;
  void release(int slot) override;

 private:
  struct Op {
    bool in_use = false;
    int n = 0;
    int matched_count = 0;
    int filled = 0;
    std::array<RecvItem, kMaxRecvs> items{};
    std::array<bool, kMaxRecvs> matched{};
    std::array<bool, kMaxRecvs> landed{};
    std::array<MessageHeader, kMaxRecvs> headers{};
    std::array<Pending, kMaxRecvs> payloads;
    std::array<FrameStaging, kMaxRecvs> staging;                             // frames land here
    std::array<std::chrono::steady_clock::time_point, kMaxRecvs> started{};  // header arrived
    void reset() {
      in_use = false;
      n = matched_count = filled = 0;
      matched.fill(false);
      landed.fill(false);
      for (auto& p : payloads) p.reset();
      for (auto& st : staging) st.clear();
    }
  };
  struct HeaderSlot {
    uint8_t bytes[kWireHeaderBytes];
    Pending recv;
  };
  static constexpr int kHeaderSlots = kMaxRequests * kMaxRecvs;

  bool advance(Status* err);  // handles every arrived header, in order; true if any
  Status on_header(uint32_t seq, const MessageHeader& h);
  void post_headers();  // one header receive per expected message
  bool check_payloads(Op& op, Status* err);
  Status settle(Op& op);                   // progress + advance until op is done or nothing moves
  Status check_stall(const Op& op) const;  // a started payload past the stall deadline
  void note_test();                        // restarts the clocks after a gap in test() calls

  std::unique_ptr<Channel> ch_;
  SlotPool<Op, kMaxRequests> pool_;
  std::deque<int> matching_;  // posted ops with unmatched items, oldest first
  int unmatched_ = 0;         // items across posted ops still waiting for their header
  std::array<HeaderSlot, kHeaderSlots> headers_;
  uint32_t header_posted_ = 0;  // next seq to post a header receive for
  uint32_t header_next_ = 0;    // next seq whose header we handle
  std::chrono::milliseconds stall_timeout_;
  std::chrono::steady_clock::time_point last_test_{};
  Status error_;
};

}  // namespace squeeze::transport::ucx

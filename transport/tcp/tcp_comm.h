// The TCP send and receive comms: one non-blocking control socket each, progressed from
// test(), and optionally a StreamSet of data sockets driven by helper threads (stream_set.h).
// Up to kSendSlots messages queue on a send comm and are written back to back (several per
// writev), so small messages pipeline; a receive comm reads each header, matches its tag
// against the oldest posted receive, and lands the payload in place (raw) or in staging. With
// a StreamSet, a payload of kStripeMinBytes or more travels in parts on the data sockets
// instead of behind its header; a request is done once its parts are too.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "transport/frame_staging.h"
#include "transport/socket/socket.h"
#include "transport/stall_watch.h"
#include "transport/tcp/busy_clock.h"
#include "transport/tcp/stream_set.h"
#include "transport/tcp/tcp_info.h"
#include "transport/tcp/wire.h"
#include "transport/transport.h"

namespace squeeze::transport::tcp {

// Fixed pool of slots with FIFO completion order.
template <typename Op, int N>
class SlotRing {
 public:
  SlotRing() {
    for (int i = N - 1; i >= 0; --i) free_.push_back(i);
  }
  int acquire() {
    if (free_.empty()) return -1;
    int s = free_.back();
    free_.pop_back();
    ops_[s].reset();  // keeps buffers' capacity across reuse
    ops_[s].in_use = true;
    order_.push_back(s);
    return s;
  }
  void release(int s) {
    if (s < 0 || s >= N || !ops_[s].in_use) return;
    ops_[s].in_use = false;
    free_.push_back(s);
  }
  Op& at(int s) { return ops_[s]; }
  bool valid(int s) const { return s >= 0 && s < N && ops_[s].in_use; }
  std::deque<int>& order() { return order_; }  // in-flight, oldest first

 private:
  std::array<Op, N> ops_{};
  std::vector<int> free_;
  std::deque<int> order_;
};

class TcpSendComm final : public SendComm {
 public:
  static constexpr int kSlots = kMaxRequests * kMaxRecvs;
  // `streams`: the connection's data sockets, or null for a single-socket connection.
  TcpSendComm(sock::Fd fd, std::string peer, std::unique_ptr<StreamSet> streams = nullptr)
      : fd_(std::move(fd)),
        peer_(std::move(peer)),
        last_at_(std::chrono::steady_clock::now()),
        busy_(last_at_),
        busy_at_last_(busy_),
        streams_(std::move(streams)) {}
  Status post(const SendItem& item, int* slot) override;
  Status test(int slot, bool* done) override;
  void release(int slot) override { ring_.release(slot); }
  bool link_rate(LinkSample* sample) override;

 private:
  struct Op {
    bool in_use = false;
    bool done = false;
    uint8_t header[kWireHeaderBytes];
    const uint8_t* data = nullptr;
    uint64_t size = 0;  // payload bytes behind the header on the control socket
    uint64_t sent = 0;  // header + payload bytes written
    void reset() { *this = Op{}; }
  };
  Status progress();
  Status failure() const;      // the connection's error: the control socket's or a data socket's
  void poll_busy();            // a look at the socket while bytes written may still be queued
  TcpBacklog backlog() const;  // over the control and data sockets
  // A helper thread's first write since the last look starts a busy spell (BusyClock::began).
  void note_stream_writes(std::chrono::steady_clock::time_point now);
  sock::Fd fd_;
  std::string peer_;
  SlotRing<Op, kSlots> ring_;
  Status error_;
  TcpCounters last_;  // the kernel's counters when the last link sample was taken
  std::chrono::steady_clock::time_point last_at_;  // and when
  BusyClock busy_;
  BusyClock busy_at_last_;  // busy_ as it was at the last sample
  // Parts of each slot's payload still on the data sockets.
  std::array<std::atomic<int>, kSlots> parts_left_{};
  std::unique_ptr<StreamSet> streams_;  // last: its threads stop before the rest goes
};

class TcpRecvComm final : public RecvComm {
 public:
  // streams: the connection's data sockets (null: one socket; its receiving threads keep
  // their own deadline for the parts). stall_timeout_ms: see transport/stall_watch.h (the
  // control socket's header and payload bytes); 0 waits forever.
  TcpRecvComm(sock::Fd fd, std::string peer, std::unique_ptr<StreamSet> streams = nullptr,
              int stall_timeout_ms = 0)
      : fd_(std::move(fd)),
        peer_(std::move(peer)),
        stall_(stall_timeout_ms),
        streams_(std::move(streams)) {}
  Status post(std::span<const RecvItem> items, int* slot) override;
  Status test(int slot, bool* done, std::span<Received> out) override;
  void release(int slot) override { ring_.release(slot); }

 private:
  struct Op {
    bool in_use = false;
    int n = 0;
    int filled = 0;
    std::array<RecvItem, kMaxRecvs> items{};
    std::array<bool, kMaxRecvs> matched{};
    std::array<MessageHeader, kMaxRecvs> headers{};
    std::array<FrameStaging, kMaxRecvs> staging;  // frames land here
    void reset() {
      in_use = false;
      n = filled = 0;
      matched.fill(false);
      for (auto& st : staging) st.clear();
    }
  };
  Status progress();
  Status on_header();
  // Called where progress() finds no byte to read: fails the comm once a message that is
  // halfway has gone without real progress (stall_watch.h) past the stall deadline.
  Status check_stall();
  sock::Fd fd_;
  std::string peer_;
  SlotRing<Op, kMaxRequests> ring_;
  Status fill();  // reads more bytes into the read-ahead buffer
  // Read-ahead buffer: headers and small payloads arrive in one recv() with the bytes around
  // them; large payloads are read straight into their destination.
  static constexpr std::size_t kReadAhead = 64 * 1024;
  static constexpr uint64_t kDirectRead = 16 * 1024;
  std::vector<uint8_t> rbuf_ = std::vector<uint8_t>(kReadAhead);
  std::size_t rpos_ = 0, rlen_ = 0;
  // Current message being read.
  uint8_t hdr_[kWireHeaderBytes];
  bool in_payload_ = false;
  uint8_t* dst_ = nullptr;
  uint64_t remaining_ = 0;
  uint64_t payload_total_ = 0;
  int cur_slot_ = -1;
  StallWatch stall_;
  Status error_;
  std::array<std::atomic<int>, kMaxRequests> parts_left_{};
  std::unique_ptr<StreamSet> streams_;  // last: its threads stop before the buffers go
};

}  // namespace squeeze::transport::tcp

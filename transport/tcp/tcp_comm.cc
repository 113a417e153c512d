#include "transport/tcp/tcp_comm.h"

#include "transport/recv_match.h"
#include "transport/tcp/stream_layout.h"
#include "transport/tcp/tcp_info.h"

#include <algorithm>
#include <cstring>

namespace squeeze::transport::tcp {

namespace {
constexpr int kMaxIov = 64;
constexpr uint64_t kMaxReadChunk = uint64_t{1} << 30;
// A frame never needs much more room than the buffer it decodes into.
constexpr uint64_t kFrameSlack = 64 * 1024;
// The busy time a link sample averages over.
constexpr double kLinkWindowUs = 5000;

Status io_error(sock::Io io, int err, const std::string& peer, const char* what, uint64_t done,
                uint64_t total) {
  std::string where = std::string(what) + " with " + peer + " after " + std::to_string(done) +
                      " of " + std::to_string(total) + " bytes";
  if (io == sock::Io::kClosed) return Status::Remote("peer closed the connection during " + where);
  return Status::System(where + ": " + sock::errno_str(err));
}
}  // namespace

Status TcpSendComm::failure() const {
  if (!error_.ok()) return error_;
  if (streams_ && streams_->failed()) return streams_->error();
  return Status::Ok();
}

Status TcpSendComm::post(const SendItem& item, int* slot) {
  *slot = -1;
  if (Status f = failure(); !f.ok()) return f;
  if (item.data == nullptr && item.header.payload_bytes != 0)
    return Status::Usage("isend: null buffer with non-zero size");
  int s = ring_.acquire();
  if (s < 0) return Status::Ok();  // full: caller retries later
  busy_.posted(std::chrono::steady_clock::now());
  Op& op = ring_.at(s);
  encode_header(item.header, op.header);
  op.data = static_cast<const uint8_t*>(item.data);
  op.size = item.header.payload_bytes;
  if (streams_ && op.size >= kStripeMinBytes) {  // the payload goes in parts on the data sockets
    streams_->submit(const_cast<uint8_t*>(op.data), op.size,
                     &parts_left_[static_cast<std::size_t>(s)]);
    op.size = 0;
  }
  *slot = s;
  // Start writing now: small messages often leave in this very call.
  return progress();
}

Status TcpSendComm::progress() {
  auto& order = ring_.order();
  while (error_.ok() && !order.empty()) {
    iovec iov[kMaxIov];
    int cnt = 0;
    for (int s : order) {
      if (cnt + 2 > kMaxIov) break;
      Op& op = ring_.at(s);
      if (op.sent < kWireHeaderBytes) {
        iov[cnt++] = {op.header + op.sent, kWireHeaderBytes - op.sent};
        if (op.size) iov[cnt++] = {const_cast<uint8_t*>(op.data), op.size};
      } else {
        uint64_t off = op.sent - kWireHeaderBytes;
        iov[cnt++] = {const_cast<uint8_t*>(op.data) + off, op.size - off};
      }
    }
    std::size_t n = 0;
    int err = 0;
    auto t0 = std::chrono::steady_clock::now();
    note_stream_writes(t0);
    if (busy_.look_before_write(t0)) {
      busy_.poll(t0, backlog());
      t0 = std::chrono::steady_clock::now();
    }
    sock::Io io = sock::writev_once(fd_.get(), iov, cnt, &n, &err);
    busy_.wrote(t0, std::chrono::steady_clock::now(), backlog());
    if (io == sock::Io::kWouldBlock) return Status::Ok();
    if (io != sock::Io::kProgress) {
      Op& head = ring_.at(order.front());
      error_ = io_error(io, err, peer_, "send", head.sent, head.size + kWireHeaderBytes);
      return error_;
    }
    // Every message has at least its 32-byte header, so n bytes always advance the head.
    while (n > 0 && !order.empty()) {
      Op& op = ring_.at(order.front());
      uint64_t take = std::min<uint64_t>(op.size + kWireHeaderBytes - op.sent, n);
      op.sent += take;
      n -= take;
      if (op.sent < op.size + kWireHeaderBytes) break;
      op.done = true;
      order.pop_front();
    }
  }
  return error_;
}

Status TcpSendComm::test(int slot, bool* done) {
  *done = false;
  if (!ring_.valid(slot))
    return Status::Usage("test: unknown send request slot " + std::to_string(slot));
  if (!ring_.at(slot).done) {
    if (Status s = progress(); !s.ok()) return s;
  }
  poll_busy();
  const bool parts_done =
      parts_left_[static_cast<std::size_t>(slot)].load(std::memory_order_acquire) == 0;
  if (!parts_done) {
    if (Status f = failure(); !f.ok()) return f;
  }
  *done = ring_.at(slot).done && parts_done;
  return Status::Ok();
}

// Busy is what the sockets hold unsent, on a multi-stream connection as on one socket: parts
// handed to the helper threads and not yet written are not. Counting them busy read a 1 Gbit/s
// link 28% low, down to 0 B/s, on a loaded machine (notes, issue 24): while the helpers were
// descheduled the time was CPU, not network. The helpers' writes start busy spells instead
// (note_stream_writes), as our own writes do.
TcpBacklog TcpSendComm::backlog() const {
  TcpBacklog b = tcp_backlog(fd_.get());
  if (!streams_) return b;
  const TcpBacklog d = streams_->backlog();
  return TcpBacklog{b.busy || d.busy, b.window_full || d.window_full};
}

void TcpSendComm::note_stream_writes(std::chrono::steady_clock::time_point now) {
  if (!streams_) return;
  if (const auto t = streams_->take_first_write()) busy_.began(std::min(*t, now));
}

void TcpSendComm::poll_busy() {
  const auto now = std::chrono::steady_clock::now();
  note_stream_writes(now);
  if (busy_.look_due(now)) busy_.poll(now, backlog());
  const bool parts_idle = !streams_ || streams_->outstanding() == 0;
  if (!busy_.busy() && ring_.order().empty() && parts_idle) busy_.went_idle(now);
}

// One sample per window of at least kLinkWindowUs of busy time (BusyClock: writing, or bytes
// unsent): the bytes acknowledged over that busy time. The kernel's per-ACK delivery rate was
// tried first and read 0.2 to 8.2 GB/s on a link shaped to 10 Gbit/s (tc tbf) that carried
// 1 GB/s: each ACK times a few packets, which a token bucket lets through at the wire's speed
// or holds back. A few milliseconds of busy time average that out, and the bucket's burst (its
// depth, 1.25 MB at 10 Gbit/s) is a small part of a window. The kernel's own busy time
// (TCP_INFO) was used next; it counts whole jiffies and includes the wait for a delayed ACK,
// see busy_clock.h.
bool TcpSendComm::link_rate(LinkSample* sample) {
  TcpCounters r;
  if (!tcp_counters(fd_.get(), &r)) return false;
  if (streams_) r.bytes_acked += streams_->bytes_acked();
  sample->fresh = false;
  poll_busy();
  const double busy = busy_.busy_us() - busy_at_last_.busy_us();
  if (busy < kLinkWindowUs || r.bytes_acked == last_.bytes_acked)
    return true;  // the window goes on
  const auto now = std::chrono::steady_clock::now();
  const double wall_us = std::chrono::duration<double, std::micro>(now - last_at_).count();
  sample->fresh = true;
  sample->bytes_per_s = static_cast<double>(r.bytes_acked - last_.bytes_acked) * 1e6 / busy;
  // The network can do at least this, but maybe more, when the receiver's full window held
  // the bytes for most of the busy time (a slow reader: on loopback, a descheduled peer), when
  // most of the busy time is a guess (the poller was away when the bytes left), or when the
  // connection sat idle most of the window: then it moved bursts, and a burst that fits a
  // token bucket crosses at the wire's speed.
  const double limited = busy_.limited_us() - busy_at_last_.limited_us();
  const double unsure = busy_.unsure_us() - busy_at_last_.unsure_us();
  sample->lower_bound = 2 * limited > busy || 2 * unsure > busy || 2 * busy < wall_us;
  const double active_us = wall_us - (busy_.away_us() - busy_at_last_.away_us());
  sample->utilization = active_us > 0 ? std::min(1.0, busy / active_us) : -1;
  last_ = r;
  last_at_ = now;
  busy_at_last_ = busy_;
  return true;
}

Status TcpRecvComm::post(std::span<const RecvItem> items, int* slot) {
  *slot = -1;
  if (!error_.ok()) return error_;
  if (streams_ && streams_->failed()) return streams_->error();
  if (items.empty() || items.size() > kMaxRecvs)
    return Status::Usage("irecv: n=" + std::to_string(items.size()) + " outside [1, " +
                         std::to_string(kMaxRecvs) + "]");
  int s = ring_.acquire();
  if (s < 0) return Status::Ok();
  Op& op = ring_.at(s);
  op.n = static_cast<int>(items.size());
  std::copy(items.begin(), items.end(), op.items.begin());
  *slot = s;
  return Status::Ok();
}

Status TcpRecvComm::on_header() {
  MessageHeader h;
  std::string bad = decode_header(hdr_, &h);
  if (!bad.empty()) return Status::Remote("corrupt message header from " + peer_ + ": " + bad);
  cur_slot_ = ring_.order().front();
  Op& op = ring_.at(cur_slot_);
  int idx = -1;
  const auto n = static_cast<std::size_t>(op.n);
  Status st = match_recv_item({op.items.data(), n}, {op.matched.data(), n}, h, peer_, &idx);
  if (!st.ok()) return st;
  const RecvItem& it = op.items[idx];
  op.matched[idx] = true;
  op.headers[idx] = h;
  if (h.kind == PayloadKind::kRaw) {
    dst_ = static_cast<uint8_t*>(it.data);
  } else {
    if (h.payload_bytes > it.capacity + kFrameSlack)
      return Status::Remote("frame from " + peer_ + " of " + std::to_string(h.payload_bytes) +
                            " bytes is larger than any frame for a " + std::to_string(it.capacity) +
                            "-byte receive");
    dst_ = op.staging[idx].prepare(static_cast<std::size_t>(h.payload_bytes));
  }
  if (streams_ && h.payload_bytes >= kStripeMinBytes) {  // its parts come on the data sockets
    streams_->submit(dst_, h.payload_bytes, &parts_left_[static_cast<std::size_t>(cur_slot_)]);
    remaining_ = payload_total_ = 0;
    in_payload_ = true;  // with nothing left on the control socket: progress() completes it
    return Status::Ok();
  }
  remaining_ = h.payload_bytes;
  payload_total_ = h.payload_bytes;
  in_payload_ = true;
  return Status::Ok();
}

Status TcpRecvComm::fill() {
  if (rpos_ == rlen_) rpos_ = rlen_ = 0;
  if (rlen_ == rbuf_.size()) {  // compact: keep the unread tail at the front
    std::memmove(rbuf_.data(), rbuf_.data() + rpos_, rlen_ - rpos_);
    rlen_ -= rpos_;
    rpos_ = 0;
  }
  std::size_t n = 0;
  int err = 0;
  sock::Io io = sock::read_once(fd_.get(), rbuf_.data() + rlen_, rbuf_.size() - rlen_, &n, &err);
  if (io == sock::Io::kWouldBlock) return Status::Ok();
  if (io != sock::Io::kProgress) {
    if (in_payload_)
      return io_error(io, err, peer_, "receive of a message payload", payload_total_ - remaining_,
                      payload_total_);
    return io_error(io, err, peer_, "receive of a message header", rlen_ - rpos_, kWireHeaderBytes);
  }
  rlen_ += n;
  return Status::Ok();
}

Status TcpRecvComm::progress() {
  auto& order = ring_.order();
  while (error_.ok()) {
    if (!in_payload_) {
      if (order.empty()) return Status::Ok();  // nothing posted: leave data where it is
      if (rlen_ - rpos_ < kWireHeaderBytes) {
        std::size_t before = rlen_ - rpos_;
        if (Status s = fill(); !s.ok()) {
          error_ = s;
          break;
        }
        if (rlen_ - rpos_ == before) {  // would block
          if (before == 0) {            // between messages: an idle peer is fine
            stall_.completed();
            return Status::Ok();
          }
          error_ = check_stall();
          break;
        }
        stall_.moved(rlen_ - rpos_ - before);
        continue;
      }
      std::memcpy(hdr_, rbuf_.data() + rpos_, kWireHeaderBytes);
      rpos_ += kWireHeaderBytes;
      stall_.completed();  // a whole header: progress
      if (Status s = on_header(); !s.ok()) {
        error_ = s;
        break;
      }
    } else if (remaining_ > 0) {
      if (rpos_ < rlen_) {  // bytes already read ahead
        std::size_t take = static_cast<std::size_t>(std::min<uint64_t>(remaining_, rlen_ - rpos_));
        std::memcpy(dst_, rbuf_.data() + rpos_, take);
        rpos_ += take;
        dst_ += take;
        remaining_ -= take;
      } else if (remaining_ >= kDirectRead) {
        std::size_t n = 0;
        int err = 0;
        sock::Io io =
            sock::read_once(fd_.get(), dst_, std::min(remaining_, kMaxReadChunk), &n, &err);
        if (io == sock::Io::kWouldBlock) {
          error_ = check_stall();
          break;
        }
        if (io != sock::Io::kProgress) {
          error_ = io_error(io, err, peer_, "receive of a message payload",
                            payload_total_ - remaining_, payload_total_);
          break;
        }
        stall_.moved(n);
        dst_ += n;
        remaining_ -= n;
      } else {
        std::size_t before = rlen_ - rpos_;
        if (Status s = fill(); !s.ok()) {
          error_ = s;
          break;
        }
        if (rlen_ - rpos_ == before) {
          error_ = check_stall();
          break;
        }
        stall_.moved(rlen_ - rpos_ - before);
      }
    }
    if (in_payload_ && remaining_ == 0) {
      in_payload_ = false;
      stall_.completed();  // a whole payload (or its parts handed to the data sockets): progress
      Op& op = ring_.at(cur_slot_);
      if (++op.filled == op.n) order.pop_front();
    }
  }
  return error_;
}

Status TcpRecvComm::check_stall() {
  if (!stall_.expired()) return Status::Ok();
  std::string what;
  if (in_payload_) {
    what = std::to_string(remaining_) + " of " + std::to_string(payload_total_) +
           " payload bytes missing";
  } else {
    what = std::to_string(kWireHeaderBytes - (rlen_ - rpos_)) + " of " +
           std::to_string(kWireHeaderBytes) + " message header bytes missing";
  }
  return stall_error(peer_, stall_.waited_s(), bytes_progress(stall_), what);
}

Status TcpRecvComm::test(int slot, bool* done, std::span<Received> out) {
  *done = false;
  if (!ring_.valid(slot))
    return Status::Usage("test: unknown receive request slot " + std::to_string(slot));
  Op& op = ring_.at(slot);
  if (op.filled < op.n) {
    if (Status s = progress(); !s.ok()) return s;
  }
  if (op.filled < op.n) return Status::Ok();
  if (parts_left_[static_cast<std::size_t>(slot)].load(std::memory_order_acquire) != 0) {
    if (streams_->failed()) return streams_->error();
    return Status::Ok();
  }
  for (int i = 0; i < op.n && i < static_cast<int>(out.size()); ++i) {
    out[i].header = op.headers[i];
    out[i].staged = op.staging[i].frame();
  }
  *done = true;
  return Status::Ok();
}

}  // namespace squeeze::transport::tcp

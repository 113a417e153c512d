#include <algorithm>

#include "transport/recv_match.h"
#include "transport/stall_watch.h"
#include "transport/ucx/ucx_comm.h"
#include "transport/ucx/ucx_wire.h"

namespace squeeze::transport::ucx {

namespace {
// A frame never needs much more room than the buffer it decodes into (as in TCP).
constexpr uint64_t kFrameSlack = 64 * 1024;
}  // namespace

UcxRecvComm::~UcxRecvComm() {
  if (!ch_->session().usable()) return;  // a forked child's copy: UCX belongs to the parent
  // Cancel what still waits, before the channel closes the endpoint and the worker.
  for (HeaderSlot& h : headers_) h.recv.reset();
  for (Op& op : pool_.all()) op.reset();
}

Status UcxRecvComm::post(std::span<const RecvItem> items, int* slot) {
  *slot = -1;
  if (!error_.ok()) return error_;
  if (items.empty() || items.size() > kMaxRecvs)
    return Status::Usage("irecv: n=" + std::to_string(items.size()) + " outside [1, " +
                         std::to_string(kMaxRecvs) + "]");
  for (const RecvItem& it : items)
    if (it.data == nullptr && it.capacity != 0)
      return Status::Usage("irecv: null buffer with non-zero capacity");
  int s = pool_.acquire();
  if (s < 0) return Status::Ok();  // 32 receives posted: the caller retries later
  Op& op = pool_.at(s);
  op.n = static_cast<int>(items.size());
  std::copy(items.begin(), items.end(), op.items.begin());
  matching_.push_back(s);
  unmatched_ += op.n;
  *slot = s;
  post_headers();
  return Status::Ok();
}

void UcxRecvComm::release(int slot) {
  if (!pool_.valid(slot)) return;
  // Released before all its messages arrived (NCCL never does): stop matching into it.
  auto it = std::find(matching_.begin(), matching_.end(), slot);
  if (it != matching_.end()) {
    Op& op = pool_.at(slot);
    unmatched_ -= op.n - op.matched_count;
    matching_.erase(it);
  }
  pool_.release(slot);
}

void UcxRecvComm::post_headers() {
  while (static_cast<int>(header_posted_ - header_next_) < unmatched_) {
    const uint32_t seq = header_posted_++;
    HeaderSlot& h = headers_[seq % kHeaderSlots];
    h.recv.start_recv(&ch_->session(), h.bytes, sizeof(h.bytes), header_tag(ch_->comm_id(), seq));
  }
}

bool UcxRecvComm::advance(Status* err) {
  bool any = false;
  while (header_next_ != header_posted_) {
    const uint32_t seq = header_next_;
    HeaderSlot& slot = headers_[seq % kHeaderSlots];
    std::size_t len = 0;
    ucs_status_t st = slot.recv.poll(&len);
    if (st == UCS_INPROGRESS) break;
    slot.recv.reset();
    if (st != UCS_OK) {
      *err = Status::Remote("receive of message " + std::to_string(seq) + "'s header from " +
                            ch_->peer() + " failed: " + ch_->session().lib().status_str(st));
      return any;
    }
    MessageHeader h;
    std::string bad = len != sizeof(slot.bytes)
                          ? "header of " + std::to_string(len) + " bytes, expected 32"
                          : decode_header(slot.bytes, &h);
    if (!bad.empty()) {
      *err = Status::Remote("corrupt message header from " + ch_->peer() + ": " + bad);
      return any;
    }
    ++header_next_;
    any = true;
    if (Status s = on_header(seq, h); !s.ok()) {
      *err = s;
      return any;
    }
  }
  return any;
}

Status UcxRecvComm::on_header(uint32_t seq, const MessageHeader& h) {
  if (matching_.empty())  // cannot happen: a header receive is posted only for a posted item
    return Status::Internal("header " + std::to_string(seq) + " from " + ch_->peer() +
                            " arrived with no receive posted");
  const int s = matching_.front();
  Op& op = pool_.at(s);
  int idx = -1;
  const auto n = static_cast<std::size_t>(op.n);
  Status bad = match_recv_item({op.items.data(), n}, {op.matched.data(), n}, h, ch_->peer(), &idx);
  if (!bad.ok()) return bad;
  const RecvItem& it = op.items[idx];
  uint8_t* dst = static_cast<uint8_t*>(it.data);
  if (h.kind == PayloadKind::kFrame) {
    if (h.payload_bytes > it.capacity + kFrameSlack)
      return Status::Remote("frame from " + ch_->peer() + " of " + std::to_string(h.payload_bytes) +
                            " bytes is larger than any frame for a " + std::to_string(it.capacity) +
                            "-byte receive");
    dst = op.staging[idx].prepare(static_cast<std::size_t>(h.payload_bytes));
  }
  op.matched[idx] = true;
  op.headers[idx] = h;
  --unmatched_;
  if (++op.matched_count == op.n) matching_.pop_front();
  if (h.payload_bytes == 0) {
    op.landed[idx] = true;
    ++op.filled;
    return Status::Ok();
  }
  op.payloads[idx].start_recv(&ch_->session(), dst, h.payload_bytes,
                              payload_tag(ch_->comm_id(), seq));
  op.started[idx] = std::chrono::steady_clock::now();  // the stall clock runs from here
  return Status::Ok();
}

bool UcxRecvComm::check_payloads(Op& op, Status* err) {
  bool any = false;
  for (int i = 0; i < op.n; ++i) {
    if (!op.matched[i] || op.landed[i]) continue;
    std::size_t len = 0;
    ucs_status_t st = op.payloads[i].poll(&len);
    if (st == UCS_INPROGRESS) continue;
    op.payloads[i].reset();
    if (st != UCS_OK) {
      *err = Status::Remote("receive of a " + std::to_string(op.headers[i].payload_bytes) +
                            "-byte payload from " + ch_->peer() + " (tag " +
                            std::to_string(op.headers[i].tag) +
                            ") failed: " + ch_->session().lib().status_str(st));
      return any;
    }
    if (len != op.headers[i].payload_bytes) {
      *err = Status::Remote("payload from " + ch_->peer() + " has " + std::to_string(len) +
                            " bytes but its header said " +
                            std::to_string(op.headers[i].payload_bytes));
      return any;
    }
    op.landed[i] = true;
    ++op.filled;
    any = true;
  }
  return any;
}

Status UcxRecvComm::settle(Op& op) {
  // Once the peer has failed, keep going while anything moves (kMaxSettleRounds).
  for (int round = 0;; ++round) {
    unsigned events = ch_->progress();
    Status err;
    bool moved = advance(&err);
    post_headers();
    if (err.ok()) moved = check_payloads(op, &err) || moved;
    if (!err.ok()) return err;
    if (op.filled == op.n) return Status::Ok();
    if (ch_->peer_alive()) return Status::Ok();
    if ((events == 0 && !moved) || round == kMaxSettleRounds)
      return Status::Remote(ch_->failure_text() + " before the posted receive completed (" +
                            std::to_string(op.filled) + " of " + std::to_string(op.n) +
                            " messages arrived)");
  }
}

void UcxRecvComm::note_test() {
  if (stall_timeout_.count() <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_test_ >= stall_timeout_ / 2) {  // nobody progressed the worker meanwhile
    for (Op& op : pool_.all())
      if (op.in_use) op.started.fill(now);  // only items matched and not landed use theirs
  }
  last_test_ = now;
}

Status UcxRecvComm::check_stall(const Op& op) const {
  if (stall_timeout_.count() <= 0) return Status::Ok();
  const auto now = std::chrono::steady_clock::now();
  for (int i = 0; i < op.n; ++i) {
    if (!op.matched[i] || op.landed[i] || now - op.started[i] < stall_timeout_) continue;
    const uint64_t bytes = op.headers[i].payload_bytes;
    // No byte count to give: UCX says only "in progress" until the whole payload is in.
    return stall_error(ch_->peer(), std::chrono::duration<double>(now - op.started[i]).count(),
                       "its payload did not complete",
                       "up to " + std::to_string(bytes) + " of " + std::to_string(bytes) +
                           " payload bytes missing (tag " + std::to_string(op.headers[i].tag) +
                           "; UCX reports no partial progress of a tagged message)");
  }
  return Status::Ok();
}

Status UcxRecvComm::test(int slot, bool* done, std::span<Received> out) {
  *done = false;
  if (!pool_.valid(slot))
    return Status::Usage("test: unknown receive request slot " + std::to_string(slot));
  Op& op = pool_.at(slot);
  note_test();
  if (op.filled < op.n) {  // messages that arrived before the comm broke still report done
    if (!error_.ok()) return error_;
    if (Status s = settle(op); !s.ok()) return error_ = s;
    if (op.filled < op.n) {
      if (Status s = check_stall(op); !s.ok()) {
        ch_->keep_worker_until_exit();
        return error_ = s;
      }
      return Status::Ok();
    }
  }
  for (int i = 0; i < op.n && i < static_cast<int>(out.size()); ++i) {
    out[i].header = op.headers[i];
    out[i].staged = op.staging[i].frame();
  }
  *done = true;
  return Status::Ok();
}

}  // namespace squeeze::transport::ucx

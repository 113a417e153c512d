#include "transport/ucx/ucx_comm.h"
#include "transport/ucx/ucx_wire.h"

namespace squeeze::transport::ucx {

UcxSendComm::~UcxSendComm() {
  if (!ch_->session().usable()) return;  // a forked child's copy: UCX belongs to the parent
  for (Op& op : pool_.all()) {
    if (op.in_use && !op.done && (op.header_send.active() || op.payload_send.active())) {
      if (op.header_send.poll() == UCS_INPROGRESS || op.payload_send.poll() == UCS_INPROGRESS)
        ch_->set_force_close();
    }
    op.reset();
  }
}

Status UcxSendComm::post(const SendItem& item, int* slot) {
  *slot = -1;
  if (!error_.ok()) return error_;
  if (item.data == nullptr && item.header.payload_bytes != 0)
    return Status::Usage("isend: null buffer with non-zero size");
  int s = pool_.acquire();
  if (s < 0) return Status::Ok();  // 256 messages in flight: the caller retries later
  Op& op = pool_.at(s);
  const uint32_t seq = next_seq_++;
  ch_->note_sent();
  encode_header(item.header, op.header);
  const Session* session = &ch_->session();
  const uint32_t comm = ch_->comm_id();
  op.header_send.start_send(session, ch_->ep(), op.header, sizeof(op.header),
                            header_tag(comm, seq));
  if (item.header.payload_bytes != 0)
    op.payload_send.start_send(session, ch_->ep(), item.data, item.header.payload_bytes,
                               payload_tag(comm, seq));
  *slot = s;
  if (Status st = check(op); !st.ok()) {
    pool_.release(s);
    *slot = -1;
    return st;
  }
  return Status::Ok();
}

// Records whether both halves have left; any failure breaks the stream for good.
Status UcxSendComm::check(Op& op) {
  ucs_status_t h = op.header_send.poll();
  ucs_status_t p = op.payload_send.poll();
  for (ucs_status_t st : {h, p}) {
    if (st != UCS_OK && st != UCS_INPROGRESS)
      return error_ = Status::Remote("send to " + ch_->peer() +
                                     " failed: " + ch_->session().lib().status_str(st));
  }
  op.done = h == UCS_OK && p == UCS_OK;
  return Status::Ok();
}

Status UcxSendComm::test(int slot, bool* done) {
  *done = false;
  if (!pool_.valid(slot))
    return Status::Usage("test: unknown send request slot " + std::to_string(slot));
  Op& op = pool_.at(slot);
  if (!op.done) {  // a message that left before the comm broke still reports done
    if (!error_.ok()) return error_;
    ch_->progress();
    if (Status st = check(op); !st.ok()) return st;
    if (!op.done && !ch_->peer_alive()) {
      for (int round = 0; round < kMaxSettleRounds && !op.done; ++round) {
        const unsigned events = ch_->progress();
        if (Status st = check(op); !st.ok()) return st;
        if (events == 0) break;
      }
      if (!op.done)
        return error_ = Status::Remote(ch_->failure_text() + " before a send completed");
    }
  }
  *done = op.done;
  return Status::Ok();
}

}  // namespace squeeze::transport::ucx

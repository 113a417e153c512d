#include "transport/ib/ib_send_comm.h"

#include <arpa/inet.h>

#include <algorithm>

namespace squeeze::transport::ib {

namespace {
constexpr int kSendDepth =
    2 * IbSendComm::kSlots + 64;  // QP 0: a payload write and a record per message
constexpr int kCtsCredits = kMaxRequests + 8;
constexpr uint64_t kPartMin = 64 * 1024;  // smallest share of a message one QP carries
constexpr uint64_t kPartAlign = 4096;

std::string msg_str(const MessageHeader& h) {
  return "message (tag " + std::to_string(h.tag) + ", " + std::to_string(h.original_bytes) +
         " bytes" +
         (h.kind == PayloadKind::kFrame ? ", a " + std::to_string(h.payload_bytes) + "-byte frame)"
                                        : ")");
}
}  // namespace

Status IbSendComm::create() {
  if (Status s = ep_.create(ep_.opts().qps_per_conn, kSendDepth, kCtsCredits, 0); !s.ok()) return s;
  IbDevice& d = ep_.dev();
  ctrl_mr_ = Owned<ibv_mr>(d.api.get(),
                           d.api->reg_mr(d.pd.get(), ctrl_.get(), sizeof(Control), kMrAccess));
  if (!ctrl_mr_)
    return Status::System("ibv_reg_mr of the send FIFO on " + d.name + ": " + verbs_error(-1));
  for (int i = kSlots - 1; i >= 0; --i) free_.push_back(i);
  return ep_.post_recvs(0, kCtsCredits);
}

void IbSendComm::local_info(uint64_t nonce, ConnInfo* out) const {
  ep_.fill_info(Role::kSender, nonce, out);
  out->fifo_addr = reinterpret_cast<uintptr_t>(ctrl_->fifo);
  out->fifo_rkey = ctrl_mr_->rkey;
}

Status IbSendComm::register_memory(const MemoryDesc& mem, std::unique_ptr<Registration>* reg) {
  return ep_.register_memory(mem, reg);
}

Status IbSendComm::post(const SendItem& item, int* slot) {
  *slot = -1;
  if (!error_.ok()) return error_;
  const MessageHeader& h = item.header;
  if (item.data == nullptr && h.payload_bytes != 0)
    return Status::Usage("isend: null buffer with non-zero size");
  if (h.kind == PayloadKind::kRaw && h.payload_bytes != h.original_bytes)
    return Status::Usage("isend: raw message with payload " + std::to_string(h.payload_bytes) +
                         " != original " + std::to_string(h.original_bytes));
  if (free_.empty()) return Status::Ok();  // full: the caller retries later
  int s = free_.back();
  free_.pop_back();
  Op& op = ops_[s];
  op = Op{};
  op.in_use = true;
  op.header = h;
  op.data = static_cast<const uint8_t*>(item.data);
  op.reg = item.reg;
  unmatched_.push_back(s);
  *slot = s;
  return progress();
}

Status IbSendComm::progress() {
  if (!error_.ok()) return error_;
  if (Status s = poll(); !s.ok()) return s;
  return match();
}

Status IbSendComm::poll() {
  ibv_wc wc[16];
  for (;;) {
    int n = ep_.poll(wc, 16);
    if (n < 0) return fail(Status::System("ibv_poll_cq on " + ep_.describe() + " failed"));
    for (int i = 0; i < n; ++i) {
      const WrKind kind = wr_kind(wc[i].wr_id);
      const int slot = wr_slot(wc[i].wr_id);
      if (wc[i].status != IBV_WC_SUCCESS) {
        std::string what = kind == WrKind::kRecv
                               ? "the receive of a clear-to-send"
                               : "an RDMA write of a " + msg_str(ops_[slot].header);
        return fail(ep_.wc_error(wc[i], what));
      }
      if (kind == WrKind::kRecv) {
        if (Status s = on_cts(wc[i]); !s.ok()) return fail(s);
        continue;
      }
      if (kind != WrKind::kWrite || slot >= kSlots || wr_qp(wc[i].wr_id) >= ep_.nqps())
        return fail(
            Status::Internal("unexpected work completion id " + std::to_string(wc[i].wr_id)));
      --sq_used_[wr_qp(wc[i].wr_id)];
      Op& op = ops_[slot];
      if (--op.pending == 0 && op.matched) {
        op.done = true;
        op.mr.reset();
        if (!op.in_use) free_.push_back(slot);  // released before it completed
      }
    }
    if (n < 16) return Status::Ok();
  }
}

Status IbSendComm::on_cts(const ibv_wc& wc) {
  if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || (wc.wc_flags & IBV_WC_WITH_IMM) == 0)
    return Status::Remote("unexpected receive (opcode " + std::to_string(wc.opcode) + ") from " +
                          ep_.describe());
  Imm m;
  std::string bad = decode_imm(ntohl(wc.imm_data), &m);
  if (bad.empty() && (m.kind != ImmKind::kCts || m.seq_bits != (arrived_seq_ & kImmCtsSeqMask)))
    bad = "immediate out of sequence: clear-to-send " + std::to_string(arrived_seq_) + " was due";
  FifoSlot& fs = fifo_[arrived_seq_ % kMaxRequests];
  if (bad.empty() && fs.arrived) bad = "the receiver overran the clear-to-send FIFO";
  if (bad.empty()) bad = parse_cts(ctrl_->fifo[arrived_seq_ % kMaxRequests], arrived_seq_, &fs.cts);
  if (!bad.empty())
    return Status::Remote("corrupt clear-to-send from " + ep_.describe() + ": " + bad);
  fs.arrived = true;
  fs.used = {};
  fs.used_n = 0;
  ++arrived_seq_;
  return ep_.post_recvs(wr_qp(wc.wr_id), 1);
}

Status IbSendComm::match() {
  while (!unmatched_.empty() && error_.ok()) {
    const int s = unmatched_.front();
    FifoSlot& fs = fifo_[next_seq_ % kMaxRequests];
    if (!fs.arrived) break;
    const MessageHeader& h = ops_[s].header;
    int it = -1, first_free = -1;
    std::string tags;
    for (int i = 0; i < fs.cts.n; ++i) {
      if (i > 0) tags += ',';
      tags += std::to_string(fs.cts.items[i].tag);
      if (fs.used[i]) continue;
      if (first_free < 0) first_free = i;
      if (it < 0 && fs.cts.items[i].tag == h.tag) it = i;
    }
    if (it < 0)
      return reject(
          s, fs, first_free, RejectReason::kNoSuchTag,
          Status::Remote(msg_str(h) + " matches no tag of the receive posted by the peer (tags {" +
                         tags + "}), " + ep_.describe()));
    bool posted = false;
    if (Status st = write_message(s, fs, it, &posted); !st.ok()) return st;
    if (!posted) break;  // send queues full: completions will make room
    unmatched_.pop_front();
  }
  return error_;
}

Status IbSendComm::write_message(int slot, FifoSlot& fs, int it, bool* posted) {
  Op& op = ops_[slot];
  const CtsItem& ci = fs.cts.items[it];
  const MessageHeader& h = op.header;
  const bool frame = h.kind == PayloadKind::kFrame;
  const uint64_t payload = h.payload_bytes;
  if (h.original_bytes > ci.capacity || (frame && payload > ci.staging_capacity))
    return reject(slot, fs, it, RejectReason::kTooLarge,
                  Status::Usage(msg_str(h) + " is larger than the receive the peer posted: " +
                                std::to_string(ci.capacity) + " bytes" +
                                (frame ? ", staging " + std::to_string(ci.staging_capacity) : "") +
                                " (" + ep_.describe() + ")"));
  // Parts: one per QP for large payloads, in 4 KiB-aligned shares.
  const int nq = ep_.nqps();
  uint64_t per = payload;
  int parts = 1;
  if (nq > 1 && payload >= 2 * kPartMin) {
    uint64_t p = std::min<uint64_t>(static_cast<uint64_t>(nq), payload / kPartMin);
    per = (payload + p - 1) / p;
    per = (per + kPartAlign - 1) / kPartAlign * kPartAlign;
    parts = static_cast<int>((payload + per - 1) / per);
  }
  const uint64_t maxw = ep_.max_write_bytes();
  std::array<int, kMaxQpsPerConn> need{};
  for (int q = 0; q < parts; ++q) {
    uint64_t len = payload == 0 ? 0 : std::min(per, payload - per * static_cast<uint64_t>(q));
    need[q] = static_cast<int>((len + maxw - 1) / maxw) + (q == 0 ? 1 : 0);
    if (sq_used_[q] + need[q] > ep_.send_depth()) return Status::Ok();  // *posted stays false
  }
  if (payload > 0) {
    if (Status s = ep_.registration_for(op.data, payload, op.reg, &op.mr); !s.ok()) return fail(s);
  }
  Record rec{frame ? RecordKind::kFrame : RecordKind::kRaw,
             it,
             parts,
             RejectReason::kNone,
             h.tag,
             static_cast<uint32_t>(fs.cts.seq),
             payload,
             h.original_bytes};
  encode_record(rec, ctrl_->records[slot]);
  const uint32_t imm = htonl(imm_data(fs.cts.rslot, it, parts, fs.cts.seq));
  const uint64_t dst = frame ? ci.staging_addr : ci.addr;
  const uint32_t rkey = frame ? ci.staging_rkey : ci.rkey;
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  for (int q = 0; q < parts; ++q) {
    wrs.assign(static_cast<std::size_t>(need[q]), ibv_send_wr{});
    sges.assign(static_cast<std::size_t>(need[q]), ibv_sge{});
    uint64_t off = per * static_cast<uint64_t>(q);
    const uint64_t end = payload == 0 ? 0 : std::min(payload, off + per);
    for (int w = 0; w < need[q]; ++w) {
      ibv_send_wr& wr = wrs[w];
      ibv_sge& sge = sges[w];
      wr.wr_id = wr_id(WrKind::kWrite, q, slot);
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.opcode = IBV_WR_RDMA_WRITE;
      if (q == 0 && w == need[q] - 1) {  // the record, last on QP 0
        sge = {reinterpret_cast<uintptr_t>(ctrl_->records[slot]), kRecordBytes, ctrl_mr_->lkey};
        wr.wr.rdma.remote_addr = fs.cts.header_addr + static_cast<uint64_t>(it) * kRecordBytes;
        wr.wr.rdma.rkey = fs.cts.header_rkey;
      } else {
        uint64_t len = std::min(maxw, end - off);
        sge = {reinterpret_cast<uintptr_t>(op.data + off), static_cast<uint32_t>(len),
               op.mr->lkey()};
        wr.wr.rdma.remote_addr = dst + off;
        wr.wr.rdma.rkey = rkey;
        off += len;
      }
      if (w == need[q] - 1) {
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.imm_data = imm;
      } else {
        wr.next = &wrs[w + 1];
      }
    }
    if (Status s = ep_.post_send(q, wrs.data()); !s.ok()) return fail(s);
    sq_used_[q] += need[q];
    op.pending += need[q];
  }
  op.matched = true;
  fs.used[it] = true;
  if (++fs.used_n == fs.cts.n) {
    fs.arrived = false;
    ++next_seq_;
  }
  *posted = true;
  return Status::Ok();
}

Status IbSendComm::reject(int slot, FifoSlot& fs, int it, RejectReason why, Status err) {
  // Tell the receiver, so its receive fails too instead of waiting; then fail this comm.
  const MessageHeader& h = ops_[slot].header;
  if (it >= 0 && sq_used_[0] < ep_.send_depth()) {
    Record rec{RecordKind::kRejected,
               it,
               1,
               why,
               h.tag,
               static_cast<uint32_t>(fs.cts.seq),
               h.payload_bytes,
               h.original_bytes};
    encode_record(rec, ctrl_->records[slot]);
    ibv_sge sge{reinterpret_cast<uintptr_t>(ctrl_->records[slot]), kRecordBytes, ctrl_mr_->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id(WrKind::kWrite, 0, slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(imm_data(fs.cts.rslot, it, 1, fs.cts.seq));
    wr.wr.rdma.remote_addr = fs.cts.header_addr + static_cast<uint64_t>(it) * kRecordBytes;
    wr.wr.rdma.rkey = fs.cts.header_rkey;
    if (ep_.post_send(0, &wr).ok()) {
      ++sq_used_[0];
      ++ops_[slot].pending;
    }
  }
  return fail(std::move(err));
}

Status IbSendComm::test(int slot, bool* done) {
  *done = false;
  if (slot < 0 || slot >= kSlots || !ops_[slot].in_use)
    return Status::Usage("test: unknown send request slot " + std::to_string(slot));
  Op& op = ops_[slot];
  if (!op.done) {
    if (Status s = progress(); !s.ok()) return s;
    if (!op.done) {
      if (Status gone = ep_.check_peer(); !gone.ok()) {
        if (Status s = progress(); !s.ok()) return s;
        if (!op.done) return fail(gone);
      }
    }
  }
  *done = op.done;
  return Status::Ok();
}

void IbSendComm::release(int slot) {
  if (slot < 0 || slot >= kSlots || !ops_[slot].in_use) return;
  Op& op = ops_[slot];
  op.in_use = false;
  auto it = std::find(unmatched_.begin(), unmatched_.end(), slot);
  if (it != unmatched_.end()) unmatched_.erase(it);
  // Writes still in flight keep the slot (its record buffer) until they complete.
  if (op.pending == 0) free_.push_back(slot);
}

}  // namespace squeeze::transport::ib

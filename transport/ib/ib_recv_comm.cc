#include "transport/ib/ib_recv_comm.h"

#include <arpa/inet.h>

#include "transport/stall_watch.h"

namespace squeeze::transport::ib {

namespace {
constexpr int kCtsDepth = kMaxRequests + 8;
constexpr int kDataCredits = kMaxRequests * kMaxRecvs + 8;  // one immediate per item and QP
constexpr uint64_t kStagingAlign = 64 * 1024;
}  // namespace

Status IbRecvComm::create(const ConnInfo& sender) {
  const bool flush = ep_.dev().props.force_flush;
  if (Status s = ep_.create(sender.nqps, kCtsDepth, kDataCredits, flush ? kMaxRequests + 1 : 0);
      !s.ok())
    return s;
  IbDevice& d = ep_.dev();
  ctrl_mr_ = Owned<ibv_mr>(d.api.get(),
                           d.api->reg_mr(d.pd.get(), ctrl_.get(), sizeof(Control), kMrAccess));
  if (!ctrl_mr_)
    return Status::System("ibv_reg_mr of the receive control region on " + d.name + ": " +
                          verbs_error(-1));
  for (int q = 0; q < ep_.nqps(); ++q)
    if (Status s = ep_.post_recvs(q, kDataCredits); !s.ok()) return s;
  if (flush) {
    if (Status s = ep_.create_loopback(&flush_qp_); !s.ok()) return s;
  }
  fifo_addr_ = sender.fifo_addr;
  fifo_rkey_ = sender.fifo_rkey;
  for (int i = kMaxRequests - 1; i >= 0; --i) free_.push_back(i);
  return ep_.connect(sender);
}

Status IbRecvComm::staging_for(int slot, int item, uint64_t need, Staging** out) {
  Staging& st = staging_[slot][item];
  if (st.cap < need) {
    IbDevice& d = ep_.dev();
    const uint64_t cap = (need + kStagingAlign - 1) / kStagingAlign * kStagingAlign;
    st.mr.reset();
    st.buf.reset(new (std::nothrow) uint8_t[cap]);
    st.cap = 0;
    if (!st.buf)
      return Status::System("out of memory for " + std::to_string(cap) +
                            " bytes of receive staging");
    st.mr =
        Owned<ibv_mr>(d.api.get(), d.api->reg_mr(d.pd.get(), st.buf.get(), cap,
                                                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
    if (!st.mr)
      return Status::System("ibv_reg_mr of " + std::to_string(cap) + " bytes of staging on " +
                            d.name + ": " + verbs_error(-1));
    st.cap = cap;
  }
  *out = &st;
  return Status::Ok();
}

Status IbRecvComm::post(std::span<const RecvItem> items, int* slot) {
  *slot = -1;
  if (!error_.ok()) return error_;
  if (items.empty() || items.size() > kMaxRecvs)
    return Status::Usage("irecv: n=" + std::to_string(items.size()) + " outside [1, " +
                         std::to_string(kMaxRecvs) + "]");
  if (free_.empty() || cts_in_flight_ >= ep_.send_depth()) return Status::Ok();  // full
  const int s = free_.back();
  Op& op = ops_[s];
  op = Op{};
  Cts cts;
  cts.n = static_cast<int>(items.size());
  cts.rslot = s;
  cts.seq = next_seq_;
  cts.header_addr = reinterpret_cast<uintptr_t>(ctrl_->records[s]);
  cts.header_rkey = ctrl_mr_->rkey;
  for (int i = 0; i < cts.n; ++i) {
    const RecvItem& it = items[i];
    if (it.capacity > 0 && it.data == nullptr)
      return Status::Usage("irecv: item " + std::to_string(i) + " has a null buffer of " +
                           std::to_string(it.capacity) + " bytes");
    op.items[i] = it;
    CtsItem& ci = cts.items[i];
    ci.tag = it.tag;
    ci.capacity = it.capacity;
    if (it.capacity > 0) {
      if (Status st = ep_.registration_for(it.data, it.capacity, it.reg, &op.mrs[i]); !st.ok())
        return st;
      ci.addr = reinterpret_cast<uintptr_t>(it.data);
      ci.rkey = op.mrs[i]->rkey();
    }
    Staging* st = nullptr;
    if (Status e = staging_for(s, i, it.capacity + kFrameSlack, &st); !e.ok()) return e;
    ci.staging_addr = reinterpret_cast<uintptr_t>(st->buf.get());
    ci.staging_capacity = st->cap;
    ci.staging_rkey = st->mr->rkey;
  }
  encode_cts(cts, ctrl_->cts[s]);
  ibv_sge sge{reinterpret_cast<uintptr_t>(ctrl_->cts[s]), static_cast<uint32_t>(kCtsBytes),
              ctrl_mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id(WrKind::kCts, 0, s);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(imm_cts(next_seq_));
  wr.wr.rdma.remote_addr = fifo_addr_ + (next_seq_ % kMaxRequests) * kCtsBytes;
  wr.wr.rdma.rkey = fifo_rkey_;
  if (Status st = ep_.post_send(0, &wr); !st.ok()) return fail(st);
  ++cts_in_flight_;
  free_.pop_back();
  op.in_use = true;
  op.n = cts.n;
  op.seq = next_seq_++;
  *slot = s;
  return progress();
}

Status IbRecvComm::progress() {
  if (!error_.ok()) return error_;
  ibv_wc wc[16];
  for (;;) {
    int n = ep_.poll(wc, 16);
    if (n < 0) return fail(Status::System("ibv_poll_cq on " + ep_.describe() + " failed"));
    for (int i = 0; i < n; ++i) {
      const WrKind kind = wr_kind(wc[i].wr_id);
      if (wc[i].status != IBV_WC_SUCCESS) {
        const char* what = kind == WrKind::kRecv  ? "the receive of a message"
                           : kind == WrKind::kCts ? "the RDMA write of a clear-to-send"
                                                  : "a flush read";
        return fail(ep_.wc_error(wc[i], what));
      }
      if (kind == WrKind::kRecv) {
        if (Status s = on_data(wc[i]); !s.ok()) return fail(s);
      } else if (kind == WrKind::kCts) {
        --cts_in_flight_;
      } else if (kind == WrKind::kFlush && wr_slot(wc[i].wr_id) < kMaxRequests) {
        flushes_[wr_slot(wc[i].wr_id)].done = true;
      } else {
        return fail(
            Status::Internal("unexpected work completion id " + std::to_string(wc[i].wr_id)));
      }
    }
    if (n < 16) return Status::Ok();
  }
}

Status IbRecvComm::on_data(const ibv_wc& wc) {
  if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || (wc.wc_flags & IBV_WC_WITH_IMM) == 0)
    return Status::Remote("unexpected receive (opcode " + std::to_string(wc.opcode) + ") from " +
                          ep_.describe());
  Imm m;
  std::string bad = decode_imm(ntohl(wc.imm_data), &m);
  Op& op = ops_[m.rslot];
  if (bad.empty() && m.kind != ImmKind::kData)
    bad = "a clear-to-send immediate sent to the receiver";
  if (bad.empty() && (!op.in_use || (op.seq & kImmDataSeqMask) != m.seq_bits))
    bad = "immediate for receive slot " + std::to_string(m.rslot) +
          " that has no such receive posted";
  if (bad.empty() && (m.item >= op.n || op.done[m.item]))
    bad = "immediate for item " + std::to_string(m.item) + " not awaited";
  if (bad.empty() && op.parts_want[m.item] != 0 && op.parts_want[m.item] != m.parts)
    bad = "parts of one message disagree (" + std::to_string(m.parts) + " vs " +
          std::to_string(op.parts_want[m.item]) + ")";
  if (!bad.empty()) return Status::Remote("corrupt completion from " + ep_.describe() + ": " + bad);
  if (Status s = ep_.post_recvs(wr_qp(wc.wr_id), 1); !s.ok()) return s;
  op.parts_want[m.item] = m.parts;
  if (++op.parts_seen[m.item] < m.parts) {
    op.part_at[m.item] = std::chrono::steady_clock::now();  // progress: the stall clock restarts
    return Status::Ok();
  }
  RecordExpect want{m.item,
                    m.parts,
                    static_cast<uint32_t>(op.seq),
                    op.items[m.item].tag,
                    op.items[m.item].capacity,
                    staging_[m.rslot][m.item].cap};
  bad = parse_record(ctrl_->records[m.rslot][m.item], want, &op.headers[m.item]);
  if (!bad.empty()) return Status::Remote(bad + " (" + ep_.describe() + ")");
  op.done[m.item] = true;
  if (++op.filled == op.n && op.abandoned) {
    op = Op{};
    free_.push_back(m.rslot);
  }
  return Status::Ok();
}

Status IbRecvComm::test(int slot, bool* done, std::span<Received> out) {
  *done = false;
  if (slot < 0 || slot >= kMaxRequests || !ops_[slot].in_use || ops_[slot].abandoned)
    return Status::Usage("test: unknown receive request slot " + std::to_string(slot));
  Op& op = ops_[slot];
  if (op.filled < op.n) {
    if (Status s = progress(); !s.ok()) return s;
    if (op.filled < op.n) {
      if (Status gone = ep_.check_peer(); !gone.ok()) {
        if (Status s = progress(); !s.ok()) return s;
        if (op.filled < op.n) return fail(gone);
      }
      if (Status s = check_stall(op); !s.ok()) return fail(s);
      return Status::Ok();
    }
  }
  for (int i = 0; i < op.n && i < static_cast<int>(out.size()); ++i) {
    out[i].header = op.headers[i];
    out[i].staged = {};
    if (op.headers[i].kind == PayloadKind::kFrame)
      out[i].staged = {staging_[slot][i].buf.get(),
                       static_cast<std::size_t>(op.headers[i].payload_bytes)};
  }
  *done = true;
  return Status::Ok();
}

Status IbRecvComm::check_stall(const Op& op) const {
  if (stall_timeout_.count() <= 0) return Status::Ok();
  const auto now = std::chrono::steady_clock::now();
  for (int i = 0; i < op.n; ++i) {
    if (op.done[i] || op.parts_seen[i] == 0 || now - op.part_at[i] < stall_timeout_) continue;
    const int seen = op.parts_seen[i], want = op.parts_want[i];
    return stall_error(ep_.describe(), std::chrono::duration<double>(now - op.part_at[i]).count(),
                       "no further part",
                       std::to_string(want - seen) + " of " + std::to_string(want) +
                           " parts missing of a message for a " +
                           std::to_string(op.items[i].capacity) + "-byte receive (tag " +
                           std::to_string(op.items[i].tag) + ")");
  }
  return Status::Ok();
}

void IbRecvComm::release(int slot) {
  if (slot < 0 || slot >= kMaxRequests || !ops_[slot].in_use || ops_[slot].abandoned) return;
  Op& op = ops_[slot];
  if (op.filled < op.n && error_.ok()) {
    op.abandoned = true;  // the sender may still write into it: keep the slot until it has
    return;
  }
  op = Op{};
  free_.push_back(slot);
}

Status IbRecvComm::flush(std::span<const RecvItem> items, int* slot) {
  *slot = kNothingToFlush;
  if (!flush_qp_) return Status::Ok();
  if (!error_.ok()) return error_;
  // Like NCCL: one read, of the last GPU buffer that received bytes, orders all prior writes.
  const RecvItem* last = nullptr;
  std::shared_ptr<MrEntry> mr;
  for (const RecvItem& it : items) {
    const auto* r = dynamic_cast<const IbRegistration*>(it.reg);
    if (it.data != nullptr && it.capacity > 0 && r != nullptr && r->entry()->ptr_type == kPtrCuda &&
        r->entry()->covers(it.data, 1)) {
      last = &it;
      mr = r->entry();
    }
  }
  if (last == nullptr) return Status::Ok();  // host memory: nothing to flush
  int f = 0;
  while (f < kMaxRequests && flushes_[f].in_use) ++f;
  if (f == kMaxRequests) {
    *slot = -1;  // full: try again later
    return Status::Ok();
  }
  ibv_sge sge{reinterpret_cast<uintptr_t>(ctrl_->flush_sink), 1, ctrl_mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id(WrKind::kFlush, 0, f);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(last->data);
  wr.wr.rdma.rkey = mr->rkey();
  ibv_send_wr* bad = nullptr;
  if (int rc = ep_.dev().api->post_send(flush_qp_.get(), &wr, &bad); rc != 0)
    return fail(
        Status::System("ibv_post_send (flush read) on " + ep_.describe() + ": " + verbs_error(rc)));
  flushes_[f] = FlushOp{true, false};
  *slot = kFlushBase + f;
  return Status::Ok();
}

Status IbRecvComm::test_flush(int slot, bool* done) {
  *done = false;
  if (slot < kFlushBase || slot >= kFlushBase + kMaxRequests || !flushes_[slot - kFlushBase].in_use)
    return Status::Usage("test_flush: unknown flush slot " + std::to_string(slot));
  FlushOp& f = flushes_[slot - kFlushBase];
  Status s = f.done ? Status::Ok() : progress();
  if (s.ok() && !f.done) return s;
  // Done or failed: the slot is free again (after a failure the comm takes no new flushes).
  *done = s.ok();
  f = FlushOp{};
  return s;
}

}  // namespace squeeze::transport::ib

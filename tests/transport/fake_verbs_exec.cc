// The data path of the fake verbs provider: posting, executing work requests in pieces
// with every access checked against registered MRs, completions, the error state.
#include <cerrno>
#include <cstring>

#include "tests/transport/fake_verbs_world.h"

namespace squeeze::transport::ib::fake {

namespace {

// Copies n bytes between the scatter/gather list (starting `off` bytes into it) and `other`.
void copy_sges(const std::vector<ibv_sge>& sges, uint64_t off, uint8_t* other, uint64_t n,
               bool into_sges) {
  for (const ibv_sge& s : sges) {
    if (n == 0) return;
    if (off >= s.length) {
      off -= s.length;
      continue;
    }
    uint64_t take = std::min<uint64_t>(s.length - off, n);
    auto* p = reinterpret_cast<uint8_t*>(s.addr + off);
    if (into_sges)
      std::memmove(p, other, take);
    else
      std::memmove(other, p, take);
    other += take;
    n -= take;
    off = 0;
  }
}

bool same_gid(const ibv_gid& a, const ibv_gid& b) { return std::memcmp(a.raw, b.raw, 16) == 0; }
}  // namespace

bool FakeVerbs::World::gid_of(const FDevice& d, int port, int index, ibv_gid* out) const {
  const FakePort& p = d.cfg.ports[static_cast<std::size_t>(port - 1)];
  const int len = p.link_layer == IBV_LINK_LAYER_ETHERNET ? 4 : 1;
  if (index < 0 || index >= len) return false;
  std::memset(out->raw, 0, 16);
  std::size_t dev_index = 0;
  while (dev_index < devices.size() && devices[dev_index].get() != &d) ++dev_index;
  if (index == 0) {  // link-local: fe80::<guid with the port in the last byte>
    out->raw[0] = 0xfe;
    out->raw[1] = 0x80;
    for (int i = 0; i < 8; ++i) out->raw[8 + i] = static_cast<uint8_t>(d.cfg.guid >> (56 - 8 * i));
    out->raw[15] = static_cast<uint8_t>(out->raw[15] ^ port);
  } else if (index == 1) {  // RoCE v2 style ::ffff:10.<device>.<port>.1
    out->raw[10] = out->raw[11] = 0xff;
    out->raw[12] = 10;
    out->raw[13] = static_cast<uint8_t>(dev_index);
    out->raw[14] = static_cast<uint8_t>(port);
    out->raw[15] = 1;
  }  // further entries are empty (zero)
  return true;
}

void FakeVerbs::World::push(FCq* cq, const Cqe& e) {
  if (cq->q.size() >= static_cast<std::size_t>(cq->cqe))
    violations.push_back("completion queue overrun (" + std::to_string(cq->cqe) + " entries)");
  cq->q.push_back(e);
}

void FakeVerbs::World::to_error(FQp& q) {
  q.qp.state = IBV_QPS_ERR;
  for (const SendWr& w : q.sq) {  // flushed requests always complete, signaled or not
    Cqe e;
    e.wc.wr_id = w.wr_id;
    e.wc.status = IBV_WC_WR_FLUSH_ERR;
    e.wc.qp_num = q.qp.qp_num;
    e.is_send = true;
    e.retire = w.index + 1;
    push(q.scq, e);
  }
  q.sq.clear();
  for (const RecvWr& r : q.rq) {
    Cqe e;
    e.wc.wr_id = r.wr_id;
    e.wc.status = IBV_WC_WR_FLUSH_ERR;
    e.wc.opcode = IBV_WC_RECV;
    e.wc.qp_num = q.qp.qp_num;
    push(q.rcq, e);
  }
  q.rq.clear();
}

void FakeVerbs::World::fail_wr(FQp& q, ibv_wc_status st) {
  const SendWr& w = q.sq.front();
  Cqe e;
  e.wc.wr_id = w.wr_id;
  e.wc.status = st;
  e.wc.qp_num = q.qp.qp_num;
  e.wc.vendor_err = 0x5a;
  e.is_send = true;
  e.retire = w.index + 1;
  push(q.scq, e);
  q.sq.pop_front();
  to_error(q);
}

FMr* FakeVerbs::World::find_mr(FPd* pd, uint32_t key, bool remote, uint64_t addr, uint64_t len,
                               int need) {
  for (auto& [p, m] : mrs) {
    if ((remote ? m->mr.rkey : m->mr.lkey) != key || m->pd != pd) continue;
    if (addr < m->addr || addr - m->addr > m->len || len > m->len - (addr - m->addr))
      return nullptr;
    return (m->access & need) == need ? m.get() : nullptr;
  }
  return nullptr;
}

// One step of the oldest work request of QP `i`: checks, then up to `piece` bytes moved.
bool FakeVerbs::World::step(FQp& i) {
  if (i.sq.empty() || i.dead() || i.held) return false;
  if (i.qp.state == IBV_QPS_ERR) {
    fail_wr(i, IBV_WC_WR_FLUSH_ERR);
    return true;
  }
  if (i.qp.state != IBV_QPS_RTS) return false;
  SendWr& w = i.sq.front();
  auto it = qps.find(i.dest_qpn);
  FQp* r = it == qps.end() ? nullptr : it->second.get();
  bool routed = r != nullptr && !r->dead() &&
                (r->qp.state == IBV_QPS_RTR || r->qp.state == IBV_QPS_RTS) &&
                r->dest_qpn == i.qp.qp_num && i.sq_psn == r->rq_psn;
  if (routed) {  // the address vector must name the responder's port
    const FDevice& rd = *r->dev();
    if (i.ah.is_global) {
      ibv_gid g{};
      bool found = false;
      for (int k = 0; k < 4 && !found; ++k)
        found = gid_of(rd, r->port, k, &g) && same_gid(g, i.ah.grh.dgid);
      routed = found;
    } else {
      routed = rd.cfg.ports[r->port - 1].link_layer != IBV_LINK_LAYER_ETHERNET &&
               rd.lids[r->port - 1] == i.ah.dlid;
    }
  }
  if (!routed) {
    fail_wr(i, IBV_WC_RETRY_EXC_ERR);
    return true;
  }
  const bool read = w.opcode == IBV_WR_RDMA_READ;
  if (w.total > i.dev()->cfg.ports[i.port - 1].max_msg_sz) {
    fail_wr(i, IBV_WC_LOC_LEN_ERR);
    return true;
  }
  for (const ibv_sge& s : w.sges) {
    if (s.length > 0 && find_mr(i.pd, s.lkey, false, s.addr, s.length,
                                read ? IBV_ACCESS_LOCAL_WRITE : 0) == nullptr) {
      fail_wr(i, IBV_WC_LOC_PROT_ERR);
      return true;
    }
  }
  const int need = read ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
  bool bad =
      (r->access & need) == 0 || (read && (i.max_rd_atomic < 1 || r->max_dest_rd_atomic < 1));
  if (!w.started && corrupt_rkey) {
    corrupt_rkey = false;
    bad = true;
  }
  if (!bad && w.total > 0)
    bad = find_mr(r->pd, w.rkey, true, w.remote_addr, w.total, need) == nullptr;
  if (bad) {
    fail_wr(i, IBV_WC_REM_ACCESS_ERR);
    if (r != &i) to_error(*r);
    return true;
  }
  if (w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM && r->rq.empty())
    return false;  // receiver not ready: retry
  w.started = true;
  const uint64_t n = std::min<uint64_t>(piece, w.total - w.done);
  auto* remote = reinterpret_cast<uint8_t*>(w.remote_addr + w.done);
  copy_sges(w.sges, w.done, remote, n, read);
  w.done += n;
  if (w.done < w.total) return true;

  stats.bytes += w.total;
  if (w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
    ++stats.write_imms;
    Cqe e;
    e.wc.wr_id = r->rq.front().wr_id;
    r->rq.pop_front();
    e.wc.status = IBV_WC_SUCCESS;
    e.wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
    e.wc.wc_flags = IBV_WC_WITH_IMM;
    e.wc.imm_data = w.imm;
    e.wc.byte_len = static_cast<uint32_t>(w.total);
    e.wc.qp_num = r->qp.qp_num;
    e.wc.src_qp = i.qp.qp_num;
    push(r->rcq, e);
  } else {
    ++(read ? stats.reads : stats.writes);
  }
  if (w.signaled || i.sig_all) {
    Cqe e;
    e.wc.wr_id = w.wr_id;
    e.wc.status = IBV_WC_SUCCESS;
    e.wc.opcode = read ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
    e.wc.byte_len = static_cast<uint32_t>(w.total);
    e.wc.qp_num = i.qp.qp_num;
    e.is_send = true;
    e.retire = w.index + 1;
    push(i.scq, e);
  }
  i.sq.pop_front();
  return true;
}

void FakeVerbs::World::progress() {
  std::vector<FQp*> active;
  for (auto& [n, q] : qps)
    if (!q->sq.empty()) active.push_back(q.get());
  if (active.empty()) return;
  const std::size_t start = rr++ % active.size();
  for (std::size_t k = 0; k < active.size(); ++k) step(*active[(start + k) % active.size()]);
}

int exec_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  auto* w = world();
  Lock l(w->mu);
  FQp& q = *qp_of(qp);
  for (ibv_send_wr* p = wr; p != nullptr; p = p->next) {
    *bad = p;
    const ibv_qp_state st = q.qp.state;
    if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR) return errno = EINVAL;
    if (p->opcode != IBV_WR_RDMA_WRITE && p->opcode != IBV_WR_RDMA_WRITE_WITH_IMM &&
        p->opcode != IBV_WR_RDMA_READ)
      return errno = EINVAL;
    if ((p->send_flags & IBV_SEND_INLINE) != 0 || p->num_sge < 0 ||
        static_cast<uint32_t>(p->num_sge) > q.cap.max_send_sge)
      return errno = EINVAL;
    if (q.posted - q.retired >= q.cap.max_send_wr) return errno = ENOMEM;
    SendWr s;
    s.wr_id = p->wr_id;
    s.opcode = p->opcode;
    s.signaled = (p->send_flags & IBV_SEND_SIGNALED) != 0;
    s.imm = p->imm_data;
    s.remote_addr = p->wr.rdma.remote_addr;
    s.rkey = p->wr.rdma.rkey;
    for (int k = 0; k < p->num_sge; ++k) {
      s.sges.push_back(p->sg_list[k]);
      s.total += p->sg_list[k].length;
    }
    s.index = q.posted++;
    q.sq.push_back(std::move(s));
  }
  *bad = nullptr;
  return 0;
}

int exec_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  auto* w = world();
  Lock l(w->mu);
  FQp& q = *qp_of(qp);
  for (ibv_recv_wr* p = wr; p != nullptr; p = p->next) {
    *bad = p;
    if (q.qp.state == IBV_QPS_RESET || p->num_sge < 0 ||
        static_cast<uint32_t>(p->num_sge) > q.cap.max_recv_sge)
      return errno = EINVAL;
    if (q.rq.size() >= q.cap.max_recv_wr) return errno = ENOMEM;
    q.rq.push_back(RecvWr{p->wr_id});
    if (q.qp.state == IBV_QPS_ERR) w->to_error(q);  // flushed at once
  }
  *bad = nullptr;
  return 0;
}

int exec_poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
  auto* w = world();
  Lock l(w->mu);
  w->progress();
  FCq& q = *reinterpret_cast<FCq*>(cq);
  int k = 0;
  while (k < n && !q.q.empty()) {
    const Cqe& e = q.q.front();
    wc[k++] = e.wc;
    if (e.is_send) {
      auto it = w->qps.find(e.wc.qp_num);
      if (it != w->qps.end() && it->second->retired < e.retire) it->second->retired = e.retire;
    }
    q.q.pop_front();
  }
  return k;
}

}  // namespace squeeze::transport::ib::fake

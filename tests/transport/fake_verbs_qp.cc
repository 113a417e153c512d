// The queue pairs of the fake verbs provider: creation with its limits, the RC state machine
// RESET -> INIT -> RTR -> RTS (required attributes checked, any state -> ERR or RESET), and
// destruction.
#include <cerrno>

#include "tests/transport/fake_verbs_world.h"

namespace squeeze::transport::ib::fake {

ibv_qp* fake_create_qp(ibv_pd* pd, ibv_qp_init_attr* a) {
  auto* w = world();
  Lock l(w->mu);
  FPd* p = pd_of(pd);
  if (a->qp_type != IBV_QPT_RC || a->send_cq == nullptr || a->recv_cq == nullptr)
    return fail_null<ibv_qp>(EINVAL);
  if (cq_of(a->send_cq)->ctx != p->ctx || cq_of(a->recv_cq)->ctx != p->ctx)
    return fail_null<ibv_qp>(EINVAL);
  const int max_wr = p->ctx->dev->cfg.max_qp_wr;
  if (a->cap.max_send_wr > static_cast<uint32_t>(max_wr) ||
      a->cap.max_recv_wr > static_cast<uint32_t>(max_wr) || a->cap.max_send_sge > 30 ||
      a->cap.max_recv_sge > 30)
    return fail_null<ibv_qp>(EINVAL);
  auto q = std::make_unique<FQp>();
  q->pd = p;
  q->scq = cq_of(a->send_cq);
  q->rcq = cq_of(a->recv_cq);
  q->cap = a->cap;
  q->cap.max_inline_data = 0;  // inline sends are not modelled
  a->cap.max_inline_data = 0;
  q->sig_all = a->sq_sig_all != 0;
  q->qp.context = pd->context;
  q->qp.pd = pd;
  q->qp.send_cq = a->send_cq;
  q->qp.recv_cq = a->recv_cq;
  q->qp.qp_type = IBV_QPT_RC;
  q->qp.state = IBV_QPS_RESET;
  q->qp.qp_num = w->next_qpn++ & 0xffffff;
  q->qp.handle = w->next_handle++;
  FQp* raw = q.get();
  w->qps[raw->qp.qp_num] = std::move(q);
  return &raw->qp;
}

int fake_modify_qp(ibv_qp* qp, ibv_qp_attr* a, int mask) {
  auto* w = world();
  Lock l(w->mu);
  FQp& q = *qp_of(qp);
  if (!(mask & IBV_QP_STATE)) return fail(EINVAL);
  const ibv_qp_state from = q.qp.state, to = a->qp_state;
  auto has = [&](int need) { return (mask & need) == need; };
  const FDevice& dev = *q.dev();
  if (to == IBV_QPS_ERR) {
    w->to_error(q);
    return 0;
  }
  if (to == IBV_QPS_RESET) {
    q.sq.clear();
    q.rq.clear();
    q.posted = q.retired = 0;
  } else if (from == IBV_QPS_RESET && to == IBV_QPS_INIT) {
    if (!has(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return fail(EINVAL);
    if (a->port_num < 1 || a->port_num > dev.cfg.ports.size()) return fail(EINVAL);
    q.port = a->port_num;
    q.access = static_cast<int>(a->qp_access_flags);
  } else if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
    if (!has(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      return fail(EINVAL);
    const FakePort& port = dev.cfg.ports[q.port - 1];
    if (a->path_mtu < IBV_MTU_256 || a->path_mtu > port.active_mtu || a->ah_attr.port_num != q.port)
      return fail(EINVAL);
    if (port.link_layer == IBV_LINK_LAYER_ETHERNET) {
      ibv_gid g{};
      if (!a->ah_attr.is_global || !w->gid_of(dev, q.port, a->ah_attr.grh.sgid_index, &g))
        return fail(EINVAL);
    } else if (a->ah_attr.dlid == 0) {
      return fail(EINVAL);
    }
    q.mtu = a->path_mtu;
    q.dest_qpn = a->dest_qp_num;
    q.rq_psn = a->rq_psn & 0xffffff;
    q.ah = a->ah_attr;
    q.max_dest_rd_atomic = a->max_dest_rd_atomic;
  } else if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) {
    if (!has(IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
             IBV_QP_MAX_QP_RD_ATOMIC))
      return fail(EINVAL);
    q.sq_psn = a->sq_psn & 0xffffff;
    q.max_rd_atomic = a->max_rd_atomic;
    q.timeout = a->timeout;
    q.retry_cnt = a->retry_cnt;
  } else {
    return fail(EINVAL);
  }
  q.qp.state = to;
  return 0;
}

int fake_destroy_qp(ibv_qp* qp) {
  auto* w = world();
  Lock l(w->mu);
  if (w->qps.erase(qp->qp_num) == 0) return fail(EINVAL);
  return 0;
}

}  // namespace squeeze::transport::ib::fake

#include "transport/ib/ib_endpoint.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace squeeze::transport::ib {

namespace {
uint32_t random_psn() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  return rng() & 0xffffff;
}
std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof(b), "0x%x", v);
  return b;
}
}  // namespace

Status IbEndpoint::create(int nqps, int send_depth, int recv_depth, int extra_cqe) {
  const VerbsApi& api = *dev_->api;
  const int max_wr = dev_->dev_attr.max_qp_wr > 0 ? dev_->dev_attr.max_qp_wr : 1 << 14;
  send_depth_ = std::min(send_depth, max_wr);
  recv_depth_ = std::min(recv_depth, max_wr);
  int cqe = nqps * (send_depth_ + recv_depth_) + extra_cqe;
  if (dev_->dev_attr.max_cqe > 0) cqe = std::min(cqe, dev_->dev_attr.max_cqe);
  cq_ = Owned<ibv_cq>(dev_->api.get(), api.create_cq(dev_->ctx.get(), cqe, nullptr, nullptr, 0));
  if (!cq_)
    return Status::System("ibv_create_cq(" + std::to_string(cqe) + ") on " + dev_->name + ": " +
                          verbs_error(-1));
  for (int i = 0; i < nqps; ++i) {
    ibv_qp_init_attr a{};
    a.send_cq = cq_.get();
    a.recv_cq = cq_.get();
    a.qp_type = IBV_QPT_RC;
    a.sq_sig_all = 0;
    a.cap.max_send_wr = static_cast<uint32_t>(send_depth_);
    a.cap.max_recv_wr = static_cast<uint32_t>(recv_depth_);
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    Owned<ibv_qp> qp(dev_->api.get(), api.create_qp(dev_->pd.get(), &a));
    if (!qp) return Status::System("ibv_create_qp (RC) on " + dev_->name + ": " + verbs_error(-1));
    if (Status s = to_init(qp.get(), IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ); !s.ok())
      return s;
    qps_.push_back(std::move(qp));
    psns_.push_back(random_psn());
  }
  return Status::Ok();
}

Status IbEndpoint::to_init(ibv_qp* qp, int access) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = dev_->port;
  a.qp_access_flags = static_cast<unsigned>(access);
  int rc = dev_->api->modify_qp(
      qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc != 0)
    return Status::System("QP " + hex(qp->qp_num) + " on " + dev_->name +
                          " to INIT: " + verbs_error(rc));
  return Status::Ok();
}

Status IbEndpoint::to_rtr(ibv_qp* qp, uint32_t dest_qpn, uint32_t dest_psn,
                          const ConnInfo& remote) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = static_cast<ibv_mtu>(std::min<int>(remote.mtu, dev_->port_attr.active_mtu));
  a.dest_qp_num = dest_qpn;
  a.rq_psn = dest_psn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.port_num = dev_->port;
  a.ah_attr.sl = static_cast<uint8_t>(opts_.service_level);
  if (remote.link_layer == IBV_LINK_LAYER_ETHERNET) {
    a.ah_attr.is_global = 1;
    std::memcpy(a.ah_attr.grh.dgid.raw, remote.gid.data(), 16);
    a.ah_attr.grh.sgid_index = static_cast<uint8_t>(dev_->gid_index);
    a.ah_attr.grh.hop_limit = 255;
    a.ah_attr.grh.traffic_class = static_cast<uint8_t>(opts_.traffic_class);
  } else {
    a.ah_attr.is_global = 0;
    a.ah_attr.dlid = remote.lid;
  }
  int rc =
      dev_->api->modify_qp(qp, &a,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (rc != 0)
    return Status::System("QP " + hex(qp->qp_num) + " on " + dev_->name + " to RTR towards QP " +
                          hex(dest_qpn) + ": " + verbs_error(rc));
  return Status::Ok();
}

Status IbEndpoint::to_rts(ibv_qp* qp, uint32_t psn) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = psn;
  a.timeout = static_cast<uint8_t>(opts_.timeout);
  a.retry_cnt = static_cast<uint8_t>(opts_.retry_cnt);
  a.rnr_retry = 7;  // retry forever: receives are re-posted as completions are polled
  a.max_rd_atomic = 1;
  int rc = dev_->api->modify_qp(qp, &a,
                                IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  if (rc != 0)
    return Status::System("QP " + hex(qp->qp_num) + " on " + dev_->name +
                          " to RTS: " + verbs_error(rc));
  return Status::Ok();
}

void IbEndpoint::fill_info(Role role, uint64_t nonce, ConnInfo* out) const {
  ConnInfo& c = *out;
  c.role = role;
  c.nqps = static_cast<uint8_t>(qps_.size());
  c.nonce = nonce;
  c.lid = dev_->port_attr.lid;
  c.link_layer = dev_->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET
                                                                       : IBV_LINK_LAYER_INFINIBAND;
  c.mtu = static_cast<uint8_t>(dev_->port_attr.active_mtu);
  c.port = dev_->port;
  std::memcpy(c.gid.data(), dev_->gid.raw, 16);
  for (std::size_t i = 0; i < qps_.size(); ++i) {
    c.qpn[i] = qps_[i]->qp_num;
    c.psn[i] = psns_[i];
  }
}

Status IbEndpoint::connect(const ConnInfo& remote) {
  if (remote.nqps != qps_.size())
    return Status::Remote("peer has " + std::to_string(remote.nqps) +
                          " QPs per connection, this side " + std::to_string(qps_.size()));
  for (std::size_t i = 0; i < qps_.size(); ++i) {
    if (Status s = to_rtr(qps_[i].get(), remote.qpn[i], remote.psn[i], remote); !s.ok()) return s;
    if (Status s = to_rts(qps_[i].get(), psns_[i]); !s.ok()) return s;
  }
  return Status::Ok();
}

Status IbEndpoint::create_loopback(Owned<ibv_qp>* out) {
  ibv_qp_init_attr a{};
  a.send_cq = cq_.get();
  a.recv_cq = cq_.get();
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = kMaxRequests;
  a.cap.max_recv_wr = 1;
  a.cap.max_send_sge = 1;
  a.cap.max_recv_sge = 1;
  Owned<ibv_qp> qp(dev_->api.get(), dev_->api->create_qp(dev_->pd.get(), &a));
  if (!qp)
    return Status::System("ibv_create_qp (flush loopback) on " + dev_->name + ": " +
                          verbs_error(-1));
  ConnInfo self;
  fill_info(Role::kReceiver, 0, &self);
  uint32_t psn = random_psn();
  if (Status s = to_init(qp.get(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ); !s.ok())
    return s;
  if (Status s = to_rtr(qp.get(), qp->qp_num, psn, self); !s.ok()) return s;
  if (Status s = to_rts(qp.get(), psn); !s.ok()) return s;
  *out = std::move(qp);
  return Status::Ok();
}

Status IbEndpoint::post_recvs(int qp, int count) {
  for (int i = 0; i < count; ++i) {
    ibv_recv_wr wr{};
    wr.wr_id = wr_id(WrKind::kRecv, qp, 0);
    wr.num_sge = 0;
    ibv_recv_wr* bad = nullptr;
    if (int rc = dev_->api->post_recv(qps_[qp].get(), &wr, &bad); rc != 0)
      return Status::System("ibv_post_recv on QP " + hex(qps_[qp]->qp_num) + " (" + describe() +
                            "): " + verbs_error(rc));
  }
  return Status::Ok();
}

Status IbEndpoint::post_send(int qp, ibv_send_wr* wr) {
  ibv_send_wr* bad = nullptr;
  if (int rc = dev_->api->post_send(qps_[qp].get(), wr, &bad); rc != 0)
    return Status::System("ibv_post_send on QP " + hex(qps_[qp]->qp_num) + " (" + describe() +
                          "): " + verbs_error(rc));
  return Status::Ok();
}

Status IbEndpoint::wc_error(const ibv_wc& wc, const std::string& what) const {
  std::string which;
  for (std::size_t i = 0; i < qps_.size(); ++i)
    if (qps_[i]->qp_num == wc.qp_num)
      which = " (" + std::to_string(i + 1) + " of " + std::to_string(qps_.size()) + ")";
  return Status::Remote("work completion error on QP " + hex(wc.qp_num) + which + ", " +
                        describe() + ": " + wc_status_name(wc.status) + ", vendor error " +
                        hex(wc.vendor_err) + ", during " + what);
}

Status IbEndpoint::check_peer() {
  if (!oob_.valid()) return Status::Ok();
  auto now = std::chrono::steady_clock::now();
  if (now - last_check_ < std::chrono::milliseconds(2)) return Status::Ok();
  last_check_ = now;
  char b;
  ssize_t r = ::recv(oob_.get(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
  if (r == 0)
    return Status::Remote("peer " + peer_ + " closed its connection to " + dev_->name +
                          " (process gone or comm closed)");
  if (r > 0)
    return Status::Remote("peer " + peer_ + " sent unexpected bytes on the ib control connection");
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Status::Ok();
  return Status::Remote("control connection to peer " + peer_ +
                        " failed: " + sock::errno_str(errno));
}

Status IbEndpoint::register_memory(const MemoryDesc& mem, std::unique_ptr<Registration>* reg) {
  reg->reset();
  const DeviceProps& p = dev_->props;
  if (mem.dmabuf_fd >= 0 && (p.ptr_support & kPtrDmaBuf) == 0)
    return Status::Usage(
        "regMrDmaBuf: dma-buf registration is not available on " + dev_->name +
        " (needs ibv_reg_dmabuf_mr and kernel support; SQUEEZE_IB_DMABUF=0 turns it off)");
  if (mem.ptr_type == kPtrCuda && mem.dmabuf_fd < 0 && (p.ptr_support & kPtrCuda) == 0)
    return Status::Usage(
        "regMr: GPU memory on " + dev_->name +
        " needs GPUDirect RDMA (nvidia-peermem not loaded; SQUEEZE_IB_GDR=1 forces it)");
  std::shared_ptr<MrEntry> e;
  if (Status s = dev_->cache->register_region(mem, &e); !s.ok()) return s;
  *reg = std::make_unique<IbRegistration>(dev_, dev_->cache.get(), std::move(e));
  return Status::Ok();
}

Status IbEndpoint::registration_for(const void* p, std::size_t n, const Registration* reg,
                                    std::shared_ptr<MrEntry>* out) {
  if (const auto* r = dynamic_cast<const IbRegistration*>(reg); r != nullptr) {
    if (!r->entry()->covers(p, n)) {
      char b[64];
      std::snprintf(b, sizeof(b), "%p", p);
      return Status::Usage("the registration passed with " + std::to_string(n) + " bytes at " + b +
                           " does not cover them");
    }
    *out = r->entry();
    return Status::Ok();
  }
  return dev_->cache->find_or_register(p, n, out);
}

uint64_t IbEndpoint::max_write_bytes() const {
  uint64_t m = dev_->port_attr.max_msg_sz;
  return m == 0 ? uint64_t{1} << 30 : std::min<uint64_t>(m, uint64_t{1} << 30);
}

std::string IbEndpoint::describe() const { return dev_->name + " with peer " + peer_; }

}  // namespace squeeze::transport::ib

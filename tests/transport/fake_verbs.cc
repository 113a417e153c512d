// The control path of the fake verbs provider: devices, ports, GIDs, PDs, MRs and CQs, plus
// the FakeVerbs handle (table, faults, inspection). QPs are in fake_verbs_qp.cc, the data
// path in fake_verbs_exec.cc.
#include "tests/transport/fake_verbs.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tests/transport/fake_verbs_world.h"

namespace squeeze::transport::ib::fake {

namespace {

FakeVerbs::World* g_world = nullptr;

ibv_device** get_device_list(int* num) {
  auto* w = world();
  Lock l(w->mu);
  if (w->list_errno != 0) {
    if (num) *num = 0;
    return fail_null<ibv_device*>(w->list_errno);
  }
  auto* list = new ibv_device*[w->devices.size() + 1];
  for (std::size_t i = 0; i < w->devices.size(); ++i) list[i] = &w->devices[i]->dev;
  list[w->devices.size()] = nullptr;
  if (num) *num = static_cast<int>(w->devices.size());
  w->lists.insert(list);
  return list;
}

void free_device_list(ibv_device** list) {
  auto* w = world();
  Lock l(w->mu);
  if (w->lists.erase(list) == 0) w->violations.push_back("free_device_list of an unknown list");
  delete[] list;
}

ibv_context* open_device(ibv_device* d) {
  auto* w = world();
  Lock l(w->mu);
  for (auto& dev : w->devices) {
    if (&dev->dev != d) continue;
    auto c = std::make_unique<FContext>();
    c->dev = dev.get();
    c->ctx.device = d;
    c->ctx.num_comp_vectors = 1;
    FContext* p = c.get();
    w->contexts[p] = std::move(c);
    return &p->ctx;
  }
  return fail_null<ibv_context>(ENODEV);
}

int close_device(ibv_context* c) {
  auto* w = world();
  Lock l(w->mu);
  FContext* fc = ctx_of(c);
  for (auto& [p, pd] : w->pds)
    if (pd->ctx == fc) w->violations.push_back("ibv_close_device with a live protection domain");
  for (auto& [p, cq] : w->cqs)
    if (cq->ctx == fc) w->violations.push_back("ibv_close_device with a live completion queue");
  if (w->contexts.erase(fc) == 0) return fail(EINVAL);
  return 0;
}

int query_device(ibv_context* c, ibv_device_attr* a) {
  auto* w = world();
  Lock l(w->mu);
  const FakeDevice& cfg = ctx_of(c)->dev->cfg;
  std::memset(a, 0, sizeof(*a));
  std::snprintf(a->fw_ver, sizeof(a->fw_ver), "fake-1.0");
  a->node_guid = cfg.guid;
  a->sys_image_guid = cfg.guid;
  a->max_mr_size = uint64_t{1} << 40;
  a->max_qp = 4096;
  a->max_qp_wr = cfg.max_qp_wr;
  a->max_sge = 30;
  a->max_cq = 4096;
  a->max_cqe = 1 << 20;
  a->max_mr = 1 << 16;
  a->max_pd = 1 << 10;
  a->max_qp_rd_atom = 16;
  a->max_qp_init_rd_atom = 16;
  a->phys_port_cnt = static_cast<uint8_t>(cfg.ports.size());
  return 0;
}

int query_port(ibv_context* c, uint8_t port, ibv_port_attr* a) {
  auto* w = world();
  Lock l(w->mu);
  FDevice* d = ctx_of(c)->dev;
  if (port < 1 || port > d->cfg.ports.size()) return fail(EINVAL);
  const FakePort& p = d->cfg.ports[port - 1];
  std::memset(a, 0, sizeof(*a));
  a->state = p.state;
  a->max_mtu = IBV_MTU_4096;
  a->active_mtu = p.active_mtu;
  a->gid_tbl_len = p.link_layer == IBV_LINK_LAYER_ETHERNET ? 4 : 1;
  a->max_msg_sz = p.max_msg_sz;
  a->lid = p.link_layer == IBV_LINK_LAYER_ETHERNET ? 0 : d->lids[port - 1];
  a->active_width = p.active_width;
  a->active_speed = p.active_speed;
  a->phys_state = 5;
  a->link_layer = p.link_layer;
  return 0;
}

int query_gid(ibv_context* c, uint8_t port, int index, ibv_gid* gid) {
  auto* w = world();
  Lock l(w->mu);
  FDevice* d = ctx_of(c)->dev;
  if (port < 1 || port > d->cfg.ports.size() || !w->gid_of(*d, port, index, gid))
    return fail(EINVAL);
  return 0;
}

ibv_pd* alloc_pd(ibv_context* c) {
  auto* w = world();
  Lock l(w->mu);
  auto p = std::make_unique<FPd>();
  p->ctx = ctx_of(c);
  p->pd.context = c;
  p->pd.handle = w->next_handle++;
  FPd* raw = p.get();
  w->pds[raw] = std::move(p);
  return &raw->pd;
}

int dealloc_pd(ibv_pd* pd) {
  auto* w = world();
  Lock l(w->mu);
  FPd* p = pd_of(pd);
  for (auto& [k, mr] : w->mrs)
    if (mr->pd == p) return fail(EBUSY);
  for (auto& [k, qp] : w->qps)
    if (qp->pd == p) return fail(EBUSY);
  if (w->pds.erase(p) == 0) return fail(EINVAL);
  return 0;
}

ibv_mr* make_mr(FakeVerbs::World* w, ibv_pd* pd, uintptr_t addr, std::size_t len, int access) {
  if (addr == 0 || len == 0) return fail_null<ibv_mr>(EINVAL);
  // Remote write (or atomics) without local write is invalid, as in the verbs spec.
  if ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE))
    return fail_null<ibv_mr>(EINVAL);
  auto m = std::make_unique<FMr>();
  m->pd = pd_of(pd);
  m->addr = addr;
  m->len = len;
  m->access = access;
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = reinterpret_cast<void*>(addr);
  m->mr.length = len;
  m->mr.handle = w->next_handle++;
  m->mr.lkey = w->next_key;
  m->mr.rkey = w->next_key ^ 0x00a50000u;
  w->next_key += 0x101;
  FMr* raw = m.get();
  w->mrs[raw] = std::move(m);
  ++w->stats.reg_mr_calls;
  if ((access & IBV_ACCESS_RELAXED_ORDERING) != 0) ++w->stats.relaxed_mrs;
  return &raw->mr;
}

ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t len, int access) {
  auto* w = world();
  Lock l(w->mu);
  return make_mr(w, pd, reinterpret_cast<uintptr_t>(addr), len, access);
}

ibv_mr* reg_mr_iova2(ibv_pd* pd, void* addr, std::size_t len, uint64_t iova, unsigned int access) {
  auto* w = world();
  Lock l(w->mu);
  if (iova != reinterpret_cast<uintptr_t>(addr)) return fail_null<ibv_mr>(EINVAL);  // not modelled
  ++w->stats.reg_mr_iova2_calls;
  return make_mr(w, pd, reinterpret_cast<uintptr_t>(addr), len, static_cast<int>(access));
}

ibv_mr* reg_dmabuf_mr(ibv_pd* pd, uint64_t offset, std::size_t len, uint64_t iova, int fd,
                      int access) {
  auto* w = world();
  Lock l(w->mu);
  (void)offset;
  if (!pd_of(pd)->ctx->dev->cfg.dmabuf) return fail_null<ibv_mr>(EOPNOTSUPP);
  if (fd < 0) return fail_null<ibv_mr>(EBADF);
  // No dma-buf to map here: the test passes a host address as the iova.
  return make_mr(w, pd, static_cast<uintptr_t>(iova), len, access);
}

int dereg_mr(ibv_mr* mr) {
  auto* w = world();
  Lock l(w->mu);
  if (w->mrs.erase(reinterpret_cast<FMr*>(mr)) == 0) return fail(EINVAL);
  return 0;
}

ibv_cq* create_cq(ibv_context* c, int cqe, void* user, ibv_comp_channel* ch, int vec) {
  auto* w = world();
  Lock l(w->mu);
  (void)ch;
  (void)vec;
  if (cqe < 1 || cqe > (1 << 20)) return fail_null<ibv_cq>(EINVAL);
  auto q = std::make_unique<FCq>();
  q->ctx = ctx_of(c);
  q->cqe = cqe;
  q->cq.context = c;
  q->cq.cq_context = user;
  q->cq.cqe = cqe;
  FCq* raw = q.get();
  w->cqs[raw] = std::move(q);
  return &raw->cq;
}

int destroy_cq(ibv_cq* cq) {
  auto* w = world();
  Lock l(w->mu);
  FCq* q = cq_of(cq);
  for (auto& [n, qp] : w->qps)
    if (qp->scq == q || qp->rcq == q) return fail(EBUSY);
  if (w->cqs.erase(q) == 0) return fail(EINVAL);
  return 0;
}

}  // namespace

FakeVerbs::World* world() { return g_world; }

FakeVerbs::FakeVerbs(std::vector<FakeDevice> devices) : w_(std::make_unique<World>()) {
  uint16_t lid = 1;
  for (FakeDevice& d : devices) {
    auto fd = std::make_unique<FDevice>();
    std::snprintf(fd->dev.name, sizeof(fd->dev.name), "%s", d.name.c_str());
    std::snprintf(fd->dev.dev_name, sizeof(fd->dev.dev_name), "uverbs-%s", d.name.c_str());
    fd->dev.node_type = IBV_NODE_CA;
    fd->dev.transport_type = IBV_TRANSPORT_IB;
    for (std::size_t p = 0; p < d.ports.size(); ++p) fd->lids.push_back(lid++);
    fd->cfg = std::move(d);
    w_->devices.push_back(std::move(fd));
  }
  g_world = w_.get();
}

FakeVerbs::~FakeVerbs() { g_world = nullptr; }

VerbsApi FakeVerbs::api(bool with_dmabuf, bool with_iova2) const {
  VerbsApi a;
  a.get_device_list = get_device_list;
  a.free_device_list = free_device_list;
  a.open_device = open_device;
  a.close_device = close_device;
  a.query_device = query_device;
  a.query_port = query_port;
  a.query_gid = query_gid;
  a.alloc_pd = alloc_pd;
  a.dealloc_pd = dealloc_pd;
  a.reg_mr = reg_mr;
  a.reg_dmabuf_mr = with_dmabuf ? reg_dmabuf_mr : nullptr;
  a.reg_mr_iova2 = with_iova2 ? reg_mr_iova2 : nullptr;
  a.dereg_mr = dereg_mr;
  a.create_cq = create_cq;
  a.destroy_cq = destroy_cq;
  a.create_qp = fake_create_qp;
  a.modify_qp = fake_modify_qp;
  a.destroy_qp = fake_destroy_qp;
  a.post_send = exec_post_send;
  a.post_recv = exec_post_recv;
  a.poll_cq = exec_poll_cq;
  return a;
}

void FakeVerbs::fail_device_list(int err) {
  Lock l(w_->mu);
  w_->list_errno = err;
}

bool FakeVerbs::force_qp_error(uint32_t qpn) {
  Lock l(w_->mu);
  auto it = w_->qps.find(qpn);
  if (it == w_->qps.end()) return false;
  w_->to_error(*it->second);
  return true;
}

bool FakeVerbs::hold_qp(uint32_t qpn, bool on) {
  Lock l(w_->mu);
  auto it = w_->qps.find(qpn);
  if (it == w_->qps.end()) return false;
  it->second->held = on;
  return true;
}

void FakeVerbs::corrupt_next_rkey() {
  Lock l(w_->mu);
  w_->corrupt_rkey = true;
}

void FakeVerbs::vanish_device(const std::string& name) {
  Lock l(w_->mu);
  for (auto& d : w_->devices)
    if (d->cfg.name == name) d->vanished = true;
}

void FakeVerbs::set_piece_bytes(std::size_t n) {
  Lock l(w_->mu);
  w_->piece = n == 0 ? 1 : n;
}

FakeCounters FakeVerbs::counters() const {
  Lock l(w_->mu);
  FakeCounters c = w_->stats;
  c.contexts = static_cast<int>(w_->contexts.size());
  c.pds = static_cast<int>(w_->pds.size());
  c.mrs = static_cast<int>(w_->mrs.size());
  c.cqs = static_cast<int>(w_->cqs.size());
  c.qps = static_cast<int>(w_->qps.size());
  c.device_lists = static_cast<int>(w_->lists.size());
  return c;
}

std::vector<QpInfo> FakeVerbs::qps_on(const std::string& device) const {
  Lock l(w_->mu);
  std::vector<QpInfo> out;
  for (auto& [n, q] : w_->qps)
    if (q->dev()->cfg.name == device)
      out.push_back({.qpn = n,
                     .dest_qpn = q->dest_qpn,
                     .state = q->qp.state,
                     .device = device,
                     .port = q->port,
                     .sl = q->ah.sl,
                     .is_global = q->ah.is_global != 0,
                     .sgid_index = q->ah.grh.sgid_index,
                     .traffic_class = q->ah.grh.traffic_class,
                     .timeout = q->timeout,
                     .retry_cnt = q->retry_cnt});
  return out;
}

std::vector<std::string> FakeVerbs::violations() const {
  Lock l(w_->mu);
  return w_->violations;
}

}  // namespace squeeze::transport::ib::fake

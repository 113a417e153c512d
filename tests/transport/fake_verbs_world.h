// Internals of the fake verbs provider: the objects behind the ibv_* pointers it hands out
// (each struct starts with the ibv_* struct the transport sees) and the world that owns them.
#pragma once

#include <cerrno>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tests/transport/fake_verbs.h"

namespace squeeze::transport::ib::fake {

struct FDevice {
  ibv_device dev{};
  FakeDevice cfg;
  std::vector<uint16_t> lids;  // per port
  bool vanished = false;
};
struct FContext {
  ibv_context ctx{};
  FDevice* dev = nullptr;
};
struct FPd {
  ibv_pd pd{};
  FContext* ctx = nullptr;
};
struct FMr {
  ibv_mr mr{};
  FPd* pd = nullptr;
  uintptr_t addr = 0;
  std::size_t len = 0;
  int access = 0;
};
struct Cqe {
  ibv_wc wc{};
  bool is_send = false;
  uint64_t retire = 0;  // a send completion retires the QP's work requests up to this count
};
struct FCq {
  ibv_cq cq{};
  FContext* ctx = nullptr;
  int cqe = 0;
  std::deque<Cqe> q;
};
struct SendWr {
  uint64_t wr_id = 0;
  ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE;
  bool signaled = false;
  uint32_t imm = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  std::vector<ibv_sge> sges;
  uint64_t total = 0;
  uint64_t done = 0;
  bool started = false;
  uint64_t index = 0;  // position in the QP's send queue history
};
struct RecvWr {
  uint64_t wr_id = 0;
};
struct FQp {
  ibv_qp qp{};
  FPd* pd = nullptr;
  FCq* scq = nullptr;
  FCq* rcq = nullptr;
  ibv_qp_cap cap{};
  bool sig_all = false;
  uint8_t port = 0;
  int access = 0;
  ibv_mtu mtu = IBV_MTU_256;
  uint32_t dest_qpn = 0, rq_psn = 0, sq_psn = 0;
  ibv_ah_attr ah{};
  int max_rd_atomic = 0, max_dest_rd_atomic = 0;
  uint8_t timeout = 0, retry_cnt = 0;
  std::deque<SendWr> sq;
  std::deque<RecvWr> rq;
  uint64_t posted = 0, retired = 0;
  bool held = false;  // hold_qp(): its send queue does not move
  FDevice* dev() const { return pd->ctx->dev; }
  bool dead() const { return dev()->vanished; }
};

struct FakeVerbs::World {
  mutable std::mutex mu;
  std::vector<std::unique_ptr<FDevice>> devices;
  std::map<FContext*, std::unique_ptr<FContext>> contexts;
  std::map<FPd*, std::unique_ptr<FPd>> pds;
  std::map<FMr*, std::unique_ptr<FMr>> mrs;
  std::map<FCq*, std::unique_ptr<FCq>> cqs;
  std::map<uint32_t, std::unique_ptr<FQp>> qps;  // by QP number
  std::set<ibv_device**> lists;
  uint32_t next_qpn = 0x11;
  uint32_t next_key = 0x2301;
  uint32_t next_handle = 1;
  int list_errno = 0;
  bool corrupt_rkey = false;
  std::size_t piece = 64 * 1024;
  std::size_t rr = 0;  // where the next progress round starts
  FakeCounters stats;
  std::vector<std::string> violations;

  // fake_verbs_exec.cc
  void progress();
  bool step(FQp& q);
  void push(FCq* cq, const Cqe& e);
  void to_error(FQp& q);
  void fail_wr(FQp& q, ibv_wc_status st);
  FMr* find_mr(FPd* pd, uint32_t key, bool remote, uint64_t addr, uint64_t len, int need);
  bool gid_of(const FDevice& d, int port, int index, ibv_gid* out) const;
};

// The one live world (set by FakeVerbs' constructor).
FakeVerbs::World* world();

// Shared by the provider's files: a failed call sets errno as libibverbs does, and the table's
// opaque handles are our objects.
using Lock = std::lock_guard<std::mutex>;
inline int fail(int err) {
  errno = err;
  return err;
}
template <typename T>
T* fail_null(int err) {
  errno = err;
  return nullptr;
}
inline FContext* ctx_of(ibv_context* c) { return reinterpret_cast<FContext*>(c); }
inline FPd* pd_of(ibv_pd* p) { return reinterpret_cast<FPd*>(p); }
inline FCq* cq_of(ibv_cq* c) { return reinterpret_cast<FCq*>(c); }
inline FQp* qp_of(ibv_qp* q) { return reinterpret_cast<FQp*>(q); }

// Table entries defined outside fake_verbs.cc.
ibv_qp* fake_create_qp(ibv_pd* pd, ibv_qp_init_attr* a);
int fake_modify_qp(ibv_qp* qp, ibv_qp_attr* a, int mask);
int fake_destroy_qp(ibv_qp* qp);
int exec_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int exec_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
int exec_poll_cq(ibv_cq* cq, int n, ibv_wc* wc);

}  // namespace squeeze::transport::ib::fake

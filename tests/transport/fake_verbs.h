// An in-memory verbs provider behind the VerbsApi table, so the ib transport's state machines
// run on machines without an RDMA device. It keeps the rules real hardware enforces:
// - QP state transitions RESET -> INIT -> RTR -> RTS with their required attributes; posting
//   sends needs RTS;
// - every RDMA access is checked against registered MRs: lkey/rkey, protection domain,
//   access flags and bounds (a transport bug that writes out of bounds fails the test);
// - RC semantics: work requests of a QP execute in order, large ones in pieces spread over
//   poll calls (so data lands progressively and QPs interleave), writes with immediate
//   consume a posted receive (waiting, as RNR retry does, until one is posted), completions
//   come in order, errors move QPs to the error state and flush what is queued;
// - routing: a QP reaches its peer only through the peer's LID (InfiniBand) or GID (RoCE)
//   and QP number, with matching PSNs.
// Faults can be injected: a QP forced into error, a bad rkey on the next RDMA access, a
// device whose QPs vanish (a dead peer), a QP whose sends stop moving without an error (a
// stalled peer), get_device_list failing with an errno.
// One FakeVerbs may exist at a time (the table's functions find it through a global).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/ib/verbs_api.h"

namespace squeeze::transport::ib::fake {

struct FakePort {
  ibv_port_state state = IBV_PORT_ACTIVE;
  uint8_t link_layer = IBV_LINK_LAYER_INFINIBAND;
  ibv_mtu active_mtu = IBV_MTU_4096;
  uint8_t active_width = 2;        // 4x
  uint8_t active_speed = 32;       // EDR: 25 Gb/s per lane
  uint32_t max_msg_sz = 1u << 30;  // largest work request; longer ones fail with a length error
};

struct FakeDevice {
  std::string name = "fake_0";
  uint64_t guid = 0x1122334455667788ull;
  std::vector<FakePort> ports = std::vector<FakePort>(1);
  bool dmabuf =
      true;  // kernel dma-buf support (reg_dmabuf_mr with fd -1 fails EBADF, not EOPNOTSUPP)
  int max_qp_wr = 4096;
};

struct QpInfo {
  uint32_t qpn = 0;
  uint32_t dest_qpn = 0;
  ibv_qp_state state = IBV_QPS_RESET;
  std::string device;
  // What the modify-QP calls set: the address vector at RTR, the ack timeout and retry
  // count at RTS.
  uint8_t port = 0;
  uint8_t sl = 0;
  bool is_global = false;
  uint8_t sgid_index = 0;
  uint8_t traffic_class = 0;
  uint8_t timeout = 0;
  uint8_t retry_cnt = 0;
};

struct FakeCounters {
  int contexts = 0, pds = 0, mrs = 0, cqs = 0, qps = 0, device_lists = 0;  // live objects
  uint64_t reg_mr_calls = 0;
  uint64_t reg_mr_iova2_calls = 0;                 // of which through ibv_reg_mr_iova2
  uint64_t relaxed_mrs = 0;                        // registrations with IBV_ACCESS_RELAXED_ORDERING
  uint64_t writes = 0, write_imms = 0, reads = 0;  // completed work requests
  uint64_t bytes = 0;                              // moved by them
};

class FakeVerbs {
 public:
  explicit FakeVerbs(std::vector<FakeDevice> devices = {FakeDevice{}});
  ~FakeVerbs();
  FakeVerbs(const FakeVerbs&) = delete;
  FakeVerbs& operator=(const FakeVerbs&) = delete;

  // The table; reg_dmabuf_mr is null when `with_dmabuf` is false (an old rdma-core), and
  // reg_mr_iova2 when `with_iova2` is false (a library older than IBVERBS_1.8).
  VerbsApi api(bool with_dmabuf = true, bool with_iova2 = true) const;

  // Faults.
  void fail_device_list(int err);               // get_device_list returns null with errno = err
  bool force_qp_error(uint32_t qpn);            // QP to the error state, queues flushed
  void corrupt_next_rkey();                     // the next RDMA access meets an invalid rkey
  void vanish_device(const std::string& name);  // its QPs stop answering (peer process gone)
  bool hold_qp(uint32_t qpn, bool on = true);   // its send queue stops moving, with no error
  void set_piece_bytes(std::size_t n);          // bytes one work request moves per poll step

  // Inspection.
  FakeCounters counters() const;
  std::vector<QpInfo> qps_on(const std::string& device) const;
  // Rule breaks seen (CQ overrun, objects leaked or destroyed while in use, ...); tests
  // expect none.
  std::vector<std::string> violations() const;

  struct World;  // fake_verbs_world.h

 private:
  std::unique_ptr<World> w_;
};

}  // namespace squeeze::transport::ib::fake

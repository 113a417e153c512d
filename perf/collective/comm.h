// One emulated NCCL communicator on top of the plugin: a net context (v11 init), the
// profiler context, and a connection to each peer this rank sends to or receives from,
// set up as NCCL's proxy does it (listen, exchange 128-byte handles through the bootstrap,
// non-blocking connect/accept loops, then regMr of the connection's buffers), and torn down
// in reverse (deregMr, close, finalize).
//
// Buffers registered per connection, in NCCL's order, so the plugin can tell a buffer's
// protocol from the order of regMr calls:
//   ring (collective) connections: LL 512 KiB, LL128 4.6875 MiB, SIMPLE 8 x step bytes;
//   p2p connections (all-to-all):  SIMPLE only, 8 x chunk bytes (NCCL registers no LL/LL128
//                                  pool for p2p unless NCCL_ALLOC_P2P_NET_LL_BUFFERS=1).
// Only the SIMPLE buffer carries data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "perf/collective/bootstrap.h"
#include "perf/collective/plugin_lib.h"
#include "perf/collective/prof_chain.h"

namespace squeeze::perf {

// NCCL's numbers (NCCL 2.28.9 src/init.cc, src/include/device.h, nccl_common.h, net.cc).
inline constexpr std::size_t kLLBytes = 8 * 512 * 8 * 16;        // DEFAULT_LL_BUFFSIZE
inline constexpr std::size_t kLL128Bytes = 120 * 640 * 8 * 8;    // DEFAULT_LL128_BUFFSIZE
inline constexpr int kSteps = 8;                                 // NCCL_STEPS
inline constexpr uint32_t kOpAllReduce = 1u << 4;                // BIT(ncclFuncAllReduce)
inline constexpr uint32_t kOpSend = 1u << 6, kOpRecv = 1u << 7;  // BIT(ncclFuncSend/Recv)
inline constexpr uint32_t kOpAlltoAll = 1u << 8;                 // BIT(ncclFuncAlltoAll)
inline constexpr uint32_t kOpScatter = 1u << 9, kOpGather = 1u << 10;
inline constexpr uint32_t kAlgoRing = 1u << 1;       // BIT(NCCL_ALGO_RING = 1)
inline constexpr uint32_t kProtoSimple = 1u << 2;    // BIT(NCCL_PROTO_SIMPLE = 2)
inline constexpr uint32_t kAttrUndef = 0xFFFFFFFFu;  // NCCL_NET_ATTR_UNDEF (-1)

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using HostBuf = std::unique_ptr<uint8_t, FreeDeleter>;
HostBuf alloc_host(std::size_t bytes);  // page-aligned, zeroed

enum class ConnKind { kRing, kP2p };

struct Conn {
  int peer = -1;
  void* comm = nullptr;    // sendComm or recvComm
  void* listen = nullptr;  // receive side, until accepted
  alignas(8) unsigned char handle[128] = {};
  std::vector<HostBuf> bufs;    // LL, LL128, SIMPLE (ring) or SIMPLE (p2p)
  std::vector<void*> mhandles;  // same order
  uint8_t* simple = nullptr;    // the SIMPLE buffer
  void* simple_mh = nullptr;
};

struct CommSpec {
  std::vector<int> send_peers, recv_peers;
  ConnKind kind = ConnKind::kRing;
  std::size_t simple_bytes = 0;  // size of the SIMPLE buffer per connection
  uint64_t comm_id = 0;          // same on every rank
  std::string name;              // communicator name, for the profiler
  int dev = 0;
  bool chain = true;  // play the profiler chain
  double timeout_s = 120;
};

class Communicator {
 public:
  Communicator(const PluginLib& lib, Bootstrap& boot, const CommSpec& spec);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  nccl_net_v11* net() const { return lib_.net(); }
  ProfChain& chain() { return *chain_; }
  Conn& send_conn(int peer);
  Conn& recv_conn(int peer);
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  double timeout_s() const { return spec_.timeout_s; }

  // NCCL's setXferNetAttrs: the attributes of the next sends (or receives), with the cached
  // ones as base; setNetAttr is called only when they changed. p2p (op beyond AllReduce's
  // range) leaves algo and proto as they were, as NCCL does.
  void xfer_attrs(bool send, uint32_t op, uint32_t algo, uint32_t proto, int npeers);
  // The next sequence number of `op` on this communicator (the Coll event's seqNumber).
  uint64_t next_seq(uint32_t op) { return seq_[op == kOpAllReduce ? 0 : 1]++; }

 private:
  void release() noexcept;  // deregMr, close, finalize: what the destructor does
  void set_attrs(const nccl_net_attr_v11& a);
  void register_buffers(Conn& c);
  void connect_all(Bootstrap& boot);

  const PluginLib& lib_;
  CommSpec spec_;
  int rank_, nranks_;
  std::unique_ptr<ProfChain> chain_;
  void* ctx_ = nullptr;
  std::vector<Conn> sends_, recvs_;
  nccl_net_attr_v11 attr_{};
  uint64_t seq_[2] = {0, 0};
};

}  // namespace squeeze::perf

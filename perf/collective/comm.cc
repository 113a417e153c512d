#include "perf/collective/comm.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace squeeze::perf {
namespace {

nccl_net_attr_v11 undefined_attrs() {
  nccl_net_attr_v11 a;
  std::memset(&a, 0xFF, sizeof(a));  // NCCL_NET_ATTR_INIT: every field NCCL_NET_ATTR_UNDEF
  return a;
}

}  // namespace

HostBuf alloc_host(std::size_t bytes) {
  const std::size_t rounded = std::max<std::size_t>(4096, (bytes + 4095) / 4096 * 4096);
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(4096, rounded));
  if (p == nullptr)
    throw std::runtime_error("out of memory allocating " + std::to_string(bytes) + " bytes");
  std::memset(p, 0, rounded);
  return HostBuf(p);
}

Communicator::Communicator(const PluginLib& lib, Bootstrap& boot, const CommSpec& spec)
    : lib_(lib), spec_(spec), rank_(boot.rank()), nranks_(boot.nranks()) {
  chain_ = std::make_unique<ProfChain>(spec.chain ? lib.profiler() : nullptr, lib.instance(),
                                       spec.comm_id, spec.name, nranks_, rank_);
  nccl_net_comm_config cfg{-1};
  check_nccl(
      net()->init(&ctx_, spec.comm_id, &cfg, perf_logger, ProfChain::callback(lib.instance())),
      "init");
  attr_ = undefined_attrs();
  try {
    connect_all(boot);
    for (Conn& c : sends_) register_buffers(c);
    for (Conn& c : recvs_) register_buffers(c);
  } catch (...) {
    release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

Communicator::~Communicator() { release(); }

void Communicator::release() noexcept {
  for (auto* list : {&sends_, &recvs_}) {
    for (Conn& c : *list) {
      if (c.comm != nullptr)
        for (void* mh : c.mhandles) net()->deregMr(c.comm, mh);
      c.mhandles.clear();
      if (c.comm != nullptr)
        (list == &sends_ ? net()->closeSend(c.comm) : net()->closeRecv(c.comm));
      if (c.listen != nullptr) net()->closeListen(c.listen);
      c.comm = c.listen = nullptr;
    }
  }
  if (ctx_ != nullptr && net()->finalize != nullptr) net()->finalize(ctx_);
  ctx_ = nullptr;
  chain_.reset();
}

Conn& Communicator::send_conn(int peer) {
  for (Conn& c : sends_)
    if (c.peer == peer) return c;
  throw std::logic_error("no send connection to rank " + std::to_string(peer));
}

Conn& Communicator::recv_conn(int peer) {
  for (Conn& c : recvs_)
    if (c.peer == peer) return c;
  throw std::logic_error("no receive connection from rank " + std::to_string(peer));
}

void Communicator::set_attrs(const nccl_net_attr_v11& a) {
  if (net()->setNetAttr != nullptr)
    check_nccl(net()->setNetAttr(ctx_, const_cast<nccl_net_attr_v11*>(&a)), "setNetAttr");
  attr_ = a;
}

void Communicator::xfer_attrs(bool send, uint32_t op, uint32_t algo, uint32_t proto, int npeers) {
  nccl_net_attr_v11 a = attr_;
  nccl_net_comm_attr_v11& side = send ? a.sendCommAttr : a.recvCommAttr;
  side.maxConcurrentPeers = side.minConcurrentPeers = npeers;
  side.maxFlowsPerPeer = side.minFlowsPerPeer = 1;  // one channel
  a.op = op;
  if (op <= kOpAllReduce) {  // collAPI < NCCL_NUM_FUNCTIONS: algo/proto are defined
    a.algo = algo;
    a.proto = proto;
  }
  if (std::memcmp(&a, &attr_, sizeof(a)) != 0) set_attrs(a);
}

void Communicator::connect_all(Bootstrap& boot) {
  const int dev = spec_.dev;
  sends_.resize(spec_.send_peers.size());
  recvs_.resize(spec_.recv_peers.size());
  const std::size_t hb = sizeof(Conn::handle);
  std::vector<unsigned char> mine(static_cast<std::size_t>(nranks_) * hb, 0);
  for (std::size_t i = 0; i < recvs_.size(); ++i) {
    Conn& c = recvs_[i];
    c.peer = spec_.recv_peers[i];
    check_nccl(net()->listen(ctx_, dev, c.handle, &c.listen), "listen");
    std::memcpy(&mine[static_cast<std::size_t>(c.peer) * hb], c.handle, hb);
  }
  std::vector<unsigned char> all(mine.size() * static_cast<std::size_t>(nranks_));
  boot.allgather(mine.data(), all.data(), mine.size());
  static const unsigned char zero[128] = {};
  for (std::size_t i = 0; i < sends_.size(); ++i) {
    Conn& c = sends_[i];
    c.peer = spec_.send_peers[i];
    const unsigned char* h =
        &all[(static_cast<std::size_t>(c.peer) * static_cast<std::size_t>(nranks_) +
              static_cast<std::size_t>(rank_)) *
             hb];
    if (std::memcmp(h, zero, hb) == 0)
      throw std::runtime_error("rank " + std::to_string(c.peer) + " published no handle for rank " +
                               std::to_string(rank_) + " (ranks run different collectives?)");
    std::memcpy(c.handle, h, hb);
  }

  // NCCL's sendProxyConnect/recvProxyConnect apply the connection's attributes first.
  nccl_net_attr_v11 a = undefined_attrs();
  const int peers = std::min(nranks_, spec_.kind == ConnKind::kRing ? 4 : 8);
  a.sendCommAttr = {peers, 1, 1, 1};
  a.recvCommAttr = {peers, 1, 1, 1};
  if (spec_.kind == ConnKind::kP2p) a.op = kOpSend | kOpRecv | kOpAlltoAll | kOpScatter | kOpGather;
  if (!sends_.empty() || !recvs_.empty()) set_attrs(a);

  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(spec_.timeout_s);
  for (;;) {
    bool pending = false;
    for (Conn& c : sends_) {
      if (c.comm != nullptr) continue;
      nccl_net_device_handle* dh = nullptr;
      check_nccl(net()->connect(ctx_, dev, c.handle, &c.comm, &dh), "connect");
      pending |= c.comm == nullptr;
    }
    for (Conn& c : recvs_) {
      if (c.comm != nullptr) continue;
      nccl_net_device_handle* dh = nullptr;
      check_nccl(net()->accept(c.listen, &c.comm, &dh), "accept");
      pending |= c.comm == nullptr;
    }
    if (!pending) break;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("rank " + std::to_string(rank_) +
                               ": plugin connections not established within " +
                               std::to_string(static_cast<int>(spec_.timeout_s)) + " s");
    sched_yield();
  }
  for (Conn& c : recvs_) {
    check_nccl(net()->closeListen(c.listen), "closeListen");
    c.listen = nullptr;
  }
}

void Communicator::register_buffers(Conn& c) {
  std::vector<std::size_t> sizes;
  if (spec_.kind == ConnKind::kRing) sizes = {kLLBytes, kLL128Bytes};
  sizes.push_back(spec_.simple_bytes);
  for (std::size_t bytes : sizes) {
    c.bufs.push_back(alloc_host(bytes));
    void* mh = nullptr;
    check_nccl(net()->regMr(c.comm, c.bufs.back().get(), bytes, squeeze::nccl::kPtrHost, &mh),
               "regMr");
    c.mhandles.push_back(mh);
  }
  c.simple = c.bufs.back().get();
  c.simple_mh = c.mhandles.back();
}

}  // namespace squeeze::perf

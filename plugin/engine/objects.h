// The objects behind NCCL's opaque pointers: net context (v11 ctx), comms, memory regions
// and requests. Comms own their transport comm and a fixed pool of requests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "plugin/nccl/net_abi.h"
#include "transport/transport.h"

namespace squeeze::plugin {

// One per init() call (v11 passes it back to listen/connect/finalize/setNetAttr).
struct NetContext {
  uint64_t comm_id = 0;
  int traffic_class = -1;
  nccl_profiler_callback_t prof = nullptr;
  // Current collective attributes from setNetAttr (v11), copied into each request.
  uint32_t op = UINT32_MAX, algo = UINT32_MAX, proto = UINT32_MAX;
};

enum class CommKind : uint32_t { kSend = 0x53514353, kRecv = 0x53514352 };  // tags to tell comms apart

struct MemRegion {
  void* data = nullptr;
  std::size_t size = 0;
  int type = 0;       // NCCL_PTR_*
  int reg_index = 0;  // order of registration on its comm: LL, LL128, SIMPLE for collectives
};

struct CommBase;

struct Request {
  CommBase* comm = nullptr;
  int slot = -1;
  int n = 0;
  std::size_t send_size = 0;
  uint32_t op = UINT32_MAX, algo = UINT32_MAX, proto = UINT32_MAX;
};

struct CommBase {
  explicit CommBase(CommKind k, NetContext* c) : kind(k), ctx(c) {}
  CommKind kind;
  NetContext* ctx;
  int next_reg_index = 0;
  std::vector<std::unique_ptr<MemRegion>> regions;
};

struct SendComm : CommBase {
  explicit SendComm(NetContext* c) : CommBase(CommKind::kSend, c) {}
  std::unique_ptr<transport::SendComm> t;
  std::array<Request, transport::kMaxRequests * transport::kMaxRecvs> requests{};
};

struct RecvComm : CommBase {
  explicit RecvComm(NetContext* c) : CommBase(CommKind::kRecv, c) {}
  std::unique_ptr<transport::RecvComm> t;
  std::array<Request, transport::kMaxRequests> requests{};
};

struct ListenComm {
  NetContext* ctx = nullptr;
  int dev = 0;
  std::unique_ptr<transport::Listener> t;
};

}  // namespace squeeze::plugin

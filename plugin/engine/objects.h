// The objects behind NCCL's opaque pointers: net context (v11 ctx), comms, memory regions
// and requests. Comms own their transport comm, a fixed pool of requests, and the per-stream
// codec state of the messages they send.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/threshold.h"
#include "plugin/engine/dedupe_gate.h"
#include "plugin/engine/gpu_staging.h"
#include "plugin/nccl/net_abi.h"
#include "plugin/policy/message_meta.h"
#include "plugin/policy/policy.h"
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
  std::unique_ptr<transport::Registration> reg;  // the transport's (verbs: the MR); may be null
  // GPU staging: the pinned host twin of this CUDA region (then `reg` registers the mirror,
  // never the GPU memory). Null for host memory and for GPUDirect regions.
  std::unique_ptr<GpuMirror> mirror{};
  ~MemRegion() { reg.reset(); }  // the registration goes before the memory it registers
};

// State of a codec job run on a worker thread; the progress thread only polls `state`.
enum class JobState : int { kIdle = 0, kRunning, kDone, kFailed };

struct CommBase;

// Per-stream state of a sending comm: one per (rule, element count), the count naming a
// tensor in practice. Holds the DCT threshold, the message index of the eb schedule and
// whether row dedupe finds enough to run.
struct StreamState {
  compress::ThresholdState threshold;
  DedupeGate dedupe;
  uint64_t messages = 0;
  bool busy = false;  // an encode of this stream is running (progress thread only)
};

struct Request {
  CommBase* comm = nullptr;
  int slot = -1;  // transport slot once posted
  int n = 0;
  // send side
  const void* data = nullptr;
  std::size_t size = 0;
  int tag = 0;
  bool compress = false;
  bool posted = false;
  compress::CodecParams params;
  compress::Dtype dtype = compress::Dtype::kBytes;
  uint64_t count = 0;
  StreamState* stream = nullptr;
  const transport::Registration* reg = nullptr;  // NCCL's registration of `data`
  std::vector<uint8_t> frame;  // staging, kept across reuse of the request
  // The transport's registration of `frame` (verbs: its MR), redone whenever the vector has
  // moved or grown, so a transport never guesses at staging memory by address.
  std::unique_ptr<transport::Registration> frame_reg;
  const uint8_t* frame_reg_data = nullptr;
  std::size_t frame_reg_size = 0;
  std::size_t frame_bytes = 0;
  uint64_t encode_ns = 0;
  uint64_t wire_bytes = 0;
  int stats_slot = -1;
  policy::Collective collective = policy::Collective::kUnknown;
  // both sides
  std::atomic<JobState> job{JobState::kIdle};
  bool arrived = false;  // receive: the transport delivered every item
  std::string job_error;
  std::array<transport::Received, transport::kMaxRecvs> got{};
  std::array<void*, transport::kMaxRecvs> dst{};
  std::array<std::size_t, transport::kMaxRecvs> cap{};
  uint32_t op = UINT32_MAX, algo = UINT32_MAX, proto = UINT32_MAX;
  // receive side: the memory type (NCCL_PTR_*) of each destination; iflush requests
  std::array<int, transport::kMaxRecvs> dst_type{};
  bool flush = false;
  // GPU staging: the data (send) or some destination (receive) is GPU memory staged through
  // the pinned mirror at host_stage[i] (null: not staged).
  bool gpu = false;
  std::array<uint8_t*, transport::kMaxRecvs> host_stage{};
};

struct CommBase {
  explicit CommBase(CommKind k, NetContext* c) : kind(k), ctx(c) {}
  CommKind kind;
  NetContext* ctx;
  int dev = 0;
  int next_reg_index = 0;
  std::vector<std::unique_ptr<MemRegion>> regions;
  // GPU staging state, from the first staged GPU regMr. Declared after `regions`: it is
  // destroyed first and waits for the copies into their mirrors.
  std::unique_ptr<GpuStaging> gpu;
  // Which rules' "comm" patterns accept this comm's communicator, once its name is known.
  std::unique_ptr<policy::CommMatch> comm_match;
  bool comm_match_ready = false;
};

struct SendComm : CommBase {
  static constexpr int kRequests = transport::kMaxRequests * transport::kMaxRecvs;
  explicit SendComm(NetContext* c);
  ~SendComm();
  std::unique_ptr<transport::SendComm> t;
  std::array<Request, kRequests> requests{};
  std::vector<int> free;               // request indices
  std::deque<Request*> queue;          // accepted, not yet posted to the transport (isend order)
  int inflight = 0;                    // posted, not yet reported done
  transport::Status error;             // a failed post, reported by the next test()
  std::map<std::pair<int, uint64_t>, std::unique_ptr<StreamState>> streams;
  // link measurement: bytes completed since the last sample
  std::chrono::steady_clock::time_point busy_since{};
  uint64_t busy_bytes = 0;
};

struct RecvComm : CommBase {
  explicit RecvComm(NetContext* c);
  ~RecvComm();
  std::unique_ptr<transport::RecvComm> t;
  std::array<Request, transport::kMaxRequests> requests{};
  std::vector<int> free;
  std::deque<Request*> posted;  // not yet reported done, in posting order
};

// Waits for codec jobs still running on a comm's requests (they reference its memory).
void wait_for_jobs(Request* begin, Request* end);

struct ListenComm {
  NetContext* ctx = nullptr;
  int dev = 0;
  std::unique_ptr<transport::Listener> t;
};

}  // namespace squeeze::plugin

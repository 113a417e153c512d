#include "plugin/engine/net.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "compress/quantize_simd.h"
#include "plugin/engine/gpu/staging.h"
#include "plugin/engine/recv_comm.h"
#include "plugin/engine/result.h"
#include "plugin/engine/send_comm.h"
#include "plugin/engine/transport_options.h"
#include "plugin/log.h"
#include "plugin/policy/policy_load.h"
#include "transport/registry.h"

namespace squeeze::plugin {

namespace {

struct ListenComm {
  NetContext* ctx = nullptr;
  int dev = 0;
  std::unique_ptr<transport::Listener> t;
};

// NCCL hands back what we gave it. Comms go out as CommBase*, requests as RequestBase*; the
// kind tag tells send from receive.
CommBase* as_comm(void* p, CommKind kind) {
  auto* c = static_cast<CommBase*>(p);
  return c != nullptr && c->kind() == kind ? c : nullptr;
}

// SQUEEZE_STATS and the rank are read when the file is written: a tool may point it
// elsewhere between runs, or unset it before exit.
int rank_now() {
  const params::Value v = params::Settings::read_env(params::Id::kRank, nullptr);
  return v.set ? static_cast<int>(v.integer) : static_cast<int>(getpid());
}

}  // namespace

Net& Net::instance() {
  static Net* net = new Net();  // never destroyed: NCCL may call us during process exit
  return *net;
}

// Reads every variable of the parameter table once. A bad SQUEEZE_* value stops the plugin,
// said on stderr even when NCCL_DEBUG is unset; a bad NCCL_* value is a warning.
nccl_result_t Net::load_settings_locked() {
  if (settings_loaded_) return kNcclSuccess;
  params::Settings st = params::Settings::from_env();
  for (const std::string& w : st.warnings()) SQ_WARN("%s", w.c_str());
  if (!st.ok()) {
    std::string all;
    for (const std::string& e : st.errors()) all += (all.empty() ? "" : "; ") + e;
    fprintf(stderr, "NET/Squeeze: refusing to start: %s\n", all.c_str());
    SQ_WARN("refusing to start: %s", all.c_str());
    return kNcclInvalidUsage;
  }
  if (st.is_set(params::Id::kQuantizeSimd)) {
    compress::qsimd::Level l{};
    if (compress::qsimd::parse_level(st.text(params::Id::kQuantizeSimd), &l))
      compress::qsimd::set_level(l);
  }
  WorkerPool::set_shared_threads(WorkerPool::configured_threads(st));
  settings_ = std::move(st);
  settings_loaded_ = true;
  return kNcclSuccess;
}

// Loads SQUEEZE_POLICY (or the built-in default) and makes the engine around it. An invalid
// policy stops the plugin: it is said on stderr even when NCCL_DEBUG is unset, and through
// NCCL's logger.
nccl_result_t Net::load_engine_locked() {
  if (engine_.policy) return kNcclSuccess;
  std::string error;
  const std::string& path = settings_.text(params::Id::kPolicy);
  std::shared_ptr<const policy::Policy> p = policy::load_policy(path.c_str(), &error);
  if (!p) {
    fprintf(stderr, "NET/Squeeze: refusing to start: invalid policy:\n%s\n", error.c_str());
    SQ_WARN("refusing to start: invalid policy: %s", error.c_str());
    return kNcclInvalidUsage;
  }
  PaysController::Config pc;
  pc.enabled = settings_.flag(params::Id::kBypass);
  pc.workers = WorkerPool::configured_threads(settings_);
  engine_.stats = policy::Stats::for_policy(*p);
  engine_.pays = std::make_unique<PaysController>(pc);
  engine_.policy = p;
  SQ_INFO(kSubsysInit | kSubsysNet,
          "policy %s: %zu rules; compress-only-when-it-pays %s; %d codec threads%s",
          p->source().c_str(), p->rules().size(), pc.enabled ? "on" : "off (SQUEEZE_BYPASS)",
          pc.workers,
          pc.workers == 0 ? " (codec work runs on the thread that tests the request)" : "");
  static Net* at_exit = nullptr;  // the statistics are written at exit too
  if (at_exit == nullptr) {
    at_exit = this;
    atexit([] { at_exit->report_stats(); });
  }
  return kNcclSuccess;
}

nccl_result_t Net::open_transport_locked() {
  if (transport_) return kNcclSuccess;
  std::string why;
  transport_ = transport::open_transport(transport_options(settings_), &why);
  if (!transport_) {
    SQ_WARN("%s", why.c_str());
    return kNcclInvalidUsage;
  }
  const auto& devs = transport_->devices();
  if (devs.empty()) {
    transport_.reset();
    if (settings_.is_set(params::Id::kSocketIfname))
      SQ_WARN("no usable network interface matches %s='%s'",
              settings_.source(params::Id::kSocketIfname),
              settings_.text(params::Id::kSocketIfname).c_str());
    else
      SQ_WARN(
          "no usable network interface found (set SQUEEZE_SOCKET_IFNAME or NCCL_SOCKET_IFNAME)");
    return kNcclSystemError;
  }
  std::string list;
  for (std::size_t i = 0; i < devs.size(); ++i)
    list += " [" + std::to_string(i) + "]" + devs[i].name + ":" + devs[i].address;
  SQ_INFO(kSubsysInit | kSubsysNet, "Using transport %s (%s); devices:%s", transport_->name(),
          why.c_str(), list.c_str());
  // NCCL's IB variables that Squeeze honours are in the parameter table; say which others are
  // set, so a fleet's tuning that does not carry over is not lost in silence.
  std::string unread;
  for (const std::string& name : params::unread_env_variables("NCCL_IB_")) unread += " " + name;
  if (!unread.empty())
    SQ_INFO(kSubsysInit | kSubsysNet,
            "set but not read by Squeeze (they apply to NCCL's own IB transport):%s",
            unread.c_str());
  return kNcclSuccess;
}

void Net::decide_gpu_staging_locked() {
  if (gpu_staging_decided_) return;
  gpu_staging_decided_ = true;
  std::string why;
  gpu_staging_ = decide_gpu_staging(settings_.flag(params::Id::kGpuStaging), &why);
  SQ_INFO(kSubsysInit | kSubsysNet, "GPU staging %s", why.c_str());
  if (!gpu_staging_) return;
  std::string staged;
  for (std::size_t i = 0; i < transport_->devices().size(); ++i)
    if (staged_device(static_cast<int>(i))) staged += " " + transport_->devices()[i].name;
  SQ_INFO(kSubsysInit | kSubsysNet, "GPU staging: declaring NCCL_PTR_CUDA on devices%s",
          staged.empty() ? ": none (the transport reaches GPU memory itself)" : staged.c_str());
}

nccl_result_t Net::init(nccl_logger_t log, nccl_profiler_callback_t prof, NetContext** ctx) {
  set_logger(log);
  std::lock_guard<std::mutex> lock(mu_);
  if (nccl_result_t r = load_settings_locked(); r != kNcclSuccess) return r;
  if (nccl_result_t r = load_engine_locked(); r != kNcclSuccess) return r;
  if (nccl_result_t r = open_transport_locked(); r != kNcclSuccess) return r;
  decide_gpu_staging_locked();
  if (ctx == nullptr) {
    if (prof != nullptr) shared_ctx_.prof = prof;
    return kNcclSuccess;
  }
  auto c = std::make_unique<NetContext>();
  c->prof = prof;
  *ctx = c.release();
  return kNcclSuccess;
}

nccl_result_t Net::finalize(NetContext* ctx) {
  report_stats();
  if (ctx != &shared_ctx_) delete ctx;
  return kNcclSuccess;
}

std::shared_ptr<const policy::Policy> Net::policy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return engine_.policy;
}

transport::Transport* Net::transport() const {
  std::lock_guard<std::mutex> lock(mu_);
  return transport_.get();
}

const Engine* Net::engine() const {
  std::lock_guard<std::mutex> lock(mu_);
  return engine_.policy ? &engine_ : nullptr;
}

const params::Settings* Net::settings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return settings_loaded_ ? &settings_ : nullptr;
}

void Net::report_stats() {
  const policy::Stats* stats = engine_.stats.get();
  if (stats == nullptr) return;
  const policy::Stats::Counters t = stats->totals();
  const policy::Stats::DecodeCounters d = stats->decode_totals();
  if (t.messages == 0 && t.raw_total() == 0 && d.messages == 0) return;
  SQ_INFO(kSubsysNet, "%s", stats->summary_line().c_str());
  const params::Value path = params::Settings::read_env(params::Id::kStats, nullptr);
  if (path.set) {
    std::string error;
    if (!stats->write_json(path.text, rank_now(), &error)) SQ_WARN("statistics: %s", error.c_str());
  }
}

bool Net::valid_device(int dev) const {
  return transport_ && dev >= 0 && dev < static_cast<int>(transport_->devices().size());
}

nccl_result_t Net::devices(int* ndev) {
  if (!transport_) {
    SQ_WARN("devices() called before init()");
    return kNcclInvalidUsage;
  }
  *ndev = static_cast<int>(transport_->devices().size());
  return kNcclSuccess;
}

nccl_result_t Net::properties(int dev, nccl_net_props_v12* p) {
  if (!valid_device(dev)) {
    SQ_WARN("getProperties: no device %d", dev);
    return kNcclInvalidUsage;
  }
  const transport::DeviceProps& d = transport_->devices()[static_cast<std::size_t>(dev)];
  std::memset(p, 0, sizeof(*p));
  p->name = const_cast<char*>(d.name.c_str());
  p->pciPath = d.pci_path.empty() ? nullptr : const_cast<char*>(d.pci_path.c_str());
  p->guid = d.guid;
  p->ptrSupport = ptr_support(dev);
  p->regIsGlobal = 0;
  p->forceFlush = d.force_flush ? 1 : 0;
  p->speed = d.speed_mbps;
  p->port = 0;
  p->latency = d.latency_us;
  p->maxComms = d.max_comms;
  p->maxRecvs = d.max_recvs;
  p->netDeviceType = 0;  // host
  p->netDeviceVersion = 0;
  p->vProps.ndevs = 1;
  p->vProps.devs[0] = dev;
  p->maxP2pBytes = nccl::kMaxNetSizeBytes;
  p->maxCollBytes = nccl::kMaxNetSizeBytes;
  p->maxMultiRequestSize = 1;
  // No transport knows which rail or plane its NIC is on: NCCL then leaves both out of its
  // topology (rail-aware merging and search skip undefined ids).
  p->railId = nccl::kNetIdUndef;
  p->planeId = nccl::kNetIdUndef;
  return kNcclSuccess;
}

nccl_result_t Net::set_attr(NetContext* ctx, const nccl_net_attr_v11* attr) {
  if (ctx == nullptr || attr == nullptr) return kNcclInvalidArgument;
  ctx->attr = {attr->op, attr->algo, attr->proto};
  return kNcclSuccess;
}

nccl_result_t Net::listen(NetContext* ctx, int dev, void* handle, void** listen_comm) {
  if (!transport_) return kNcclInvalidUsage;
  auto l = std::make_unique<ListenComm>();
  l->ctx = ctx != nullptr ? ctx : &shared_ctx_;
  l->dev = dev;
  SQ_CHECK_STATUS(transport_->listen(dev, handle, &l->t));
  *listen_comm = l.release();
  return kNcclSuccess;
}

nccl_result_t Net::connect(NetContext* ctx, int dev, void* handle, void** send_comm,
                           nccl_net_device_handle** dev_comm) {
  *send_comm = nullptr;
  if (dev_comm != nullptr) *dev_comm = nullptr;  // no device offload
  if (!transport_) return kNcclInvalidUsage;
  std::unique_ptr<transport::SendComm> t;
  SQ_CHECK_STATUS(transport_->connect(dev, handle, &t));
  if (!t) return kNcclSuccess;  // not yet: NCCL calls again
  CommBase* c = new SendComm(ctx != nullptr ? ctx : &shared_ctx_, &engine_, dev, staged_device(dev),
                             std::move(t));
  *send_comm = c;
  return kNcclSuccess;
}

nccl_result_t Net::accept(void* listen_comm, void** recv_comm, nccl_net_device_handle** dev_comm) {
  *recv_comm = nullptr;
  if (dev_comm != nullptr) *dev_comm = nullptr;
  auto* l = static_cast<ListenComm*>(listen_comm);
  if (l == nullptr) return kNcclInvalidArgument;
  std::unique_ptr<transport::RecvComm> t;
  SQ_CHECK_STATUS(l->t->accept(&t));
  if (!t) return kNcclSuccess;
  CommBase* c = new RecvComm(l->ctx, &engine_, l->dev, staged_device(l->dev), std::move(t));
  *recv_comm = c;
  return kNcclSuccess;
}

nccl_result_t Net::reg_mr(void* comm, void* data, std::size_t size, int type, void** mhandle) {
  transport::MemoryDesc mem;
  mem.data = data;
  mem.size = size;
  mem.ptr_type = type;
  return register_region(comm, mem, mhandle);
}

nccl_result_t Net::reg_mr_dmabuf(void* comm, void* data, std::size_t size, int type,
                                 uint64_t offset, int fd, void** mhandle) {
  transport::MemoryDesc mem;
  mem.data = data;
  mem.size = size;
  mem.ptr_type = type;
  mem.dmabuf_fd = fd;
  mem.dmabuf_offset = offset;
  return register_region(comm, mem, mhandle);
}

bool Net::staged_device(int dev) const {
  if (!gpu_staging_ || !valid_device(dev)) return false;
  return (transport_->devices()[static_cast<std::size_t>(dev)].ptr_support & transport::kPtrCuda) ==
         0;
}

int Net::ptr_support(int dev) const {
  if (!valid_device(dev)) return 0;
  return transport_->devices()[static_cast<std::size_t>(dev)].ptr_support |
         (staged_device(dev) ? transport::kPtrCuda : 0);
}

// regMr and regMrDmaBuf: checks the memory type against what the comm's device declared, then
// the comm registers it (and remembers the order of registration).
nccl_result_t Net::register_region(void* comm, const transport::MemoryDesc& mem, void** mhandle) {
  *mhandle = nullptr;
  auto* c = static_cast<CommBase*>(comm);
  if (c == nullptr || (c->kind() != CommKind::kSend && c->kind() != CommKind::kRecv)) {
    SQ_WARN("regMr: not a Squeeze comm");
    return kNcclInvalidArgument;
  }
  const int support = ptr_support(c->dev());
  const int needed = mem.ptr_type | (mem.dmabuf_fd >= 0 ? transport::kPtrDmaBuf : 0);
  if ((mem.ptr_type != transport::kPtrHost && mem.ptr_type != transport::kPtrCuda) ||
      (needed & ~support) != 0) {
    SQ_WARN("regMr: memory type %d%s is not supported by transport %s device %d (ptrSupport 0x%x)",
            mem.ptr_type, mem.dmabuf_fd >= 0 ? " (dma-buf)" : "",
            transport_ ? transport_->name() : "none", c->dev(), support);
    return kNcclInternalError;
  }
  MemRegion* mr = nullptr;
  SQ_CHECK_STATUS(c->register_region(mem, &mr));
  *mhandle = mr;
  return kNcclSuccess;
}

nccl_result_t Net::dereg_mr(void* comm, void* mhandle) {
  auto* c = static_cast<CommBase*>(comm);
  if (c == nullptr) return kNcclInvalidArgument;
  if (c->deregister_region(static_cast<const MemRegion*>(mhandle))) return kNcclSuccess;
  SQ_WARN("deregMr: unknown memory handle %p", mhandle);
  return kNcclInvalidArgument;
}

nccl_result_t Net::isend(void* send_comm, void* data, std::size_t size, int tag, void* mhandle,
                         void* phandle, void** request) {
  *request = nullptr;
  CommBase* c = as_comm(send_comm, CommKind::kSend);
  if (c == nullptr) {
    SQ_WARN("isend: not a Squeeze send comm");
    return kNcclInvalidArgument;
  }
  return static_cast<SendComm*>(c)->isend(data, size, tag, mhandle, phandle, request);
}

nccl_result_t Net::irecv(void* recv_comm, int n, void** data, const std::size_t* sizes,
                         const int* tags, void** mhandles, void** phandles, void** request) {
  *request = nullptr;
  CommBase* c = as_comm(recv_comm, CommKind::kRecv);
  if (c == nullptr) {
    SQ_WARN("irecv: not a Squeeze receive comm");
    return kNcclInvalidArgument;
  }
  return static_cast<RecvComm*>(c)->irecv(n, data, sizes, tags, mhandles, phandles, request);
}

nccl_result_t Net::iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                          void** request) {
  *request = nullptr;
  CommBase* c = as_comm(recv_comm, CommKind::kRecv);
  if (c == nullptr) {
    SQ_WARN("iflush: not a Squeeze receive comm");
    return kNcclInvalidArgument;
  }
  return static_cast<RecvComm*>(c)->iflush(n, data, sizes, mhandles, request);
}

nccl_result_t Net::test(void* request, int* done, int* sizes) {
  *done = 0;
  auto* r = static_cast<RequestBase*>(request);
  if (r == nullptr || r->comm == nullptr) {
    SQ_WARN("test: invalid request %p", request);
    return kNcclInvalidArgument;
  }
  if (r->comm->kind() == CommKind::kSend)
    return static_cast<SendComm*>(r->comm)->test(static_cast<SendRequest*>(r), done, sizes);
  return static_cast<RecvComm*>(r->comm)->test(static_cast<RecvRequest*>(r), done, sizes);
}

nccl_result_t Net::close_send(void* send_comm) {
  delete static_cast<SendComm*>(as_comm(send_comm, CommKind::kSend));
  return kNcclSuccess;
}

nccl_result_t Net::close_recv(void* recv_comm) {
  delete static_cast<RecvComm*>(as_comm(recv_comm, CommKind::kRecv));
  return kNcclSuccess;
}

nccl_result_t Net::close_listen(void* listen_comm) {
  delete static_cast<ListenComm*>(listen_comm);
  return kNcclSuccess;
}

}  // namespace squeeze::plugin

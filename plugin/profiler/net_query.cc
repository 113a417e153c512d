#include "plugin/profiler/net_query.h"

#include <atomic>

#include "plugin/nccl/profiler_abi.h"
#include "plugin/policy/names.h"

namespace squeeze::profiler {

const char* chain_result_name(ChainResult r) {
  switch (r) {
    case ChainResult::kUnavailable: return "unavailable";
    case ChainResult::kNoParent: return "no-parent";
    case ChainResult::kForeign: return "foreign";
    case ChainResult::kFound: return "found";
  }
  return "unavailable";
}

ChainResult query_chain(nccl_profiler_callback_t prof, void* phandle, NetQuery* q) noexcept {
  if (prof == nullptr || phandle == nullptr || q == nullptr) return ChainResult::kUnavailable;
  *q = NetQuery{};
  void* eh = nullptr;
  nccl_result_t rc = prof(&eh, kProfilerNetEventStart, phandle, kNetPluginId, q);
  // Our profiler returns no event; another one may. NCCL's stop path calls stopEvent(*eHandle)
  // without a NULL check, so only stop what was started.
  if (eh != nullptr) prof(&eh, kProfilerNetEventStop, nullptr, 0, nullptr);
  if (rc != kNcclSuccess || !q->answered) return ChainResult::kUnavailable;
  if (!q->found_op) return ChainResult::kNoParent;
  if (q->meta.from_coll || q->meta.from_p2p) return ChainResult::kFound;
  return q->op.foreign ? ChainResult::kForeign : ChainResult::kNoParent;
}

bool query_message_meta(nccl_profiler_callback_t prof, void* phandle,
                        policy::MessageMeta* out) noexcept {
  if (out == nullptr) return false;
  NetQuery q;
  ChainResult r = query_chain(prof, phandle, &q);
  if (r == ChainResult::kUnavailable) return false;
  if (q.found_op && q.op.peer >= 0) out->peer = q.op.peer;
  if (q.step >= 0) out->step = q.step;
  if (r != ChainResult::kFound) return true;
  const ChainMeta& m = q.meta;
  if (out->collective == policy::Collective::kUnknown) out->collective = m.func;
  if (m.dtype != policy::DataType::kUnknown) out->dtype = m.dtype;
  if (m.count != 0) {
    out->count = m.count;
    std::size_t es = policy::dtype_size(m.dtype);
    if (es != 0) out->coll_bytes = m.count * es;
  }
  if (m.has_seq) {
    out->seq = m.seq;
    out->has_seq = true;
  }
  if (m.nranks > 0) out->nranks = m.nranks;
  if (m.algo != policy::Algo::kUnknown) out->algo = m.algo;
  return true;
}

void log_chain_unavailable_once(nccl_logger_t log, const char* why) noexcept {
  static std::atomic<bool> logged{false};
  if (log == nullptr || logged.exchange(true)) return;
  log(kLogInfo, kSubsysInit | kSubsysNet, __FILE__, __LINE__,
      "Squeeze: no datatype from NCCL's profiler chain (%s): every message's dtype is \"unknown\", "
      "so only "
      "lossless codecs, or rules with assume_dtype, apply",
      why != nullptr ? why
                     : "another profiler plugin is loaded, NCCL_PROFILER_PLUGIN=none, or NCCL is "
                       "older than 2.28");
}

}  // namespace squeeze::profiler

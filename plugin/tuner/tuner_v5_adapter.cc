#include "plugin/tuner/tuner_v5_adapter.h"

#include <atomic>
#include <memory>
#include <mutex>

#include "plugin/policy/names.h"
#include "plugin/profiler/comm_registry.h"
#include "plugin/tuner/tuner.h"

namespace {

struct TunerContext {
  std::shared_ptr<const squeeze::policy::Policy> policy;  // nullptr: leave NCCL alone
  uint64_t comm_hash = 0;
  int32_t nranks = 0;
  std::once_flag comm_once;
  bool have_comm = false;
  squeeze::policy::CommMatch comm;
};

std::atomic<bool> g_logged{false};

void log_once(nccl_logger_t log, const TunerContext& c) {
  if (log == nullptr || g_logged.exchange(true)) return;
  if (c.policy == nullptr) {
    log(kLogInfo, kSubsysInit | kSubsysTuning, __FILE__, __LINE__,
        "Squeeze tuner: no Squeeze policy is active (the Squeeze net plugin is not in use); NCCL's "
        "algorithm "
        "choice is left alone");
  } else if (!c.policy->tuner_enabled()) {
    log(kLogInfo, kSubsysInit | kSubsysTuning, __FILE__, __LINE__,
        "Squeeze tuner: off (policy %s sets \"tuner\": false); NCCL's algorithm choice is left "
        "alone",
        c.policy->source().c_str());
  } else {
    log(kLogInfo, kSubsysInit | kSubsysTuning, __FILE__, __LINE__,
        "Squeeze tuner: all-reduces that policy %s compresses run on CollNet where NCCL offers it "
        "(NCCL_COLLNET_ENABLE=1), other collectives it compresses on Ring/Simple where NCCL allows "
        "it",
        c.policy->source().c_str());
  }
}

}  // namespace

namespace squeeze::tuner {

nccl_result_t init_v5(void** ctx, std::shared_ptr<const policy::Policy> policy, uint64_t commId,
                      std::size_t nRanks, nccl_logger_t logFunction) noexcept {
  if (ctx == nullptr) return kNcclInvalidArgument;
  *ctx = nullptr;
  try {
    auto c = std::make_unique<TunerContext>();
    c->policy = std::move(policy);
    if (c->policy != nullptr && !c->policy->tuner_enabled()) c->policy = nullptr;
    c->comm_hash = commId;
    c->nranks =
        nRanks > static_cast<std::size_t>(INT32_MAX) ? INT32_MAX : static_cast<int32_t>(nRanks);
    log_once(logFunction, *c);
    *ctx = c.release();
    return kNcclSuccess;
  } catch (...) {
    return kNcclInternalError;
  }
}

nccl_result_t get_coll_info_v5(void* context, int collType, std::size_t nBytes,
                               float** collCostTable, int numAlgo, int numProto) noexcept {
  auto* c = static_cast<TunerContext*>(context);
  if (c == nullptr || c->policy == nullptr || collCostTable == nullptr) return kNcclSuccess;
  try {
    // The communicator's name is known only if our profiler saw the communicator (it is
    // initialised before the tuner); resolve the policy's comm patterns once.
    std::call_once(c->comm_once, [c] {
      squeeze::profiler::CommInfo info;
      if (squeeze::profiler::lookup_comm(c->comm_hash, &info) && !info.name.empty()) {
        c->comm = c->policy->resolve_comm(info.name);
        c->have_comm = true;
      }
    });
    squeeze::tuner::CollQuery q;
    q.nccl_func = collType;
    q.nbytes = nBytes;
    q.nranks = c->nranks;
    q.comm = c->have_comm ? &c->comm : nullptr;
    squeeze::profiler::CommRegistry::instance().recent_dtype(
        c->comm_hash, squeeze::policy::collective_from_nccl_func(collType), nBytes, &q.dtype_hint);
    // NCCL passes float[numAlgo][numProto] cast to float**.
    squeeze::tuner::steer(*c->policy, q, reinterpret_cast<float*>(collCostTable), numAlgo,
                          numProto);
  } catch (...) {
    // Leave the table as NCCL made it.
  }
  return kNcclSuccess;
}

nccl_result_t finalize_v5(void* context) noexcept {
  delete static_cast<TunerContext*>(context);
  return kNcclSuccess;
}

}  // namespace squeeze::tuner

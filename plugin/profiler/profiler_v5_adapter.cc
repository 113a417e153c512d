#include "plugin/profiler/profiler_v5_adapter.h"

#include "plugin/profiler/chain_profiler.h"

using squeeze::profiler::ChainProfiler;

// NCCL ignores the profiler's errors except init's ("Continue without profiler"), so a failure
// inside an event callback just means "no event": the message's dtype becomes unknown.

extern "C" nccl_result_t squeeze_profiler_v5_init(void** context, uint64_t commId,
                                                  int* eActivationMask, const char* commName,
                                                  int nNodes, int nranks, int rank,
                                                  nccl_logger_t logfn) {
  try {
    return ChainProfiler::instance().init(context, commId, eActivationMask, commName, nNodes,
                                          nranks, rank, logfn);
  } catch (...) {
    if (eActivationMask != nullptr) *eActivationMask = 0;
    if (context != nullptr) *context = nullptr;
    return kNcclInternalError;
  }
}

extern "C" nccl_result_t squeeze_profiler_v5_start_event(void* context, void** eHandle,
                                                         nccl_profiler_event_descr_v5* eDescr) {
  try {
    return ChainProfiler::instance().start(context, eHandle, eDescr);
  } catch (...) {
    if (eHandle != nullptr) *eHandle = nullptr;
    return kNcclSuccess;
  }
}

extern "C" nccl_result_t squeeze_profiler_v5_stop_event(void* eHandle) {
  try {
    return ChainProfiler::instance().stop(eHandle);
  } catch (...) {
    return kNcclSuccess;
  }
}

extern "C" nccl_result_t squeeze_profiler_v5_record_event_state(
    void* eHandle, nccl_profiler_event_state_t eState,
    nccl_profiler_event_state_args_v5* eStateArgs) {
  try {
    return ChainProfiler::instance().record(eHandle, eState, eStateArgs);
  } catch (...) {
    return kNcclSuccess;
  }
}

extern "C" nccl_result_t squeeze_profiler_v5_finalize(void* context) {
  try {
    return ChainProfiler::instance().finalize(context);
  } catch (...) {
    return kNcclSuccess;
  }
}

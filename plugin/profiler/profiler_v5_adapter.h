// The C edge of the built-in profiler: functions with NCCL's ncclProfiler_v5 signatures that
// forward to ChainProfiler::instance() and never let an exception out. The exported table
// (plugin/exports/profiler_v5.cc, symbol "ncclProfiler_v5") is made of these.
#pragma once

#include "plugin/nccl/profiler_abi.h"

extern "C" {
nccl_result_t squeeze_profiler_v5_init(void** context, uint64_t commId, int* eActivationMask,
                                       const char* commName, int nNodes, int nranks, int rank,
                                       nccl_logger_t logfn);
nccl_result_t squeeze_profiler_v5_start_event(void* context, void** eHandle,
                                              nccl_profiler_event_descr_v5* eDescr);
nccl_result_t squeeze_profiler_v5_stop_event(void* eHandle);
nccl_result_t squeeze_profiler_v5_record_event_state(void* eHandle,
                                                     nccl_profiler_event_state_t eState,
                                                     nccl_profiler_event_state_args_v5* eStateArgs);
nccl_result_t squeeze_profiler_v5_finalize(void* context);
}

namespace squeeze::profiler {
inline constexpr const char* kProfilerName = "Squeeze";
// The same table the library exports, for tests that play NCCL's side without dlopen.
inline nccl_profiler_v5 profiler_v5_table() {
  return {kProfilerName,
          squeeze_profiler_v5_init,
          squeeze_profiler_v5_start_event,
          squeeze_profiler_v5_stop_event,
          squeeze_profiler_v5_record_event_state,
          squeeze_profiler_v5_finalize};
}
}  // namespace squeeze::profiler

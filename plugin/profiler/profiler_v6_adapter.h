// The built-in profiler behind NCCL 2.30's ncclProfiler_v6 table. v6 differs from v5 only in
// its event descriptor, which adds copy-engine collective events (CeColl, CeSync, CeBatch) to
// the union: startEvent converts each v5 event type to the v5 descriptor ChainProfiler reads
// and gives every other type no event (a NULL handle, success). init, stopEvent,
// recordEventState (v6's state arguments are v5's) and finalize are the v5 functions. The
// exported table (plugin/exports/profiler_v6.cc, symbol "ncclProfiler_v6") is made of these.
#pragma once

#include "plugin/nccl/profiler_abi.h"
#include "plugin/profiler/profiler_v5_adapter.h"

extern "C" {
nccl_result_t squeeze_profiler_v6_start_event(void* context, void** eHandle,
                                              nccl_profiler_event_descr_v6* eDescr);
}

namespace squeeze::profiler {

// The v5 descriptor of a v6 event: false for the types v5 does not have (the copy-engine ones,
// or any later addition), which carry nothing the chain needs.
bool to_v5(const nccl_profiler_event_descr_v6& in, nccl_profiler_event_descr_v5* out);

// The same table the library exports, for tests that play NCCL's side without dlopen.
constexpr nccl_profiler_v6 profiler_v6_table() {
  return {kProfilerName,
          squeeze_profiler_v5_init,
          squeeze_profiler_v6_start_event,
          squeeze_profiler_v5_stop_event,
          squeeze_profiler_v5_record_event_state,
          squeeze_profiler_v5_finalize};
}

}  // namespace squeeze::profiler

// The built-in profiler's table. NCCL 2.28/2.30 dlsym()s "ncclProfiler_v5" in the net
// plugin's library when NCCL_PROFILER_PLUGIN is unset and no libnccl-profiler.so is found
// (src/plugin/profiler.cc:54-70, src/plugin/profiler/profiler_v5.cc:15 in NCCL 2.28.9); NCCL
// 2.30 takes ncclProfiler_v6 (profiler_v6.cc) first. The symbol must be listed in exports.map.
#include "plugin/profiler/profiler_v5_adapter.h"

extern "C" {
__attribute__((visibility("default"))) extern nccl_profiler_v5 ncclProfiler_v5;
nccl_profiler_v5 ncclProfiler_v5 = {
    squeeze::profiler::kProfilerName,       squeeze_profiler_v5_init,
    squeeze_profiler_v5_start_event,        squeeze_profiler_v5_stop_event,
    squeeze_profiler_v5_record_event_state, squeeze_profiler_v5_finalize,
};
}

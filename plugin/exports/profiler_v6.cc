// The built-in profiler's v6 table (NCCL 2.30). NCCL 2.30.7's src/plugin/profiler.cc looks for
// "ncclProfiler_v6" first, then v5 down to v1, in the library NCCL_PROFILER_PLUGIN names or,
// when that is unset and no libnccl-profiler.so is found, in the net plugin's library; so NCCL
// 2.30 loads this table and NCCL 2.28.9, which knows v5 at most, loads ncclProfiler_v5. Both
// drive the same ChainProfiler. The symbol must be listed in exports.map.
#include "plugin/profiler/profiler_v6_adapter.h"

extern "C" {
__attribute__((visibility("default"))) extern nccl_profiler_v6 ncclProfiler_v6;
constinit nccl_profiler_v6 ncclProfiler_v6 = squeeze::profiler::profiler_v6_table();
}

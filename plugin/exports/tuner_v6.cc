// The built-in tuner's v6 table (NCCL 2.30): v5's functions (tuner_entries.h) and no
// getChunkSize. NCCL 2.30.7's src/plugin/tuner.cc looks for "ncclTunerPlugin_v6" first, then
// v5 down to v2, in the library NCCL_TUNER_PLUGIN names or, when that is unset and no
// libnccl-tuner.so is found, in the net plugin's library: NCCL 2.30 loads this table, NCCL
// 2.28.9 (which knows v5 at most) loads ncclTunerPlugin_v5. The symbol must be listed in
// exports.map.
//
// getChunkSize is NULL, which NCCL documents as "use NCCL's computed chunk size", everywhere.
// Squeeze compresses collectives only on Ring/Simple (plugin/tuner/tuner.h). For Ring/Simple,
// NCCL 2.30.7's computeCollChunkInfo (src/enqueue.cc) starts from stepSize * chunkSteps, which
// is also the buffer's maximum, and clamps any larger answer from the tuner back to it: a tuner
// can only make those chunks, and so the network messages we compress, smaller. We have no
// measurement showing that smaller messages help a compressed collective, and cannot make one
// here (the NCCL we run on GPUs, PyTorch's 2.28.9, never calls getChunkSize). Until a
// measurement under NCCL 2.30 shows a size that helps, NCCL's choice stands.
#include "plugin/exports/tuner_entries.h"

extern "C" {
__attribute__((visibility("default"))) extern nccl_tuner_v6 ncclTunerPlugin_v6;
nccl_tuner_v6 ncclTunerPlugin_v6 = {
    .name = squeeze::tuner::kTunerName,
    .init = squeeze::plugin::entries::tuner_init,
    .getCollInfo = squeeze::plugin::entries::tuner_get_coll_info,
    .finalize = squeeze::tuner::finalize_v5,
    .getChunkSize = nullptr,
};
}

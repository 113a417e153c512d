// The built-in tuner's table. NCCL 2.28/2.30 dlsym()s "ncclTunerPlugin_v5" in the net
// plugin's library when NCCL_TUNER_PLUGIN is unset and no libnccl-tuner.so is found
// (src/plugin/tuner.cc:56-72, src/plugin/tuner/tuner_v5.cc:15 in NCCL 2.28.9).
// The symbol must be listed in exports.map.
#include "plugin/tuner/tuner_v5_adapter.h"

extern "C" {
__attribute__((visibility("default"))) extern nccl_tuner_v5 ncclTunerPlugin_v5;
nccl_tuner_v5 ncclTunerPlugin_v5 = {
    squeeze::tuner::kTunerName,
    squeeze_tuner_v5_init,
    squeeze_tuner_v5_get_coll_info,
    squeeze_tuner_v5_finalize,
};
}

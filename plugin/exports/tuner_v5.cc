// The built-in tuner's table. NCCL 2.28/2.30 dlsym()s "ncclTunerPlugin_v5" in the net
// plugin's library when NCCL_TUNER_PLUGIN is unset and no libnccl-tuner.so is found
// (src/plugin/tuner.cc:56-72, src/plugin/tuner/tuner_v5.cc:15 in NCCL 2.28.9); NCCL 2.30 takes
// ncclTunerPlugin_v6 (tuner_v6.cc) first. The symbol must be listed in exports.map. The tuner
// steers with the net plugin's policy.
#include "plugin/exports/tuner_entries.h"

extern "C" {
__attribute__((visibility("default"))) extern nccl_tuner_v5 ncclTunerPlugin_v5;
nccl_tuner_v5 ncclTunerPlugin_v5 = {
    squeeze::tuner::kTunerName,
    squeeze::plugin::entries::tuner_init,
    squeeze::plugin::entries::tuner_get_coll_info,
    squeeze::tuner::finalize_v5,
};
}

// The built-in tuner's table. NCCL 2.28/2.30 dlsym()s "ncclTunerPlugin_v5" in the net
// plugin's library when NCCL_TUNER_PLUGIN is unset and no libnccl-tuner.so is found
// (src/plugin/tuner.cc:56-72, src/plugin/tuner/tuner_v5.cc:15 in NCCL 2.28.9).
// The symbol must be listed in exports.map. The tuner steers with the net plugin's policy.
#include "plugin/engine/net.h"
#include "plugin/tuner/tuner_v5_adapter.h"

namespace {

nccl_result_t init(void** ctx, uint64_t comm_id, std::size_t nranks, std::size_t, nccl_logger_t log,
                   nccl_nvl_domain_info_v5*, nccl_tuner_constants_v5*) {
  std::shared_ptr<const squeeze::policy::Policy> policy;
  try {
    policy = squeeze::plugin::Net::instance().policy();
  } catch (...) {
    // No policy: the tuner leaves NCCL alone.
  }
  return squeeze::tuner::init_v5(ctx, std::move(policy), comm_id, nranks, log);
}

nccl_result_t get_coll_info(void* ctx, int coll_type, std::size_t nbytes, int, float** table, int num_algo,
                            int num_proto, int, int*) {
  return squeeze::tuner::get_coll_info_v5(ctx, coll_type, nbytes, table, num_algo, num_proto);
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) extern nccl_tuner_v5 ncclTunerPlugin_v5;
nccl_tuner_v5 ncclTunerPlugin_v5 = {
    squeeze::tuner::kTunerName,
    init,
    get_coll_info,
    squeeze::tuner::finalize_v5,
};
}

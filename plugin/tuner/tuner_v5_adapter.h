// The C edge of the built-in tuner: functions with NCCL's ncclTuner_v5 signatures. The
// exported table (plugin/exports/tuner_v5.cc, symbol "ncclTunerPlugin_v5") is made of these.
// The tuner uses the policy the net plugin published with policy::set_active_policy(); with
// none (the net plugin is not in use) or with "tuner": false it leaves NCCL's choice alone.
#pragma once

#include "plugin/nccl/tuner_abi.h"

extern "C" {
nccl_result_t squeeze_tuner_v5_init(void** ctx, uint64_t commId, std::size_t nRanks, std::size_t nNodes,
                                    nccl_logger_t logFunction, nccl_nvl_domain_info_v5* nvlDomainInfo,
                                    nccl_tuner_constants_v5* constants);
nccl_result_t squeeze_tuner_v5_get_coll_info(void* context, int collType, std::size_t nBytes, int numPipeOps,
                                             float** collCostTable, int numAlgo, int numProto, int regBuff,
                                             int* nChannels);
nccl_result_t squeeze_tuner_v5_finalize(void* context);
}

namespace squeeze::tuner {
inline constexpr const char* kTunerName = "Squeeze";
inline nccl_tuner_v5 tuner_v5_table() {
  return {kTunerName, squeeze_tuner_v5_init, squeeze_tuner_v5_get_coll_info, squeeze_tuner_v5_finalize};
}
}  // namespace squeeze::tuner

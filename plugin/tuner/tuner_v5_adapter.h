// The built-in tuner behind NCCL's ncclTuner_v5 signatures. The exported table
// (plugin/exports/tuner_v5.cc, symbol "ncclTunerPlugin_v5") wraps these, handing init the
// running net plugin's policy; with none (the net plugin is not in use) or with
// "tuner": false the tuner leaves NCCL's choice alone. Nothing here throws.
#pragma once

#include <memory>

#include "plugin/nccl/tuner_abi.h"
#include "plugin/policy/policy.h"

namespace squeeze::tuner {

inline constexpr const char* kTunerName = "Squeeze";

nccl_result_t init_v5(void** ctx, std::shared_ptr<const policy::Policy> policy, uint64_t comm_id,
                      std::size_t nranks, nccl_logger_t log) noexcept;
nccl_result_t get_coll_info_v5(void* context, int coll_type, std::size_t nbytes, float** cost_table,
                               int num_algo, int num_proto) noexcept;
nccl_result_t finalize_v5(void* context) noexcept;

}  // namespace squeeze::tuner

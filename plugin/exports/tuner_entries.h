// The built-in tuner's entry points shared by the v5 and v6 tables (NCCL 2.30.7's tuner_v6.h
// keeps v5's init and getCollInfo signatures and types): init hands the tuner the running net
// plugin's policy, which only code in plugin/exports may ask Net::instance() for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "plugin/engine/net.h"
#include "plugin/tuner/tuner_v5_adapter.h"

namespace squeeze::plugin::entries {

inline nccl_result_t tuner_init(void** ctx, uint64_t comm_id, std::size_t nranks, std::size_t,
                                nccl_logger_t log, nccl_nvl_domain_info_v5*,
                                nccl_tuner_constants_v5*) {
  std::shared_ptr<const policy::Policy> policy;
  try {
    policy = Net::instance().policy();
  } catch (...) {
    // No policy: the tuner leaves NCCL alone.
  }
  return tuner::init_v5(ctx, std::move(policy), comm_id, nranks, log);
}

inline nccl_result_t tuner_get_coll_info(void* ctx, int coll_type, std::size_t nbytes, int,
                                         float** table, int num_algo, int num_proto, int, int*) {
  return tuner::get_coll_info_v5(ctx, coll_type, nbytes, table, num_algo, num_proto);
}

}  // namespace squeeze::plugin::entries

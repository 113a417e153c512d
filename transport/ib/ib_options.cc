#include "transport/ib/ib_options.h"

#include <cstdlib>

#include "transport/env_int.h"

namespace squeeze::transport::ib {

std::string IbOptions::from_env(IbOptions* out) {
  IbOptions o;
  int flag = 1;
  int entries = static_cast<int>(o.mr_cache_entries);
  for (std::string bad : {env_int("SQUEEZE_IB_QPS_PER_CONN", 1, kMaxQpsPerConn, &o.qps_per_conn),
                          env_int("SQUEEZE_IB_GID_INDEX", -1, 255, &o.gid_index),
                          env_int("SQUEEZE_IB_TIMEOUT", 1, 31, &o.timeout),
                          env_int("SQUEEZE_IB_RETRY_CNT", 0, 7, &o.retry_cnt),
                          env_int("SQUEEZE_IB_SL", 0, 15, &o.service_level),
                          env_int("SQUEEZE_IB_TC", 0, 255, &o.traffic_class),
                          env_int("SQUEEZE_IB_GDR", -1, 1, &o.gdr),
                          env_int("SQUEEZE_IB_MR_CACHE", 1, 1 << 20, &entries)}) {
    if (!bad.empty()) return bad;
  }
  o.mr_cache_entries = static_cast<std::size_t>(entries);
  if (std::string bad = env_int("SQUEEZE_IB_GDR_FLUSH", 0, 1, &flag); !bad.empty()) return bad;
  o.gdr_flush = flag != 0;
  flag = 1;
  if (std::string bad = env_int("SQUEEZE_IB_DMABUF", 0, 1, &flag); !bad.empty()) return bad;
  o.dmabuf = flag != 0;
  if (const char* h = std::getenv("SQUEEZE_IB_HCA"); h != nullptr) o.hca = h;
  *out = std::move(o);
  return "";
}

}  // namespace squeeze::transport::ib

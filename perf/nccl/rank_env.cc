#include "perf/nccl/rank_env.h"

#include <cstdlib>
#include <cstring>

#include "perf/nccl/paths.h"

extern char** environ;

namespace squeeze::perf::nccl {

std::map<std::string, std::string> mode_env(const Options& o, const Mode& m,
                                            const std::string& plugin, const std::string& run_dir,
                                            int rank, int pid, const char* (*lookup)(const char*)) {
  std::map<std::string, std::string> set;
  auto dflt = [&](const char* k, const std::string& v) {
    const char* cur = lookup != nullptr ? lookup(k) : std::getenv(k);
    set[k] = cur != nullptr && *cur != '\0' ? cur : v;
  };
  // A different host id per rank: NCCL then sees one GPU per host and uses the net between
  // them, even for ranks on the same GPU (no P2P, SHM or NVLS path exists across hosts).
  set["NCCL_HOSTID"] = "squeeze-nccl-perf-" + std::to_string(pid) + "-rank" + std::to_string(rank);
  dflt("NCCL_IB_DISABLE", "1");
  dflt("NCCL_P2P_DISABLE", "1");
  dflt("NCCL_SHM_DISABLE", "1");
  dflt("NCCL_NVLS_ENABLE", "0");
  // Each rank is a node of its own, so two or more ranks pass NCCL's CollNet node threshold.
  const bool collnet = o.collnet && !m.socket;
  dflt("NCCL_COLLNET_ENABLE", collnet ? "1" : "0");
  dflt("NCCL_ALGO", collnet ? kCollNetAlgo : "Ring");
  set["NCCL_SOCKET_IFNAME"] = o.ifname;
  if (m.socket) {
    set["NCCL_NET"] = "Socket";
    set["NCCL_NET_PLUGIN"] = "none";
    set["SQUEEZE_POLICY"] = "";
    set["SQUEEZE_STATS"] = "";
    return set;
  }
  set["NCCL_NET"] = "Squeeze";
  set["NCCL_NET_PLUGIN"] = plugin;
  set["NCCL_NET_PLUGIN_REF_COUNT"] = "1";  // keep the plugin loaded between communicators
  set["SQUEEZE_POLICY"] = m.policy.empty() ? "" : absolute_path(m.policy);
  set["SQUEEZE_STATS"] = run_dir + "/stats.json";
  set["SQUEEZE_RANK"] = std::to_string(rank);
  set["SQUEEZE_SOCKET_IFNAME"] = o.ifname;
  if (!o.bypass.empty()) set["SQUEEZE_BYPASS"] = o.bypass;
  return set;
}

std::vector<std::string> rank_env(const std::map<std::string, std::string>& set) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& [k, v] : set) {
    if (v.empty())
      env.erase(k);
    else
      env[k] = v;
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace squeeze::perf::nccl

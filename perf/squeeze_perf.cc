// squeeze-perf: the collective emulator. N ranks (forked here with -n, or one per process
// across namespaces or hosts with --rank/--nranks/--rendezvous) run ring all-reduce and
// all-to-all on host buffers through the Squeeze plugin, driving its ncclNetPlugin_v11 table
// the way NCCL 2.28's proxy does (regMr order, setNetAttr, profiler chain, Simple-protocol
// slots and steps, non-blocking everything), or all-reduce on its collective network
// (--route collnet: ncclCollNetPlugin_v11 as NCCL's CollNetChain proxy drives it, one rank per
// node), and print nccl-tests' table with Squeeze's
// columns after it: the compression ratio, the max error against the exact result, the
// policy's stated bound (#wrong counts the elements beyond it) and rank agreement.
// See perf/collective/options.cc for the options.
#include <net/if.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "perf/collective/bootstrap.h"
#include "perf/collective/options.h"
#include "perf/collective/plugin_lib.h"
#include "perf/collective/runner.h"
#include "perf/collective/scoped_env.h"
#include "perf/collective/stats_file.h"
#include "perf/collective/table.h"
#include "perf/common/dtype_names.h"
#include "perf/common/nccl_table.h"
#include "perf/common/plugin_log.h"
#include "plugin/params/params.h"
#include "plugin/policy/policy_load.h"

namespace {

using namespace squeeze::perf;

std::vector<std::size_t> size_list(const Options& o) {
  std::vector<std::size_t> v;
  for (std::size_t s = o.min_bytes; s <= o.max_bytes; s *= o.step_factor) {
    v.push_back(s);
    if (s > o.max_bytes / o.step_factor) break;
  }
  if (v.back() != o.max_bytes) v.push_back(o.max_bytes);
  return v;
}

// What --check requires of one row; prints why a row fails to stderr.
bool row_passes(const Options& o, const Row& r) {
  std::string why;
  if (r.wrong > 0)
    why = std::to_string(r.wrong) + " elements beyond the stated bound (" + r.bound +
          "), counted over ranks and iterations (max error " + std::to_string(r.max_err) + ")";
  if (o.max_error >= 0 && !(r.max_err <= o.max_error))
    why += std::string(why.empty() ? "" : "; ") + "max error " + std::to_string(r.max_err) +
           " above --max-error " + std::to_string(o.max_error);
  if (r.agree == 0 && r.agree_required)
    why += std::string(why.empty() ? "" : "; ") + "ranks' outputs differ";
  if (why.empty()) return true;
  log_line("squeeze-perf: check failed: %s%s %zu bytes: %s", r.arm == "baseline" ? "baseline " : "",
           r.collective.c_str(), r.bytes, why.c_str());
  return false;
}

// The policy an instance runs, as the plugin loaded it (its init has succeeded): `file`, or
// the built-in default when empty. For the bounds the rows state.
std::shared_ptr<const squeeze::policy::Policy> policy_of(const std::string& file) {
  std::string error;
  auto p = squeeze::policy::load_policy(file.empty() ? nullptr : file.c_str(), &error);
  if (!p) throw std::runtime_error("policy " + file + ": " + error);
  return p;
}

// A policy file named by `option`: false (said on stderr) unless readable; else *path becomes
// absolute where it can, so that ranks in other working directories find it too.
bool readable_policy(const char* option, std::string* path) {
  if (access(path->c_str(), R_OK) != 0) {
    std::fprintf(stderr, "squeeze-perf: %s %s: %s\n", option, path->c_str(), std::strerror(errno));
    return false;
  }
  if (char* abs = realpath(path->c_str(), nullptr)) {
    *path = abs;
    std::free(abs);
  }
  return true;
}

constexpr int kRankFailed = 3;  // an error, as opposed to a failed --check (1)

int run_rank(const Options& o, int rank, const HostPort& where, Fd listener) {
  // Before the plugin loads: it names its statistics file after SQUEEZE_RANK and reads
  // SQUEEZE_STATS at init.
  setenv("SQUEEZE_RANK", std::to_string(rank).c_str(), 1);
  set_log_tag("rank " + std::to_string(rank));
  StatsFile stats(rank);
  StatsFile baseline_stats(rank, true);
  Bootstrap boot(rank, o.nranks, where, std::move(listener), o.timeout_s);
  const std::string plugin = o.plugin.empty() ? std::string(SQUEEZE_PLUGIN_PATH) : o.plugin;
  PluginLib lib(plugin);
  std::optional<PluginLib> baseline;
  if (!o.baseline_policy.empty()) baseline.emplace(plugin, PluginLib::Load::kPrivateCopy);

  // Rank 0 picks the communicators' ids, as NCCL derives commHash from the unique id.
  uint64_t base =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (static_cast<uint64_t>(getpid()) << 40);
  base = boot.allgather(base)[0];

  RunInfo info;
  info.nranks = o.nranks;
  info.plugin = plugin;
  const squeeze::params::Value pol =
      squeeze::params::Settings::read_env(squeeze::params::Id::kPolicy, nullptr);
  info.policy = pol.set ? pol.text : "default";
  info.baseline_policy = o.baseline_policy;
  info.ifname = o.ifname;
  info.dtype = nccl_tests_type_name(o.dtype);
  info.label = o.label;
  info.chain = !o.chain ? "off (--chain off): the plugin sees dtype unknown"
               : lib.profiler() != nullptr
                   ? "on (ncclProfiler_v5 found in the plugin)"
                   : "unavailable: the plugin exports no ncclProfiler_v5, so its dtype is unknown";
  info.chain_active = o.chain && lib.profiler() != nullptr;
  info.gpu_copies = o.gpu_copies;
  info.route = route_name(o.route);
  info.baseline_route = route_name(o.baseline_route);
  info.collnet_channels = o.collnet_channels;
  const bool root = rank == 0;

  // The first init makes the plugin discover its devices (and load its policy: the baseline
  // instance reads its own SQUEEZE_POLICY here).
  int dev = 0;
  for (const PluginLib* l : {&lib, baseline ? &*baseline : nullptr}) {
    if (l == nullptr) continue;
    ScopedEnv env("SQUEEZE_POLICY", l != &lib ? o.baseline_policy : std::string());
    void* ctx = nullptr;
    nccl_net_comm_config cfg{-1};
    check_nccl(l->net()->init(&ctx, base, &cfg, perf_logger, nullptr), "init");
    dev = l->device(o.ifname);
    ScopedEnv writes_to = (l != &lib ? baseline_stats : stats).plugin_writes_here();
    if (l->net()->finalize != nullptr) l->net()->finalize(ctx);
  }
  if (root && !o.json) print_header(info);
  const auto policy = policy_of(pol.text);
  const auto baseline_policy = baseline ? policy_of(o.baseline_policy) : nullptr;

  // Without the profiler chain the ring knows no dtype, so nothing lossy applies there: exact.
  RankContext ctx{o,
                  boot,
                  lib,
                  stats,
                  dev,
                  base,
                  0,
                  baseline ? &*baseline : nullptr,
                  &baseline_stats,
                  policy.get(),
                  baseline_policy.get(),
                  info.chain_active};
  bool ok = true;
  ResultTable table;
  for (int c = 0; c < 2; ++c) {
    if ((c == 0 && !o.do_allreduce) || (c == 1 && !o.do_alltoall)) continue;
    if (root && !o.json) {
      std::printf("# %s: data %s%s%s\n", c == 0 ? "allreduce" : "alltoall",
                  (c == 0 ? o.ar_data : o.a2a_data).c_str(), c == 0 ? ", route " : "",
                  c == 0 ? route_name(o.route) : "");
      table.header();
    }
    for (std::size_t bytes : size_list(o)) {
      if (c == 1 &&
          bytes < static_cast<std::size_t>(o.nranks) * squeeze::compress::dtype_size(o.dtype))
        continue;
      std::vector<Row> rows = c == 0 ? run_allreduce(ctx, bytes) : run_alltoall(ctx, bytes);
      if (!root) continue;
      for (const Row& row : rows) {
        if (o.json)
          print_json(row, info);
        else if (row.arm == "baseline")
          print_baseline(rows[0], row);
        else
          table.row(table_row(row));
        if (o.check) ok = row_passes(o, row) && ok;
      }
    }
    if (root && !o.json) table.footer();
  }
  boot.barrier();  // nobody closes the bootstrap while others still read from it
  return ok ? 0 : 1;
}

int guarded(const Options& o, int rank, const HostPort& where, Fd listener) {
  try {
    return run_rank(o, rank, where, std::move(listener));
  } catch (const std::exception& e) {
    log_line("squeeze-perf: %s", e.what());
    return kRankFailed;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  if (!o.policy.empty()) {
    if (!readable_policy("--policy", &o.policy)) return 2;
    setenv("SQUEEZE_POLICY", o.policy.c_str(), 1);
  }
  if (!o.baseline_policy.empty() && !readable_policy("--baseline", &o.baseline_policy)) return 2;
  if (!o.ifname.empty()) {
    // The plugin's device is picked by this exact name; say so here rather than let the
    // plugin's init fail for want of an interface.
    if (if_nametoindex(o.ifname.c_str()) == 0) {
      std::string names;
      if (struct if_nameindex* all = if_nameindex()) {
        for (struct if_nameindex* i = all; i->if_name != nullptr; ++i)
          names += (names.empty() ? "" : ", ") + std::string(i->if_name);
        if_freenameindex(all);
      }
      std::fprintf(stderr,
                   "squeeze-perf: --ifname '%s': expected a network interface of this host (%s)\n",
                   o.ifname.c_str(), names.c_str());
      return 2;
    }
    setenv("SQUEEZE_SOCKET_IFNAME", o.ifname.c_str(), 1);
  }

  HostPort where;
  try {
    where = parse_host_port(o.rendezvous);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "squeeze-perf: %s\n", e.what());
    return 2;
  }
  if (o.local_ranks == 0) {
    StatsDir stats_dir(o.rank, 1);
    return guarded(o, o.rank, where, Fd()) == 0 ? 0 : 1;
  }
  // As torchrun does: the plugin sizes its codec threads by the ranks sharing the host.
  setenv("LOCAL_WORLD_SIZE", std::to_string(o.local_ranks).c_str(), 0);

  // Local ranks: rank 0 (this process) holds the rendezvous socket before anyone forks, so
  // the children know the port; each child loads the plugin itself, after the fork.
  Fd listener;
  try {
    listener = listen_on(where, &where.port);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "squeeze-perf: %s\n", e.what());
    return 1;
  }
  StatsDir stats_dir(0, o.local_ranks);  // shared by the ranks; each writes its own file
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int r = 1; r < o.local_ranks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      std::fprintf(stderr, "squeeze-perf: fork failed: %s\n", std::strerror(errno));
      for (pid_t c : children) kill(c, SIGTERM);
      for (pid_t c : children) waitpid(c, nullptr, 0);
      return 1;
    }
    if (pid == 0) {  // never returns: stats_dir belongs to the parent
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      listener.reset();
      std::fflush(nullptr);
      _exit(guarded(o, r, where, Fd()));
    }
    children.push_back(pid);
  }
  int rc = guarded(o, 0, where, std::move(listener));
  for (pid_t c : children) {
    int st = 0;
    if (rc == kRankFailed) kill(c, SIGTERM);  // they may be waiting on rank 0
    if (waitpid(c, &st, 0) == c && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) rc = rc == 0 ? 1 : rc;
  }
  return rc == 0 ? 0 : 1;
}

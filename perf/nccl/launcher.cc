#include "perf/nccl/launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "perf/nccl/nccl_lib.h"
#include "perf/nccl/paths.h"
#include "perf/nccl/rank.h"
#include "perf/nccl/rank_env.h"
#include "perf/nccl/report.h"
#include "perf/nccl/run_files.h"
#include "plugin/policy/policy_load.h"

namespace squeeze::perf::nccl {
namespace {

class Ranks {
 public:
  ~Ranks() { kill_all(SIGKILL); }
  void start(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::vector<char*> argv, envp;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // a rank never outlives its launcher
      if (getppid() != parent) _exit(kExitRankError);
      execve(argv[0], argv.data(), envp.data());
      std::fprintf(stderr, "squeeze-nccl-perf: exec %s: %s\n", argv[0], std::strerror(errno));
      _exit(kExitRankError);
    }
    pids_.push_back(pid);
  }
  // Waits for every rank. The first that fails with an error (not a failed check) ends the
  // others after a grace period; so does the timeout. Returns the worst exit code.
  int wait(double timeout_s, const std::string& mode) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int worst = 0;
    bool killing = false;
    auto killed_at = std::chrono::steady_clock::now();
    while (running() > 0) {
      int st = 0;
      const pid_t p = waitpid(-1, &st, WNOHANG);
      if (p > 0) {
        for (auto& q : pids_) q = q == p ? -1 : q;
        const int code = WIFEXITED(st) ? WEXITSTATUS(st) : kExitRankError;
        if (WIFSIGNALED(st) && !killing)
          std::fprintf(stderr, "squeeze-nccl-perf: mode %s: a rank died of signal %d\n",
                       mode.c_str(), WTERMSIG(st));
        if (code != 0 && code != kExitCheckFailed && !killing) {
          killing = true;
          killed_at = std::chrono::steady_clock::now();
          kill_all(SIGTERM);
        }
        worst = code == 0 ? worst : (worst == 0 || code == kExitRankError ? code : worst);
        continue;
      }
      if (!killing && std::chrono::steady_clock::now() > deadline) {
        std::fprintf(
            stderr,
            "squeeze-nccl-perf: mode %s: ranks still running after --timeout %d s; stopping them\n",
            mode.c_str(), static_cast<int>(timeout_s));
        killing = true;
        killed_at = std::chrono::steady_clock::now();
        worst = kExitRankError;
        kill_all(SIGTERM);
      }
      if (killing && std::chrono::steady_clock::now() - killed_at > std::chrono::seconds(10)) {
        kill_all(SIGKILL);  // a rank stuck in the driver ignores nothing but this
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return worst;
  }

 private:
  int running() const {
    int n = 0;
    for (pid_t p : pids_) n += p > 0 ? 1 : 0;
    return n;
  }
  void kill_all(int sig) {
    for (pid_t p : pids_)
      if (p > 0) kill(p, sig);
    if (sig != SIGKILL) return;
    for (pid_t& p : pids_)
      if (p > 0) waitpid(p, nullptr, 0), p = -1;
  }
  std::vector<pid_t> pids_;
};

// Rank argv: the work options as given, plus what the launcher decided.
std::vector<std::string> rank_args(const Options& o, const std::string& exe, const std::string& lib,
                                   const std::string& run_dir, const Mode& m, int rank) {
  std::vector<std::string> a = {exe};
  a.insert(a.end(), o.work_args.begin(), o.work_args.end());
  std::string gpus;
  for (int g : o.gpus) {
    if (!gpus.empty()) gpus += ',';
    gpus += std::to_string(g);
  }
  for (const std::string& s :
       {std::string("-N"), std::to_string(o.nranks), std::string("--gpus"), gpus,
        std::string("--nccl-lib"), lib, std::string("--timeout"),
        std::to_string(static_cast<int>(o.timeout_s)), std::string("--run-dir"), run_dir,
        std::string("--mode"), m.name, std::string("--rank"), std::to_string(rank)})
    a.push_back(s);
  return a;
}

int run_mode(const Options& o, const Mode& m, const std::string& lib, const std::string& plugin,
             std::vector<Row>* rows) {
  RunDir dir(o.keep_dir, m.name);
  Ranks ranks;
  const std::string exe = self_exe();
  for (int r = 0; r < o.nranks; ++r)
    ranks.start(rank_args(o, exe, lib, dir.path(), m, r),
                rank_env(mode_env(o, m, plugin, dir.path(), r, getpid())));
  const int rc = ranks.wait(o.timeout_s, m.name);
  for (const std::string& line : read_lines(dir.path(), "rows.jsonl")) {
    Row r;
    if (parse_row_json(line, &r)) rows->push_back(r);
  }
  return rc;
}

}  // namespace

int launch(const Options& o) {
  // Usage errors first, GPU or not: every policy must parse.
  for (const Mode& m : o.modes) {
    if (m.socket) continue;
    std::string error;
    if (!policy::load_policy(m.policy.empty() ? nullptr : m.policy.c_str(), &error)) {
      std::fprintf(stderr, "squeeze-nccl-perf: mode %s: %s\n", m.name.c_str(), error.c_str());
      return kExitUsage;
    }
  }
  int ndev = 0;
  const cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    std::printf("squeeze-nccl-perf: SKIP: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0 devices");
    return kExitSkip;
  }
  for (int g : o.gpus) {
    if (g >= ndev) {
      std::fprintf(stderr, "squeeze-nccl-perf: --gpus: device %d does not exist (%d found)\n", g,
                   ndev);
      return kExitUsage;
    }
  }
  // The rest a rank would fail on is checked once, here, with a clear message.
  std::string lib_path;
  try {
    NcclLib lib(o.nccl_lib);
    lib_path = lib.path();
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "squeeze-nccl-perf: %s\n", ex.what());
    return kExitUsage;
  }
  const std::string plugin = absolute_path(o.plugin.empty() ? default_plugin_path() : o.plugin);
  bool need_plugin = false;
  for (const Mode& m : o.modes) need_plugin = need_plugin || !m.socket;
  if (need_plugin && !file_exists(plugin)) {
    std::fprintf(stderr,
                 "squeeze-nccl-perf: the plugin %s does not exist (build nccl-net-squeeze or pass "
                 "--plugin)\n",
                 plugin.c_str());
    return kExitUsage;
  }

  std::vector<Row> rows;
  int worst = 0;
  for (const Mode& m : o.modes) {
    if (o.modes.size() > 1 && !o.json) std::printf("\n");
    const int rc = run_mode(o, m, lib_path, plugin, &rows);
    if (rc == kExitRankError)
      std::fprintf(stderr, "squeeze-nccl-perf: mode %s failed (see the rank's message above)\n",
                   m.name.c_str());
    worst =
        rc == kExitRankError || worst == kExitRankError ? kExitRankError : (rc != 0 ? rc : worst);
  }
  if (o.sweep) print_sweep_summary(rows, o.json, o.label);
  return worst;
}

}  // namespace squeeze::perf::nccl

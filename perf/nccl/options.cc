#include "perf/nccl/options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "perf/collective/data.h"
#include "perf/common/cli_args.h"
#include "perf/common/dtype_names.h"
#include "perf/common/traffic_gen.h"
#include "perf/nccl/paths.h"
#include "plugin/params/params.h"

namespace squeeze::perf::nccl {
namespace {

constexpr const char* kAbout =
    "All-reduce and all-to-all under real NCCL, N processes on this machine's GPU(s), each with\n"
    "its own NCCL_HOSTID so that NCCL sends everything through the network: the Squeeze plugin\n"
    "with a policy, or NCCL's own Socket transport. nccl-tests' table and flags (-b -e -f -n -w\n"
    "-c -d -o) plus ratio, max error against an exact host reference, the policy's bound and\n"
    "rank agreement. Exits 77 without a CUDA device.";

// Launcher options: a rank process gets what the launcher decided instead of these.
const std::vector<std::string> kLauncherOnly = {
    "--policy", "--baseline", "--sweep",   "--sweep-modes", "--nranks",     "--gpus",
    "--plugin", "--nccl-lib", "--ifname",  "--bypass",      "--source-dir", "--timeout",
    "--keep",   "--rank",     "--run-dir", "--mode"};

std::string parse_gpus(const std::string& v, std::vector<int>* out) {
  std::vector<int> gpus;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const std::optional<long long> g = parse_long_in(item, 0, 1023);
    if (!g) return "a comma list of device numbers 0 to 1023";
    gpus.push_back(static_cast<int>(*g));
  }
  if (gpus.empty()) return "a comma list of device numbers 0 to 1023";
  *out = gpus;
  return "";
}

}  // namespace

std::vector<std::size_t> size_list(const Options& o) {
  std::vector<std::size_t> v;
  for (std::size_t s = o.min_bytes; s <= o.max_bytes; s *= o.step_factor) {
    v.push_back(s);
    if (s > o.max_bytes / o.step_factor) break;
  }
  if (v.empty() || v.back() != o.max_bytes) v.push_back(o.max_bytes);
  return v;
}

bool sweep_modes(const std::string& source_dir, const std::string& names, std::vector<Mode>* out,
                 std::string* error) {
  const std::vector<Mode> all = {
      {"socket", true, ""},
      {"raw", false, source_dir + "/config/off.json"},
      {"lossless", false, source_dir + "/config/lossless.json"},
      {"quantize", false, source_dir + "/perf/nccl/policies/quantize.json"},
      {"threshold", false, source_dir + "/perf/nccl/policies/threshold.json"},
      {"cast", false, source_dir + "/perf/nccl/policies/cast.json"},
  };
  out->clear();
  if (names.empty()) {
    *out = all;
    return true;
  }
  std::stringstream ss(names);
  std::string item;
  while (std::getline(ss, item, ',')) {
    bool found = false;
    for (const Mode& m : all) {
      if (m.name == item) {
        out->push_back(m);
        found = true;
      }
    }
    if (!found) {
      *error = "--sweep-modes: unknown mode '" + item +
               "' (known: socket, raw, lossless, quantize, threshold, cast)";
      return false;
    }
  }
  return !out->empty();
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::string policy, baseline, sweep_names, collective = "both", data, op = "sum", bypass,
                                             route = "ring";
  CliParser cli("squeeze-nccl-perf", kAbout);
  cli.section("Mode (one; default: the plugin with its built-in policy or $SQUEEZE_POLICY)")
      .text("--policy", &policy, "FILE", "the plugin with this policy (raw: config/off.json)")
      .choice("--baseline", &baseline, {"socket"}, "NCCL's Socket transport, no plugin")
      .default_text("")
      .flag("--sweep", &o.sweep,
            "socket, raw, then each codec (lossless, quantize, threshold, cast) in one run, with "
            "busbw ratios raw/socket and codec/raw")
      .text("--sweep-modes", &sweep_names, "LIST",
            "with --sweep: only these (comma list of socket, raw, lossless, quantize, threshold, "
            "cast)")
      .section("Ranks")
      .integer("-N,--nranks", &o.nranks, 2, 64, "processes (nccl-tests' -n is --iters here)")
      .custom("--gpus", "LIST", "a comma list of device numbers",
              "CUDA devices, rank r on LIST[r % len] (0: all on GPU 0)",
              [&](const std::string& v) { return parse_gpus(v, &o.gpus); })
      .default_text("0")
      .text("--plugin", &o.plugin, "PATH",
            "the plugin (default: the one built or installed with this tool)")
      .text("--nccl-lib", &o.nccl_lib, "PATH",
            "libnccl to load (default: $SQUEEZE_NCCL_LIB, the CUDA toolkit's found at build time, "
            "then "
            "libnccl.so.2 on the loader's path)")
      .text("--ifname", &o.ifname, "IF", "NCCL_SOCKET_IFNAME and SQUEEZE_SOCKET_IFNAME")
      .choice("--bypass", &bypass, {"auto", "off"},
              "SQUEEZE_BYPASS for the plugin (off: compress even where it does not pay)")
      .default_text("inherited")
      .text("--source-dir", &o.source_dir, "DIR",
            "the Squeeze source tree, for config/ and perf/nccl/policies/")
      .section("Work (nccl-tests' flags)")
      .choice("--collective", &collective, {"allreduce", "alltoall", "both"},
              "the collectives to run")
      .bytes("-b,--minbytes", &o.min_bytes, "smallest size per rank")
      .bytes("-e,--maxbytes", &o.max_bytes, "largest size per rank")
      .integer("-f,--stepfactor", &o.step_factor, 2, 1024, "size multiplier")
      .integer("-n,--iters", &o.iters, 1, 100000, "timed iterations per size")
      .integer("-w,--warmup_iters,--warmup", &o.warmup, 0, 100000, "untimed iterations first")
      .choice("-d,--datatype,--dtype", &o.dtype_name, float_dtype_names(), "element type")
      .choice("-o,--op", &op, red_op_names(), "all-reduce's reduction (all-to-all has none)")
      .choice("--data", &data, traffic_names(), "data set for both collectives")
      .default_text("")
      .choice("--ar-data", &o.ar_data, traffic_names(), "all-reduce's data set")
      .choice("--a2a-data", &o.a2a_data, traffic_names(), "all-to-all's data set")
      .choice(
          "--a2a-api", &o.a2a_api, {"auto", "alltoall", "sendrecv"},
          "alltoall: ncclAlltoAll (the plugin sees \"alltoall\"); sendrecv: grouped "
          "ncclSend/ncclRecv (it sees \"send\"/\"recv\"); auto: ncclAlltoAll where the loaded NCCL "
          "has it (2.28 on)")
      .choice("--route", &route, {"ring", "collnet"},
              "the plugin modes' all-reduce: NCCL's ring over the net plugin, or Squeeze's "
              "collective network (NCCL_COLLNET_ENABLE=1, NCCL_ALGO=Ring;AllReduce:CollNetChain; "
              "NCCL fails the run if it cannot set CollNet up). Socket modes stay on the ring")
      .integer("--seed", &o.seed, 0, 1LL << 62, "input seed")
      .number("--timeout", &o.timeout_s, 1, 86400, "seconds for each mode's whole run")
      .section("Output")
      .flag("--json", &o.json, "JSON lines instead of the table")
      .text("--label", &o.label, "TEXT", "adds \"label\":\"TEXT\" to every JSON line")
      .flag("-c,--check", &o.check,
            "exit 1 if any row has #wrong > 0 (elements beyond the policy's bound) or ranks that "
            "disagree; #wrong is counted either way (-c 1, -c 0, or --check alone for 1)")
      .text("--keep", &o.keep_dir, "DIR",
            "keep each mode's run files (NCCL ids, per-rank summaries, the plugin's SQUEEZE_STATS "
            "files) "
            "under DIR/<mode>/")
      .integer("--rank", &o.rank, 0, 63, "internal: this process is rank R")
      .hidden()
      .text("--run-dir", &o.run_dir, "DIR", "internal: the run directory")
      .hidden()
      .text("--mode", &o.mode_name, "NAME", "internal: the mode's name")
      .hidden();
  cli.parse_or_exit(argc, argv);
  o.bypass = bypass;
  parse_collective_choice(collective, &o.do_allreduce, &o.do_alltoall);
  if (!data.empty()) o.ar_data = o.a2a_data = data;
  parse_float_dtype(o.dtype_name, &o.dtype);
  parse_red_op(op, &o.op);
  o.collnet = route == "collnet";
  if (o.collnet && o.op == RedOp::kProd)
    cli.fail("--route collnet: the collective network reduces sum, avg, min and max, not prod");
  for (const CliParser::Given& g : cli.given_options()) {
    if (std::find(kLauncherOnly.begin(), kLauncherOnly.end(), g.option) != kLauncherOnly.end())
      continue;
    o.work_args.insert(o.work_args.end(), g.tokens.begin(), g.tokens.end());
  }
  if (o.min_bytes == 0 || o.max_bytes < o.min_bytes) cli.fail("need 0 < -b <= -e");
  const bool have_policy = cli.given("--policy");
  const int mode_flags = (have_policy ? 1 : 0) + (!baseline.empty() ? 1 : 0) + (o.sweep ? 1 : 0);
  if (mode_flags > 1) cli.fail("--policy, --baseline and --sweep exclude each other");
  if (!sweep_names.empty() && !o.sweep) cli.fail("--sweep-modes needs --sweep");
  if (o.rank >= 0) return o;  // a rank process: the launcher chose everything else

  if (o.source_dir.empty()) o.source_dir = default_source_dir();
  if (o.sweep) {
    std::string error;
    if (!sweep_modes(o.source_dir, sweep_names, &o.modes, &error)) cli.fail(error);
  } else if (!baseline.empty()) {
    o.modes.push_back({"socket", true, ""});
  } else {
    // Named after the policy file: "off", "dlrm-alltoall", ...; "default" for the built-in one.
    const squeeze::params::Value env =
        squeeze::params::Settings::read_env(squeeze::params::Id::kPolicy, nullptr);
    const std::string file = have_policy ? policy : env.text;
    std::string name = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
      name.resize(name.size() - 5);
    o.modes.push_back({name.empty() ? "default" : name, false, file});
  }
  return o;
}

}  // namespace squeeze::perf::nccl

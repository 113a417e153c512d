#include "perf/nccl/options.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "perf/collective/data.h"
#include "perf/common/cli_args.h"
#include "perf/common/traffic_gen.h"
#include "perf/nccl/paths.h"

namespace squeeze::perf::nccl {
namespace {

const char* kUsage = R"(usage: squeeze-nccl-perf [options]
All-reduce and all-to-all under real NCCL, N processes on this machine's GPU(s), each with
its own NCCL_HOSTID so that NCCL sends everything through the network: the Squeeze plugin
with a policy, or NCCL's own Socket transport. nccl-tests-style table plus ratio, max error
against an exact host reference, #wrong and rank agreement. Exits 77 without a CUDA device.

Mode (one; default: the plugin with its built-in policy or $SQUEEZE_POLICY):
  --policy FILE            the plugin with this policy (raw: config/off.json)
  --baseline socket        NCCL's Socket transport, no plugin
  --sweep                  socket, raw, then each codec (lossless, quantize, threshold, cast)
                           in one run, with busbw ratios raw/socket and codec/raw
  --sweep-modes LIST       with --sweep: only these (comma list of the names above)
Ranks:
  -n, --nranks N           processes (default 2)
  --gpus LIST              CUDA devices, rank r on LIST[r % len] (default 0: all on GPU 0)
  --plugin PATH            the plugin (default: the one built or installed with this tool)
  --nccl-lib PATH          libnccl to load (default: $SQUEEZE_NCCL_LIB, the CUDA toolkit's
                           found at build time, then libnccl.so.2 on the loader's path)
  --ifname IF              NCCL_SOCKET_IFNAME and SQUEEZE_SOCKET_IFNAME (default lo)
  --bypass auto|off        SQUEEZE_BYPASS for the plugin (off: compress even where it does
                           not pay; default: inherited)
  --source-dir DIR         the Squeeze source tree, for config/ and perf/nccl/policies/
Work:
  --collective C           allreduce | alltoall | both (default both)
  -b, --minbytes BYTES     smallest size per rank (default 1M; K/M/G suffixes)
  -e, --maxbytes BYTES     largest size (default 16M)
  -f, --stepfactor F       size multiplier (default 4)
  --iters N                timed iterations per size (default 20; nccl-tests' -n, which
                           names the ranks here, as in squeeze-perf)
  -w, --warmup N           untimed iterations first (default 5)
  --dtype T                float32 | bfloat16 | float16 (default float32)
  --data NAME              data set for both; --ar-data / --a2a-data for one (defaults:
                           gradients for all-reduce, embeddings for all-to-all)
  --a2a-api A              alltoall: ncclAlltoAll (the plugin sees "alltoall"); sendrecv:
                           grouped ncclSend/ncclRecv (it sees "send"/"recv"); auto (default):
                           ncclAlltoAll where the loaded NCCL has it (2.28 on)
  --seed N                 input seed (default 1)
  --timeout S              seconds for each mode's whole run (default 300)
Output:
  --json                   JSON lines instead of the table
  --label TEXT             adds "label":"TEXT" to every JSON line
  --check                  exit 1 if any row has #wrong > 0 or ranks that disagree
  --keep DIR               keep each mode's run files (NCCL ids, per-rank summaries, the
                           plugin's SQUEEZE_STATS files) under DIR/<mode>/
)";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "squeeze-nccl-perf: %s\n%s", what.c_str(), kUsage);
  std::exit(2);
}

long parse_int(const std::string& opt, const std::string& v, long lo, long hi) {
  std::optional<long> x = parse_long_in(v, lo, hi);
  if (!x) fail(opt + " '" + v + "': expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return *x;
}

void check_data(const std::string& opt, const std::string& name) {
  std::string known;
  if (!known_data_set(name, &known)) fail(opt + " '" + name + "': unknown data set (known: " + known + ")");
}

std::vector<int> parse_gpus(const std::string& v) {
  std::vector<int> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(static_cast<int>(parse_int("--gpus", item, 0, 1023)));
  if (out.empty()) fail("--gpus '" + v + "': expected a comma list of device numbers");
  return out;
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

bool sweep_modes(const std::string& source_dir, const std::string& names, std::vector<Mode>* out, std::string* error) {
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
      *error = "--sweep-modes: unknown mode '" + item + "' (known: socket, raw, lossless, quantize, threshold, cast)";
      return false;
    }
  }
  return !out->empty();
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::string policy, baseline, sweep_names;
  bool have_policy = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    auto bytes = [&]() {
      std::string v = next();
      std::size_t b = 0;
      if (!parse_bytes(v, &b)) fail(a + " '" + v + "': expected a size such as 4096, 64K, 1M");
      return b;
    };
    // Options a rank process needs again are remembered verbatim for its argv.
    const int first = i;
    bool work = true;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--policy") policy = next(), have_policy = true, work = false;
    else if (a == "--baseline") {
      baseline = next();
      if (baseline != "socket") fail("--baseline '" + baseline + "': only 'socket' is known");
      work = false;
    } else if (a == "--sweep") o.sweep = true, work = false;
    else if (a == "--sweep-modes") sweep_names = next(), work = false;
    else if (a == "-n" || a == "--nranks") o.nranks = static_cast<int>(parse_int(a, next(), 1, 64)), work = false;
    else if (a == "--gpus") o.gpus = parse_gpus(next()), work = false;
    else if (a == "--plugin") o.plugin = next(), work = false;
    else if (a == "--nccl-lib") o.nccl_lib = next(), work = false;
    else if (a == "--ifname") o.ifname = next(), work = false;
    else if (a == "--bypass") {
      o.bypass = next();
      if (o.bypass != "auto" && o.bypass != "off") fail("--bypass '" + o.bypass + "': expected auto or off");
      work = false;
    } else if (a == "--source-dir") o.source_dir = next(), work = false;
    else if (a == "--timeout") o.timeout_s = static_cast<double>(parse_int(a, next(), 1, 86400)), work = false;
    else if (a == "--keep") o.keep_dir = next(), work = false;
    else if (a == "--rank") o.rank = static_cast<int>(parse_int(a, next(), 0, 63)), work = false;
    else if (a == "--run-dir") o.run_dir = next(), work = false;
    else if (a == "--mode") o.mode_name = next(), work = false;
    else if (a == "--collective") {
      std::string c = next();
      if (!parse_collective_choice(c, &o.do_allreduce, &o.do_alltoall))
        fail("--collective '" + c + "': expected allreduce, alltoall or both");
    } else if (a == "-b" || a == "--minbytes") o.min_bytes = bytes();
    else if (a == "-e" || a == "--maxbytes") o.max_bytes = bytes();
    else if (a == "-f" || a == "--stepfactor") o.step_factor = static_cast<std::size_t>(parse_int(a, next(), 2, 1024));
    else if (a == "--iters") o.iters = static_cast<int>(parse_int(a, next(), 1, 100000));
    else if (a == "-w" || a == "--warmup") o.warmup = static_cast<int>(parse_int(a, next(), 0, 100000));
    else if (a == "--data") o.ar_data = o.a2a_data = next();
    else if (a == "--ar-data") o.ar_data = next();
    else if (a == "--a2a-data") o.a2a_data = next();
    else if (a == "--dtype") {
      o.dtype_name = next();
      if (!parse_float_dtype(o.dtype_name, &o.dtype)) fail("--dtype '" + o.dtype_name + "': expected float32, bfloat16 or float16");
    } else if (a == "--a2a-api") {
      o.a2a_api = next();
      if (o.a2a_api != "auto" && o.a2a_api != "alltoall" && o.a2a_api != "sendrecv")
        fail("--a2a-api '" + o.a2a_api + "': expected auto, alltoall or sendrecv");
    } else if (a == "--seed") o.seed = static_cast<uint64_t>(parse_int(a, next(), 0, 1L << 62));
    else if (a == "--json") o.json = true;
    else if (a == "--label") o.label = next();
    else if (a == "--check") o.check = true;
    else fail("unknown option '" + a + "'");
    if (work)
      for (int k = first; k <= i; ++k) o.work_args.emplace_back(argv[k]);
  }
  check_data("--ar-data", o.ar_data);
  check_data("--a2a-data", o.a2a_data);
  if (o.min_bytes == 0 || o.max_bytes < o.min_bytes) fail("need 0 < -b <= -e");
  if (o.nranks < 2 && o.rank < 0) fail("-n must be at least 2: one rank has no network traffic");
  const int mode_flags = (have_policy ? 1 : 0) + (!baseline.empty() ? 1 : 0) + (o.sweep ? 1 : 0);
  if (mode_flags > 1) fail("--policy, --baseline and --sweep exclude each other");
  if (!sweep_names.empty() && !o.sweep) fail("--sweep-modes needs --sweep");
  if (o.rank >= 0) return o;  // a rank process: the launcher chose everything else

  if (o.source_dir.empty()) o.source_dir = default_source_dir();
  if (o.sweep) {
    std::string error;
    if (!sweep_modes(o.source_dir, sweep_names, &o.modes, &error)) fail(error);
  } else if (!baseline.empty()) {
    o.modes.push_back({"socket", true, ""});
  } else {
    // Named after the policy file: "off", "dlrm-alltoall", ...; "default" for the built-in one.
    const char* env = std::getenv("SQUEEZE_POLICY");
    const std::string file = have_policy ? policy : env != nullptr ? env : "";
    std::string name = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
    o.modes.push_back({name.empty() ? "default" : name, false, file});
  }
  return o;
}

}  // namespace squeeze::perf::nccl

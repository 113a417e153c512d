#include "perf/collective/options.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "perf/collective/data.h"
#include "perf/common/cli_args.h"
#include "perf/common/traffic_gen.h"

namespace squeeze::perf {
namespace {

const char* kUsage = R"(usage: squeeze-perf [options]
Ring all-reduce and all-to-all on host buffers through the Squeeze plugin (its
ncclNetPlugin_v11 table, driven as NCCL's proxy drives it), nccl-tests-style output.

Ranks (one of):
  -n, --local-ranks N      fork N ranks on this machine (rendezvous on 127.0.0.1), with
                           LOCAL_WORLD_SIZE=N unless set, as torchrun sets it
  --rank R --nranks N --rendezvous HOST:PORT
                           run rank R of N; rank 0 listens on HOST:PORT, others connect
Network:
  --ifname IF              sets SQUEEZE_SOCKET_IFNAME (default "lo" with -n); the plugin
                           device of that name is used
  --plugin PATH            plugin library (default: the one built with this tool)
  --policy FILE            sets SQUEEZE_POLICY=FILE before the plugin loads (default: the
                           plugin's built-in policy, or SQUEEZE_POLICY from the environment)
  --baseline FILE          also load a private copy of the plugin under policy FILE (say
                           config/off.json) and run every size through both, alternating
                           iterations, so both see the same machine; each size then prints
                           the baseline's row too and the speedup (baseline time / time)
Work:
  --collective C           allreduce | alltoall | both (default both)
  -b, --min BYTES          smallest size per rank (default 1M; K/M/G suffixes)
  -e, --max BYTES          largest size per rank (default 16M)
  -f, --factor F           size multiplier (default 4)
  --iters N                timed iterations per size (default 5)
  --warmup N               untimed iterations first (default 5, as nccl-tests)
  --data NAME              data set for both collectives; or --ar-data / --a2a-data
                           (defaults: gradients for all-reduce, embeddings for all-to-all)
  --dtype T                float32 | bfloat16 | float16 (default float32); passed to the
                           plugin through the profiler chain as NCCL's datatype
  --chain on|off           play NCCL's profiler chain (default on); off = dtype unknown
  --step BYTES             SIMPLE step size of ring connections (default 512K)
  --p2p-chunk BYTES        all-to-all message size (default 128K)
  --copies cpu|gpu         all-to-all only. cpu (default): the copies NCCL's GPU kernels
                           make (user buffer to FIFO slot and back, the rank's own block)
                           are made on the CPU inside the timed region. gpu: they are made
                           before and after it, as on a host whose GPU makes them; each
                           connection's FIFO then spans the whole block, while messages,
                           sizes, the 8 in flight and their order stay the same
  --seed N                 input seed (default 1)
  --timeout S              seconds without progress before a rank gives up (default 120)
Output:
  --json                   JSON lines only (no table)
  --label TEXT             adds "label":"TEXT" to every JSON line
  --check                  exit 1 unless results are bit-exact and all ranks agree
  --max-error X            with --check: allow max abs error <= X instead of bit-exact
)";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "squeeze-perf: %s\n%s", what.c_str(), kUsage);
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

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  bool have_rank = false;
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
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "-n" || a == "--local-ranks") o.local_ranks = static_cast<int>(parse_int(a, next(), 1, 64));
    else if (a == "--rank") o.rank = static_cast<int>(parse_int(a, next(), 0, 4095)), have_rank = true;
    else if (a == "--nranks") o.nranks = static_cast<int>(parse_int(a, next(), 1, 4096));
    else if (a == "--rendezvous") o.rendezvous = next();
    else if (a == "--ifname") o.ifname = next();
    else if (a == "--plugin") o.plugin = next();
    else if (a == "--policy") o.policy = next();
    else if (a == "--baseline") o.baseline_policy = next();
    else if (a == "--collective") {
      std::string c = next();
      if (!parse_collective_choice(c, &o.do_allreduce, &o.do_alltoall))
        fail("--collective '" + c + "': expected allreduce, alltoall or both");
    } else if (a == "-b" || a == "--min") o.min_bytes = bytes();
    else if (a == "-e" || a == "--max") o.max_bytes = bytes();
    else if (a == "-f" || a == "--factor") o.step_factor = static_cast<std::size_t>(parse_int(a, next(), 2, 1024));
    else if (a == "--iters") o.iters = static_cast<int>(parse_int(a, next(), 1, 100000));
    else if (a == "--warmup" || a == "-w") o.warmup = static_cast<int>(parse_int(a, next(), 0, 100000));
    else if (a == "--data") o.ar_data = o.a2a_data = next();
    else if (a == "--ar-data") o.ar_data = next();
    else if (a == "--a2a-data") o.a2a_data = next();
    else if (a == "--dtype") {
      o.dtype_name = next();
      if (!parse_float_dtype(o.dtype_name, &o.dtype)) fail("--dtype '" + o.dtype_name + "': expected float32, bfloat16 or float16");
    } else if (a == "--chain") {
      std::string v = next();
      if (v != "on" && v != "off") fail("--chain '" + v + "': expected on or off");
      o.chain = v == "on";
    } else if (a == "--copies") {
      const std::string v = next();
      if (v != "cpu" && v != "gpu") fail("--copies '" + v + "': expected cpu or gpu");
      o.gpu_copies = v == "gpu";
    } else if (a == "--step") o.step_bytes = bytes();
    else if (a == "--p2p-chunk") o.p2p_chunk = bytes();
    else if (a == "--seed") o.seed = static_cast<uint64_t>(parse_int(a, next(), 0, 1L << 62));
    else if (a == "--timeout") o.timeout_s = static_cast<double>(parse_int(a, next(), 1, 86400));
    else if (a == "--json") o.json = true;
    else if (a == "--label") o.label = next();
    else if (a == "--check") o.check = true;
    else if (a == "--max-error") {
      std::string v = next();
      char* end = nullptr;
      o.max_error = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(o.max_error >= 0)) fail("--max-error '" + v + "': expected a number >= 0");
    } else {
      fail("unknown option '" + a + "'");
    }
  }
  check_data("--ar-data", o.ar_data);
  check_data("--a2a-data", o.a2a_data);
  if (o.local_ranks > 0 && (have_rank || o.nranks > 0)) fail("-n and --rank/--nranks exclude each other");
  if (o.local_ranks == 0) {
    if (!have_rank || o.nranks == 0 || o.rendezvous.empty())
      fail("give -n N for local ranks, or --rank R --nranks N --rendezvous HOST:PORT");
    if (o.rank >= o.nranks) fail("--rank " + std::to_string(o.rank) + " must be below --nranks " + std::to_string(o.nranks));
  } else {
    o.nranks = o.local_ranks;
    if (o.rendezvous.empty()) o.rendezvous = "127.0.0.1:0";
    if (o.ifname.empty()) o.ifname = "lo";
  }
  if (o.min_bytes == 0 || o.max_bytes < o.min_bytes) fail("need 0 < --min <= --max");
  if (o.step_bytes < 4096 || o.step_bytes % 16 != 0) fail("--step must be a multiple of 16 bytes, at least 4K");
  if (o.p2p_chunk < 4096 || o.p2p_chunk % 16 != 0) fail("--p2p-chunk must be a multiple of 16 bytes, at least 4K");
  if (o.max_error >= 0 && !o.check) o.check = true;
  return o;
}

}  // namespace squeeze::perf

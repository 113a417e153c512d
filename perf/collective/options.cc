#include "perf/collective/options.h"

#include "perf/collective/data.h"
#include "perf/common/cli_args.h"
#include "perf/common/dtype_names.h"
#include "perf/common/traffic_gen.h"

namespace squeeze::perf {
namespace {

constexpr const char* kAbout =
    "Ring all-reduce and all-to-all on host buffers through the Squeeze plugin (its\n"
    "ncclNetPlugin_v11 table, driven as NCCL's proxy drives it), or all-reduce on its collective\n"
    "network (--route collnet: ncclCollNetPlugin_v11, driven as NCCL's CollNetChain proxy).\n"
    "nccl-tests' flags (-b -e -f -n -w -c -d -o) and table, with Squeeze's columns after\n"
    "nccl-tests': ratio, max_err, the policy's stated bound and rank agreement.";

}  // namespace

const char* route_name(Route r) { return r == Route::kCollNet ? "collnet" : "ring"; }

Options parse_options(int argc, char** argv) {
  Options o;
  std::string collective = "both", data, chain = "on", copies = "cpu", op = "sum", route = "ring",
              baseline_route;
  CliParser cli("squeeze-perf", kAbout);
  cli.section("Ranks")
      .integer("-N,--nranks,--local-ranks", &o.nranks, 1, 4096,
               "ranks: without --rank, fork N ranks on this machine (rendezvous on 127.0.0.1, "
               "LOCAL_WORLD_SIZE=N unless set, as torchrun sets it); with --rank, the total across "
               "processes (nccl-tests' -n is --iters here)")
      .integer("--rank", &o.rank, 0, 4095,
               "run only rank R; rank 0 listens on --rendezvous, the others connect")
      .default_text("")
      .metavar("R")
      .text("--rendezvous", &o.rendezvous, "HOST:PORT", "with --rank: where rank 0 listens")
      .section("Network")
      .text("--ifname", &o.ifname, "IF",
            "sets SQUEEZE_SOCKET_IFNAME (default lo for local ranks); the plugin device of that "
            "name is used")
      .text("--plugin", &o.plugin, "PATH", "plugin library (default: the one built with this tool)")
      .text("--policy", &o.policy, "FILE",
            "sets SQUEEZE_POLICY=FILE before the plugin loads (default: the plugin's built-in "
            "policy, or "
            "SQUEEZE_POLICY from the environment)")
      .text(
          "--baseline", &o.baseline_policy, "FILE",
          "also load a private copy of the plugin under policy FILE (say config/off.json) and run "
          "every "
          "size through both, alternating iterations, so both see the same machine; each size then "
          "prints the baseline's row too and the speedup (baseline time / time)")
      .choice("--baseline-route", &baseline_route, {"ring", "collnet"},
              "the --baseline instance's all-reduce route (default: --route's), e.g. --route "
              "collnet --baseline config/off.json --baseline-route ring compares the collective "
              "network with the raw ring in one run")
      .default_text("--route")
      .section("Work (nccl-tests' flags)")
      .choice("--route", &route, {"ring", "collnet"},
              "how all-reduces travel: ring (NCCL's ring over the net table) or collnet (the "
              "plugin's collective network, as NCCL 2.28's CollNetChain proxy drives it with one "
              "rank per node: full chunks, up to 8 calls in flight, host buffers registered by "
              "both sides); all-to-alls always take the net table")
      .integer("--collnet-channels", &o.collnet_channels, 1, 64,
               "CollNetChain channels: each iallreduce carries channels x chunk bytes")
      .choice("--collective", &collective, {"allreduce", "alltoall", "both"},
              "the collectives to run")
      .bytes("-b,--minbytes,--min", &o.min_bytes, "smallest size per rank")
      .bytes("-e,--maxbytes,--max", &o.max_bytes, "largest size per rank")
      .integer("-f,--stepfactor,--factor", &o.step_factor, 2, 1024, "size multiplier")
      .integer("-n,--iters", &o.iters, 1, 100000, "timed iterations per size")
      .integer("-w,--warmup_iters,--warmup", &o.warmup, 0, 100000,
               "untimed iterations first (the default is nccl-tests')")
      .choice("-d,--datatype,--dtype", &o.dtype_name, float_dtype_names(),
              "element type, passed to the plugin through the profiler chain as NCCL's datatype")
      .choice("-o,--op", &op, red_op_names(), "all-reduce's reduction (all-to-all has none)")
      .choice("--data", &data, traffic_names(), "data set for both collectives")
      .default_text("")
      .choice("--ar-data", &o.ar_data, traffic_names(), "all-reduce's data set")
      .choice("--a2a-data", &o.a2a_data, traffic_names(), "all-to-all's data set")
      .choice("--chain", &chain, {"on", "off"}, "play NCCL's profiler chain; off = dtype unknown")
      .bytes("--step", &o.step_bytes, "SIMPLE step size of ring connections")
      .bytes("--p2p-chunk", &o.p2p_chunk, "all-to-all message size")
      .choice(
          "--copies", &copies, {"cpu", "gpu"},
          "all-to-all only. cpu: the copies NCCL's GPU kernels make (user buffer to FIFO slot and "
          "back, the rank's own block) are made on the CPU inside the timed region. gpu: they are "
          "made before and after it, as on a host whose GPU makes them; each connection's FIFO "
          "then "
          "spans the whole block, while messages, sizes, the 8 in flight and their order stay the "
          "same")
      .integer("--seed", &o.seed, 0, 1LL << 62, "input seed")
      .flag("--fresh-inputs", &o.fresh_inputs,
            "all-reduce: new inputs every iteration, as a training step's new gradients "
            "(gradients: the same layers and scales, new noise), instead of nccl-tests' same "
            "buffer every time; the exact result and the checks follow them, outside the timed "
            "region")
      .number("--timeout", &o.timeout_s, 1, 86400,
              "seconds without progress before a rank gives up")
      .section("Output")
      .flag("--json", &o.json, "JSON lines instead of the table")
      .text("--label", &o.label, "TEXT", "adds \"label\":\"TEXT\" to every JSON line")
      .flag("-c,--check", &o.check,
            "exit 1 if a row has #wrong > 0 (elements beyond the policy's stated bound; bit-exact "
            "where "
            "nothing lossy applies) or all-reduce ranks that disagree where the policy keeps them "
            "bit-identical; #wrong is counted either way (-c 1, -c 0, or --check alone for 1)")
      .number("--max-error", &o.max_error, 0, 1e300,
              "with --check: also fail a row whose max_err is above X (implies --check)")
      .default_text("");
  cli.parse_or_exit(argc, argv);
  parse_collective_choice(collective, &o.do_allreduce, &o.do_alltoall);
  if (!data.empty()) o.ar_data = o.a2a_data = data;
  parse_float_dtype(o.dtype_name, &o.dtype);
  parse_red_op(op, &o.op);
  o.chain = chain == "on";
  o.gpu_copies = copies == "gpu";
  o.route = route == "collnet" ? Route::kCollNet : Route::kRing;
  o.baseline_route = baseline_route.empty()        ? o.route
                     : baseline_route == "collnet" ? Route::kCollNet
                                                   : Route::kRing;
  if (cli.given("--baseline-route") && o.baseline_policy.empty())
    cli.fail("--baseline-route needs --baseline FILE (the instance it routes)");
  if ((o.route == Route::kCollNet || o.baseline_route == Route::kCollNet) && o.op == RedOp::kProd)
    cli.fail(
        "--route collnet: -o prod: the collective network does not reduce products "
        "(reduceSupport says no; NCCL runs them on its ring)");
  const bool have_rank = cli.given("--rank");
  if (have_rank) {
    if (o.rendezvous.empty())
      cli.fail("--rank needs --rendezvous HOST:PORT (where rank 0 listens)");
    if (o.rank >= o.nranks)
      cli.fail("--rank " + std::to_string(o.rank) + " must be below --nranks " +
               std::to_string(o.nranks));
  } else {
    if (o.nranks > 64)
      cli.fail("-N " + std::to_string(o.nranks) + ": at most 64 local ranks (use --rank for more)");
    o.local_ranks = o.nranks;
    if (o.rendezvous.empty()) o.rendezvous = "127.0.0.1:0";
    if (o.ifname.empty()) o.ifname = "lo";
  }
  if (o.min_bytes == 0 || o.max_bytes < o.min_bytes) cli.fail("need 0 < -b <= -e");
  if (o.step_bytes < 4096 || o.step_bytes % 16 != 0)
    cli.fail("--step must be a multiple of 16 bytes, at least 4K");
  if (o.p2p_chunk < 4096 || o.p2p_chunk % 16 != 0)
    cli.fail("--p2p-chunk must be a multiple of 16 bytes, at least 4K");
  if (o.max_error >= 0) o.check = true;
  return o;
}

}  // namespace squeeze::perf

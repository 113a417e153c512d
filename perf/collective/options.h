// squeeze-perf's command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "perf/common/reduce_op.h"

namespace squeeze::perf {

// How an all-reduce travels: NCCL's ring over the plugin's net table, or the plugin's
// collective network (ncclCollNetPlugin_v11) as NCCL's CollNetChain proxy drives it.
enum class Route : uint8_t { kRing, kCollNet };
const char* route_name(Route r);  // "ring" | "collnet"

struct Options {
  // Ranks: -N N forks N local ranks; with --rank R, --rendezvous HOST:PORT runs rank R of N.
  int local_ranks = 0;
  int rank = -1, nranks = 2;
  std::string rendezvous;  // HOST:PORT; local default 127.0.0.1:0 (ephemeral)
  std::string ifname;      // SQUEEZE_SOCKET_IFNAME; local default "lo"
  std::string plugin;
  std::string policy;  // SQUEEZE_POLICY
  // --baseline: a second plugin instance under this policy; iterations alternate between the
  // two communicators, and each row gains the speedup over this baseline ("" = none).
  std::string baseline_policy;
  // --route / --baseline-route: the all-reduce's route in the main and the --baseline
  // instance (the all-to-all always runs over the net table).
  Route route = Route::kRing, baseline_route = Route::kRing;
  int collnet_channels = 2;  // CollNetChain channels (each call: channels x chunk bytes)
  bool do_allreduce = true, do_alltoall = true;
  std::size_t min_bytes = 1u << 20, max_bytes = 16u << 20;
  std::size_t step_factor = 4;  // sizes multiply by this (nccl-tests -f)
  int iters = 5, warmup = 5;    // nccl-tests' -n and -w; warmup: nccl-tests' default (-w 5)
  std::string ar_data = "gradients", a2a_data = "embeddings";
  compress::Dtype dtype = compress::Dtype::kFloat32;
  std::string dtype_name = "float";     // nccl-tests' name: float, half, bfloat16
  RedOp op = RedOp::kSum;               // the all-reduce's reduction (nccl-tests -o)
  bool chain = true;                    // play the profiler chain (how --dtype reaches the plugin)
  std::size_t step_bytes = 512 * 1024;  // ring SIMPLE step (NCCL_BUFFSIZE / 8)
  std::size_t p2p_chunk = 128 * 1024;   // all-to-all message size (NCCL_P2P_NET_CHUNKSIZE)
  // false (--copies cpu): the all-to-all makes the copies NCCL's GPU kernels make (user buffer
  // <-> FIFO slot, own block) on the CPU, inside the timed region. true (--copies gpu): they
  // stay out of it, as on a host whose GPU makes them (alltoall.h).
  bool gpu_copies = false;
  uint64_t seed = 1;
  // All-reduce: new inputs every iteration, as a training step's new gradients (error
  // feedback then sees a changing stream instead of the same gradient over and over).
  bool fresh_inputs = false;
  bool json = false;
  bool check = false;     // -c 1: exit 1 when a row has #wrong > 0 or ranks that disagree
  double max_error = -1;  // >= 0: --check also wants max_err <= this
  double timeout_s = 120;
  std::string label;  // copied into every JSON line
};

// Parses argv (perf/common/cli_args.h). --help prints the usage and exits 0; a bad option is
// one line on stderr and exit 2.
Options parse_options(int argc, char** argv);

}  // namespace squeeze::perf

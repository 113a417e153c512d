// squeeze-nccl-perf's command line. The launcher (no --rank) parses it, checks for a CUDA
// device and starts the ranks; each rank is this program again, exec'd with the same work
// options plus the internal --rank, --run-dir and --mode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "perf/common/reduce_op.h"

namespace squeeze::perf::nccl {

// One way to carry the traffic: NCCL's own Socket transport, or the Squeeze plugin with a
// policy ("" = the plugin's built-in default, or SQUEEZE_POLICY from the environment).
struct Mode {
  std::string name;     // "socket", "raw", "lossless", "quantize", ...; --policy: the file's stem
  bool socket = false;  // NCCL_NET=Socket, no plugin
  std::string policy;   // plugin modes: the policy file
};

struct Options {
  // What runs.
  std::vector<Mode> modes;  // one, or the sweep's list
  bool sweep = false;
  int nranks = 2;
  std::vector<int> gpus = {0};  // rank r uses gpus[r % size]
  std::string plugin;           // NCCL_NET_PLUGIN (default: the plugin built with this tool)
  std::string nccl_lib;         // libnccl to dlopen (default: see nccl_lib.h)
  std::string ifname = "lo";    // NCCL_SOCKET_IFNAME and SQUEEZE_SOCKET_IFNAME
  std::string bypass;           // SQUEEZE_BYPASS for plugin modes ("" = inherit)
  std::string source_dir;       // where config/ and perf/nccl/policies/ are

  // Work, as nccl-tests names it (-b -e -f -n -w -d -o).
  bool do_allreduce = true, do_alltoall = true;
  std::size_t min_bytes = 1u << 20, max_bytes = 16u << 20, step_factor = 4;
  int iters = 20, warmup = 5;
  std::string ar_data = "gradients", a2a_data = "embeddings";
  compress::Dtype dtype = compress::Dtype::kFloat32;
  std::string dtype_name = "float";  // nccl-tests' name: float, half, bfloat16
  RedOp op = RedOp::kSum;            // all-reduce's reduction (-o)
  uint64_t seed = 1;
  std::string a2a_api =
      "auto";  // alltoall (ncclAlltoAll) | sendrecv (grouped ncclSend/ncclRecv) | auto
  // --route collnet: the plugin modes' all-reduce on Squeeze's collective network
  // (NCCL_COLLNET_ENABLE=1, NCCL_ALGO allreduce:CollNetChain); false: NCCL's ring.
  bool collnet = false;
  double timeout_s = 300;  // per mode, all rows

  // Output.
  bool json = false;
  bool check = false;  // -c 1: exit 1 on any #wrong or disagreeing ranks
  std::string label;
  std::string keep_dir;  // keep each mode's run files (ids, summaries, stats) here

  // Internal: set by the launcher for a rank process.
  int rank = -1;
  std::string run_dir;
  std::string mode_name;
  std::vector<std::string> work_args;  // the argv a rank process gets (work and output options)
};

// Parses argv (perf/common/cli_args.h). --help prints the usage and exits 0; a bad option is
// one line on stderr and exit 2. Policy and plugin paths are not checked here (the launcher
// does that).
Options parse_options(int argc, char** argv);

// The sizes -b..-e by factor -f, as nccl-tests steps them (the last is always -e).
std::vector<std::size_t> size_list(const Options& o);

// The sweep's modes: socket, raw (config/off.json), lossless (config/lossless.json), then
// quantize, threshold, cast (perf/nccl/policies/). `names` (comma list, "" = all) selects.
// Returns false with *error naming an unknown mode.
bool sweep_modes(const std::string& source_dir, const std::string& names, std::vector<Mode>* out,
                 std::string* error);

}  // namespace squeeze::perf::nccl

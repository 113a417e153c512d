// squeeze-nccl-perf: all-reduce and all-to-all under real NCCL, through the Squeeze plugin or
// NCCL's Socket transport, N processes on this machine's GPU(s) that NCCL treats as separate
// hosts. nccl-tests' table plus the compression ratio, the error against the exact result
// and rank agreement. See perf/nccl/options.cc for the options, launcher.h and rank.h for how
// it runs. Without a CUDA device it prints one SKIP line and exits 77.
#include <signal.h>

#include "perf/nccl/launcher.h"
#include "perf/nccl/options.h"
#include "perf/nccl/rank.h"

int main(int argc, char** argv) {
  using namespace squeeze::perf::nccl;
  const Options o = parse_options(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  return o.rank >= 0 ? run_rank(o) : launch(o);
}

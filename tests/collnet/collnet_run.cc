#include "tests/collnet/collnet_run.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "compress/half.h"
#include "perf/collective/chain_proxy.h"
#include "tests/collnet/collnet_api.h"

namespace squeeze::testing {

namespace {

enum Exit : int {
  kOk = 0,
  kInit = 10,
  kListen,
  kExchange,
  kConnect,
  kSetup,
  kAllReduce,
  kClose,
};

}  // namespace

const char* rank_exit_reason(int code) {
  switch (code) {
    case kOk: return "ok";
    case kInit: return "init failed";
    case kListen: return "listen failed";
    case kExchange: return "handle exchange timed out";
    case kConnect: return "connect failed";
    case kSetup: return "regMr failed";
    case kAllReduce: return "an all-reduce failed";
    case kClose: return "close failed";
    default: return code >= 128 ? "killed by a signal" : "unexpected exit";
  }
}

std::size_t elem_size(int d) {
  switch (d) {
    case 0:
    case 1: return 1;
    case 2:
    case 3:
    case 7: return 4;
    case 4:
    case 5:
    case 8: return 8;
    case 6:
    case 9: return 2;
    default: return 1;
  }
}

std::vector<uint8_t> make_input(int rank, int coll, uint64_t count, int d, uint64_t seed,
                                int iteration) {
  // Data-parallel gradients: the same layers (sizes 4096..65536, scales
  // 1e-4..1e-2, as perf/common's "gradients") on every rank, each rank's own
  // Student-t(3) noise.
  std::mt19937_64 layers(seed * 1000003u + static_cast<uint64_t>(coll) * 104729u);
  std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(rank) * 7919u +
                      static_cast<uint64_t>(coll) * 104729u +
                      static_cast<uint64_t>(iteration) * 15485863u + 1);
  const std::size_t e = elem_size(d);
  std::vector<uint8_t> out(count * e);
  if (d == kFloat32 || d == kBfloat16 || d == kFloat16) {
    std::student_t_distribution<double> t3(3.0);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    uint64_t i = 0;
    while (i < count) {
      const uint64_t layer = 4096 + layers() % 61441;
      const double scale = std::pow(10.0, -4.0 + 2.0 * u(layers));
      for (uint64_t j = 0; j < layer && i < count; ++j, ++i) {
        const float v = static_cast<float>(t3(rng) * scale);
        if (d == kFloat32) {
          std::memcpy(out.data() + i * 4, &v, 4);
        } else {
          const uint16_t h = d == kBfloat16 ? compress::f32_to_bf16(v) : compress::f32_to_f16(v);
          std::memcpy(out.data() + i * 2, &h, 2);
        }
      }
    }
  } else {
    for (auto& b : out) b = static_cast<uint8_t>(rng());
  }
  return out;
}

RunResult run_collnet(const RunSpec& spec, RankGroup& group) {
  char policy_path[] = "/tmp/squeeze_collnet_policy_XXXXXX";
  if (!spec.policy.empty()) {
    const int fd = mkstemp(policy_path);
    if (fd < 0 || write(fd, spec.policy.data(), spec.policy.size()) !=
                      static_cast<ssize_t>(spec.policy.size())) {
      return {};
    }
    close(fd);
  }
  static uint64_t job = 0;
  const uint64_t comm_id = 0x5eed000000000000ull + (static_cast<uint64_t>(getpid()) << 16) + ++job;
  auto body = [&](int rank) -> int {
    if (!spec.policy.empty()) setenv("SQUEEZE_POLICY", policy_path, 1);
    if (spec.bypass_off) setenv("SQUEEZE_BYPASS", "off", 1);
    setenv("SQUEEZE_RANK", std::to_string(rank).c_str(), 1);
    if (!spec.stats_dir.empty())
      setenv("SQUEEZE_STATS", (spec.stats_dir + "/stats.json").c_str(), 1);
    double* numbers = group.numbers(rank);
    CollNetApi api(spec.version);
    if (api.init(comm_id) != 0) return kInit;
    if (spec.profiler && api.profiler_init(comm_id, spec.nodes, rank) != 0) return kInit;
    alignas(8) uint8_t handle[RankGroup::kHandleBytes] = {};
    void* listen = nullptr;
    if (api.listen(0, handle, &listen) != 0) return kListen;
    std::vector<void*> handles = group.exchange_handles(rank, handle);
    if (handles.empty()) return kExchange;
    void* comm = nullptr;
    if (api.connect(handles.data(), spec.nodes, rank, listen, &comm) != 0 || comm == nullptr)
      return kConnect;
    if (api.close_listen(listen) != 0) return kClose;  // NCCL closes it once connected
    int code = kOk;
    {
      perf::ChainProxy proxy(api.table(), comm, spec.channels);
      if (proxy.setup() != 0) return kSetup;
      const std::size_t e = elem_size(spec.dtype);
      uint64_t seq = 0;
      for (int it = 0; it < spec.iterations && code == kOk; ++it) {
        for (std::size_t k = 0; k < spec.counts.size() && code == kOk; ++k) {
          const uint64_t count = spec.counts[k];
          std::vector<uint8_t> in = make_input(rank, static_cast<int>(k), count, spec.dtype,
                                               spec.seed, spec.same_input_every_iteration ? 0 : it);
          std::vector<uint8_t> out(count * e, 0xEE);
          if (spec.profiler)
            api.announce_allreduce(seq++, count,
                                   spec.dtype == kFloat32    ? "ncclFloat32"
                                   : spec.dtype == kBfloat16 ? "ncclBfloat16"
                                   : spec.dtype == kFloat16  ? "ncclFloat16"
                                   : spec.dtype == kInt32    ? "ncclInt32"
                                                             : "ncclUint8",
                                   spec.channels);
          if (rank == spec.kill_rank && static_cast<int>(k) == spec.kill_at) {
            // Post this all-reduce's first four calls (of eight for 1 MiB), then die
            // mid-collective.
            (void)proxy.post_first(in.data(), count, spec.dtype, e, spec.op, 4, 1.0);
            raise(SIGKILL);
          }
          const auto t0 = std::chrono::steady_clock::now();
          const int r =
              proxy.allreduce(in.data(), out.data(), count, spec.dtype, e, spec.op, spec.timeout_s);
          if (r != 0) {
            numbers[0] = r;
            numbers[1] =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            code = kAllReduce;
            break;
          }
          if (spec.on_output)
            spec.on_output(group, rank, it, static_cast<int>(k), out.data(), out.size());
        }
      }
      numbers[2] = static_cast<double>(proxy.calls());
    }
    // NCCL closes the comm on an error too (communicator abort), after freeing
    // its buffer.
    if (api.close_coll(comm) != 0 && code == kOk) return kClose;
    if (api.finalize() != 0 && code == kOk) return kClose;
    return code;
  };
  RunResult res;
  res.exit_codes = group.run(body, spec.timeout_s + 60);
  for (int r = 0; r < group.nranks(); ++r)
    res.numbers.emplace_back(group.numbers(r), group.numbers(r) + 8);
  if (!spec.policy.empty()) unlink(policy_path);
  return res;
}

}  // namespace squeeze::testing

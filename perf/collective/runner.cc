#include "perf/collective/runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "perf/collective/alltoall.h"
#include "perf/collective/collnet_comm.h"
#include "perf/collective/collnet_reference.h"
#include "perf/collective/comm.h"
#include "perf/collective/data.h"
#include "perf/collective/ring.h"
#include "perf/collective/scoped_env.h"
#include "perf/common/dtype_names.h"
#include "perf/common/result_check.h"
#include "perf/common/stated_bound.h"

namespace squeeze::perf {
namespace {

using Clock = std::chrono::steady_clock;

struct Summary {  // one rank's findings, gathered to all
  double max_err = 0;
  uint64_t differing = 0;
  uint64_t wrong = 0;  // elements beyond the stated bound
  uint64_t hash = 0;
  uint64_t handed = 0, wire = 0;
  int32_t stats_found = 0;
  int32_t wrong_applies = 1;
  double cpu_us = 0;  // mean over timed iterations of the process's CPU time in the collective
};

// Elements beyond `bound` in one output (only called for a bound that is not exact: an
// exact bound counts the elements that differ from the raw ring's result).
using BoundCheck = std::function<CheckResult(const uint8_t* out, const Bound& bound)>;

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }

// User + system CPU time of this process (every thread: the plugin's codec workers too), in
// microseconds. A rank is a process, so on a loaded machine this is what one collective cost
// it, where wall time also counts the time other processes held the cores.
double process_cpu_us() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto us = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec);
  };
  return us(ru.ru_utime) + us(ru.ru_stime);
}

// One plugin instance's communicator for one collective at one size: run() is the timed
// collective, collect() what follows it outside the timed region.
class ArmComm {
 public:
  virtual ~ArmComm() = default;  // tears the communicator down (the instance's finalize)
  virtual void run() = 0;
  virtual void collect() {}
};

// What one arm runs at one size: how to open its communicator (on that instance, with that
// communicator id), the output it must produce where nothing lossy applies, the bound its
// policy states, and its route.
struct ArmWork {
  std::function<std::unique_ptr<ArmComm>(const PluginLib& lib, uint64_t comm_id)> open;
  const uint8_t* want = nullptr;
  Bound bound;
  Route route = Route::kRing;
};

// One plugin instance's side of a measurement: its communicator, timings and findings.
struct Arm {
  const PluginLib* lib = nullptr;
  const StatsFile* stats = nullptr;
  ArmWork work;
  bool baseline = false;
  std::unique_ptr<ArmComm> comm;
  std::vector<double> times;
  double cpu_us = 0;  // summed over timed iterations
  Summary mine;
  WireTotals before;
};

// The instance an arm runs on, its policy and its all-reduce route: the main one, or the
// --baseline copy.
struct ArmSide {
  const policy::Policy* policy;
  Route route;
  bool baseline;
};

// all_reduce false: the all-to-all, which takes the net table whatever the route.
std::vector<ArmSide> arm_sides(const RankContext& ctx, bool all_reduce) {
  auto side = [&](const policy::Policy* p, Route route, bool baseline) {
    if (!all_reduce) route = Route::kRing;
    return ArmSide{route == Route::kRing && !ctx.chain_active ? nullptr : p, route, baseline};
  };
  std::vector<ArmSide> sides{side(ctx.policy, ctx.opt.route, false)};
  if (ctx.baseline_lib) sides.push_back(side(ctx.baseline_policy, ctx.opt.baseline_route, true));
  return sides;
}

// Gathers every rank's timings and findings for one arm into `row` (all ranks call it).
Row summarize(RankContext& ctx, Row row, const Arm& arm, bool agreement) {
  Bootstrap& boot = ctx.boot;
  const auto n = static_cast<std::size_t>(boot.nranks());
  std::vector<Summary> all = boot.allgather(arm.mine);
  std::vector<double> all_times(n * arm.times.size());
  boot.allgather(arm.times.data(), all_times.data(), arm.times.size() * sizeof(double));

  double sum = 0;
  for (std::size_t i = 0; i < arm.times.size(); ++i) {
    double worst = 0;
    for (std::size_t r = 0; r < n; ++r)
      worst = std::max(worst, all_times[r * arm.times.size() + i]);
    sum += worst;
    row.iter_us.push_back(worst);
  }
  row.arm = !ctx.baseline_lib ? "" : arm.baseline ? "baseline" : "main";
  row.route = row.collective == "allreduce" ? route_name(arm.work.route) : "p2p";
  row.nranks = boot.nranks();
  row.iters = ctx.opt.iters;
  row.time_us = sum / static_cast<double>(arm.times.size());
  row.algbw = static_cast<double>(row.bytes) / (row.time_us * 1e3);  // B/us -> GB/s
  row.busbw = row.algbw * busbw_factor(row.collective, row.nranks);
  row.have_ratio = true;
  row.bound = arm.work.bound.text;
  row.agree_required = arm.work.bound.bitwise;
  row.wrong = 0;
  for (const Summary& s : all) {
    row.cpu_us += s.cpu_us / static_cast<double>(n);
    row.max_err = nan_max(row.max_err, s.max_err);
    row.differing += s.differing;
    if (s.wrong_applies != 0 && row.wrong >= 0)
      row.wrong += static_cast<int64_t>(s.wrong);
    else
      row.wrong = -1;
    row.handed += s.handed;
    row.wire += s.wire;
    row.have_ratio = row.have_ratio && s.stats_found != 0;
  }
  row.have_ratio = row.have_ratio && row.wire > 0;
  row.ratio =
      row.have_ratio ? static_cast<double>(row.handed) / static_cast<double>(row.wire) : 1.0;
  if (agreement) {
    row.agree = 1;
    for (const Summary& s : all) row.agree = row.agree && s.hash == all[0].hash;
  }
  return row;
}

// The median over iterations of baseline time / main time, each pair run back to back: one
// iteration that a noisy neighbour slowed moves it little, where it moves a ratio of means.
double paired_speedup(const std::vector<double>& baseline_us, const std::vector<double>& main_us) {
  std::vector<double> r;
  for (std::size_t i = 0; i < std::min(baseline_us.size(), main_us.size()); ++i)
    if (main_us[i] > 0) r.push_back(baseline_us[i] / main_us[i]);
  if (r.empty()) return 0;
  std::sort(r.begin(), r.end());
  const std::size_t m = r.size() / 2;
  return r.size() % 2 == 1 ? r[m] : (r[m - 1] + r[m]) / 2;
}

// Warm-up and timed iterations of each arm's collective, checking `out` against the arm's
// `want` after each one. With a --baseline instance, each iteration runs on both
// communicators, in alternating order, so that both see the same machine; rows[0] is the main
// instance's, rows[1] the baseline's. works[i] is arm i's (the main instance's first).
// `next_inputs`, when set, runs before each iteration's arms (--fresh-inputs).
std::vector<Row> measure(RankContext& ctx, const Row& row, std::vector<ArmWork> works,
                         const uint8_t* out, std::size_t elems, const BoundCheck& bound_check,
                         const std::function<void(int iteration)>& next_inputs = {}) {
  const Options& o = ctx.opt;
  Bootstrap& boot = ctx.boot;
  const bool agreement =
      row.collective == "allreduce";  // only all-reduce outputs agree across ranks
  std::vector<Arm> arms(works.size());
  for (std::size_t i = 0; i < arms.size(); ++i) {
    arms[i].lib = i == 0 ? &ctx.lib : ctx.baseline_lib;
    arms[i].stats = i == 0 ? &ctx.stats : ctx.baseline_stats;
    arms[i].baseline = i != 0;
    arms[i].work = std::move(works[i]);
  }
  for (Arm& a : arms) {
    a.before = a.stats->read();
    a.comm = a.work.open(*a.lib, ctx.comm_base + ++ctx.comm_index);
  }
  for (int it = 0; it < o.warmup + o.iters; ++it) {
    if (next_inputs) next_inputs(it);
    for (std::size_t k = 0; k < arms.size(); ++k) {
      Arm& a = arms[(static_cast<std::size_t>(it) + k) % arms.size()];
      const Bound& bound = a.work.bound;
      boot.barrier();
      const double cpu0 = process_cpu_us();
      const auto t0 = Clock::now();
      a.comm->run();
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      const double cpu = process_cpu_us() - cpu0;
      if (it >= o.warmup) {
        a.times.push_back(us);
        a.cpu_us += cpu;
      }
      // Every rank is done before anyone checks: a rank's checks must not take the CPU
      // from a rank still inside its timed collective.
      boot.barrier();
      a.comm->collect();
      Comparison c = compare(out, a.work.want, elems, o.dtype);
      a.mine.max_err = nan_max(a.mine.max_err, c.max_abs_err);
      a.mine.differing += c.differing;
      if (bound.kind == Bound::Kind::kExact) {
        a.mine.wrong += c.differing;
      } else if (c.differing != 0) {  // a lossy run that happened to send raw is within any bound
        const CheckResult chk = bound_check(out, bound);
        a.mine.wrong += chk.wrong;
        a.mine.wrong_applies = chk.wrong_applies ? 1 : 0;
      } else {  // what the check would say for a bit-exact output
        a.mine.wrong_applies =
            bound.kind == Bound::Kind::kNone || (agreement && o.op == RedOp::kProd) ? 0 : 1;
      }
      if (agreement)
        a.mine.hash = hash_bytes(out, elems * compress::dtype_size(o.dtype), a.mine.hash);
    }
  }
  std::vector<Row> rows;
  for (Arm& a : arms) {
    {
      ScopedEnv writes_to = a.stats->plugin_writes_here();
      a.comm.reset();  // finalizes: the instance writes its statistics
    }
    const WireTotals d = wire_delta(a.before, a.stats->read());
    a.mine.stats_found = d.found ? 1 : 0;
    a.mine.handed = d.handed();
    a.mine.wire = d.wire();
    a.mine.cpu_us = a.times.empty() ? 0 : a.cpu_us / static_cast<double>(a.times.size());
    rows.push_back(summarize(ctx, row, a, agreement));
  }
  if (rows.size() == 2) rows[0].speedup = paired_speedup(rows[1].iter_us, rows[0].iter_us);
  return rows;
}

// A ring all-reduce on a communicator of the net table.
class RingArm final : public ArmComm {
 public:
  RingArm(std::unique_ptr<Communicator> comm, std::function<void(Communicator&)> run)
      : comm_(std::move(comm)), run_(std::move(run)) {}
  void run() override { run_(*comm_); }

 private:
  std::unique_ptr<Communicator> comm_;
  std::function<void(Communicator&)> run_;
};

// An all-reduce on the collective network.
class CollNetArm final : public ArmComm {
 public:
  CollNetArm(std::unique_ptr<CollNetComm> comm, std::function<void(CollNetComm&)> run)
      : comm_(std::move(comm)), run_(std::move(run)) {}
  void run() override { run_(*comm_); }

 private:
  std::unique_ptr<CollNetComm> comm_;
  std::function<void(CollNetComm&)> run_;
};

// An all-to-all; with --copies gpu its input is staged once and its output collected after
// each call, outside the timed region.
class AlltoAllArm final : public ArmComm {
 public:
  AlltoAllArm(std::unique_ptr<Communicator> comm, std::function<void(Communicator&)> run,
              std::function<void(Communicator&)> collect)
      : comm_(std::move(comm)), run_(std::move(run)), collect_(std::move(collect)) {}
  void run() override { run_(*comm_); }
  void collect() override {
    if (collect_) collect_(*comm_);
  }

 private:
  std::unique_ptr<Communicator> comm_;
  std::function<void(Communicator&)> run_, collect_;
};

// ncclDataType_t and ncclRedOp_t of the run, as NCCL hands them to the collective network
// (an average arrives as a sum of premultiplied inputs).
int nccl_dtype_code(compress::Dtype d) {
  return d == compress::Dtype::kFloat32 ? 7 : d == compress::Dtype::kBfloat16 ? 9 : 6;
}
int nccl_op_code(RedOp op) { return op == RedOp::kMin ? 3 : op == RedOp::kMax ? 2 : 0; }

}  // namespace

std::vector<Row> run_allreduce(RankContext& ctx, std::size_t bytes) {
  const Options& o = ctx.opt;
  Bootstrap& boot = ctx.boot;
  const int n = boot.nranks(), r = boot.rank();
  const std::size_t es = compress::dtype_size(o.dtype);
  const std::size_t count = bytes / es;
  Row row;
  row.collective = "allreduce";
  row.bytes = count * es;
  row.count = count;
  row.type = nccl_tests_type_name(o.dtype);
  row.redop = red_op_name(o.op);
  row.data = o.ar_data;

  // Every rank regenerates every rank's input, so each knows the exact result. With
  // --fresh-inputs, iteration i > 0 draws training step i of the same data (gradients: the
  // same layers and scales, new noise) into the same buffers.
  std::vector<std::vector<uint8_t>> inputs(static_cast<std::size_t>(n));
  std::vector<std::vector<uint8_t>> scaled;
  std::vector<const uint8_t*> ptrs, red_in;
  auto draw = [&](int iteration) {
    for (int q = 0; q < n; ++q) {
      std::vector<uint8_t> v =
          make_input(o.ar_data, count, derive_seed(o.seed, 1, static_cast<uint64_t>(q)), o.dtype,
                     static_cast<uint64_t>(iteration));
      auto& dst = inputs[static_cast<std::size_t>(q)];
      if (dst.empty())
        dst = std::move(v);
      else if (!v.empty())
        std::memcpy(dst.data(), v.data(), v.size());
    }
    // avg: as NCCL, each rank's input times 1/n, then a sum (what both routes reduce; the
    // bound check takes the original ones).
    if (o.op == RedOp::kAvg) {
      scaled.resize(inputs.size());
      for (std::size_t q = 0; q < inputs.size(); ++q) {
        scaled[q].resize(row.bytes);
        premultiply(scaled[q].data(), inputs[q].data(), count, o.dtype,
                    1.0f / static_cast<float>(n));
      }
    }
  };
  draw(0);
  for (std::size_t q = 0; q < inputs.size(); ++q) {
    ptrs.push_back(inputs[q].data());
    red_in.push_back(o.op == RedOp::kAvg ? scaled[q].data() : inputs[q].data());
  }
  const RedOp red_op = o.op == RedOp::kAvg ? RedOp::kSum : o.op;
  const uint8_t* in = red_in[static_cast<std::size_t>(r)];
  std::vector<uint8_t> out(row.bytes);
  const char* dt = nccl_dtype_name(o.dtype_name);

  // The ring: NCCL's schedule and the result it produces raw.
  RingParams rp;
  rp.step_bytes = o.step_bytes;
  RingSchedule sched(count, n, o.dtype, rp, red_op);
  CommSpec spec;
  spec.kind = ConnKind::kRing;
  spec.simple_bytes = static_cast<std::size_t>(kSteps) * o.step_bytes;
  if (n > 1) {
    spec.send_peers = {(r + 1) % n};
    spec.recv_peers = {(r + n - 1) % n};
  }
  spec.name = "squeeze-perf-allreduce-" + std::to_string(row.bytes);
  spec.dev = ctx.dev;
  spec.chain = o.chain;
  spec.timeout_s = o.timeout_s;
  std::vector<uint8_t> ring_want, collnet_want;

  std::vector<ArmWork> works;
  for (const ArmSide& side : arm_sides(ctx, true)) {
    ArmWork w;
    w.route = side.route;
    if (side.route == Route::kRing) {
      if (ring_want.empty()) {
        ring_want.resize(row.bytes);
        sched.reference(red_in, ring_want.data());
      }
      w.want = ring_want.data();
      w.bound = bound_for(side.policy, Coll::kAllReduce, o.dtype, count, n);
      w.open = [&](const PluginLib& lib, uint64_t id) -> std::unique_ptr<ArmComm> {
        CommSpec s = spec;
        s.comm_id = id;
        return std::make_unique<RingArm>(
            std::make_unique<Communicator>(lib, boot, s),
            [&](Communicator& c) { ring_allreduce(c, sched, rp, in, out.data(), dt); });
      };
    } else {
      if (collnet_want.empty()) {
        collnet_want.resize(row.bytes);
        collnet_reference(red_in, collnet_want.data(), count, o.dtype, red_op);
      }
      w.want = collnet_want.data();
      w.bound = collnet_bound_for(side.policy, o.dtype, count, n, o.op);
      w.open = [&](const PluginLib& lib, uint64_t id) -> std::unique_ptr<ArmComm> {
        CollNetSpec s;
        s.comm_id = id;
        s.name = spec.name;
        s.dev = ctx.dev;
        s.chain = o.chain;
        s.channels = o.collnet_channels;
        s.timeout_s = o.timeout_s;
        auto comm = std::make_unique<CollNetComm>(lib, boot, s);
        const int dtype = nccl_dtype_code(o.dtype), op = nccl_op_code(red_op);
        if (!comm->supports(dtype, op))
          throw std::runtime_error(
              std::string("--route collnet: the plugin's collective network does not support ") +
              red_op_name(o.op) + " on " + o.dtype_name + " (reduceSupport says no)");
        return std::make_unique<CollNetArm>(std::move(comm), [&, dtype, op](CollNetComm& c) {
          c.allreduce(in, out.data(), count, dtype, es, dt, op);
        });
      };
    }
    works.push_back(std::move(w));
  }
  const BoundCheck check = [&](const uint8_t* got, const Bound& b) {
    return check_allreduce(ptrs, got, count, o.dtype, b, o.op);
  };
  std::function<void(int)> next_inputs;
  if (o.fresh_inputs)
    next_inputs = [&](int it) {
      if (it == 0) return;  // drawn above
      draw(it);
      if (!ring_want.empty()) sched.reference(red_in, ring_want.data());
      if (!collnet_want.empty())
        collnet_reference(red_in, collnet_want.data(), count, o.dtype, red_op);
    };
  return measure(ctx, row, std::move(works), out.data(), count, check, next_inputs);
}

std::vector<Row> run_alltoall(RankContext& ctx, std::size_t bytes) {
  const Options& o = ctx.opt;
  Bootstrap& boot = ctx.boot;
  const int n = boot.nranks(), r = boot.rank();
  const auto un = static_cast<std::size_t>(n);
  const std::size_t es = compress::dtype_size(o.dtype);
  const std::size_t per_peer = bytes / es / un;
  Row row;
  row.collective = "alltoall";
  row.bytes = per_peer * un * es;
  row.count = per_peer;  // nccl-tests' count of an all-to-all: per peer
  row.type = nccl_tests_type_name(o.dtype);
  row.redop = "none";
  row.data = o.a2a_data;

  // Block q of rank s's input is its own data set draw; the receiver regenerates the blocks
  // addressed to it.
  std::vector<uint8_t> in(row.bytes), want(row.bytes), out(row.bytes);
  const std::size_t block = per_peer * es;
  for (int q = 0; q < n; ++q) {
    const auto uq = static_cast<std::size_t>(q);
    auto mine = make_input(o.a2a_data, per_peer,
                           derive_seed(o.seed, 2 + static_cast<uint64_t>(r), uq), o.dtype);
    auto theirs = make_input(o.a2a_data, per_peer,
                             derive_seed(o.seed, 2 + uq, static_cast<uint64_t>(r)), o.dtype);
    if (block != 0) {
      std::memcpy(in.data() + uq * block, mine.data(), block);
      std::memcpy(want.data() + uq * block, theirs.data(), block);
    }
  }
  CommSpec spec;
  spec.kind = ConnKind::kP2p;
  for (int i = 1; i < n; ++i) {
    spec.send_peers.push_back((r + i) % n);
    spec.recv_peers.push_back((r + n - i) % n);
  }
  AlltoAllParams ap;
  ap.chunk_bytes = o.p2p_chunk;
  ap.gpu_copies = o.gpu_copies;
  spec.simple_bytes = alltoall_fifo_bytes(ap, block);
  spec.name = "squeeze-perf-alltoall-" + std::to_string(row.bytes);
  spec.dev = ctx.dev;
  spec.chain = o.chain;
  spec.timeout_s = o.timeout_s;
  const char* dt = nccl_dtype_name(o.dtype_name);
  std::vector<ArmWork> works;
  for (const ArmSide& side : arm_sides(ctx, false)) {
    ArmWork w;
    w.want = want.data();
    w.bound = bound_for(side.policy, Coll::kAllToAll, o.dtype, per_peer, n);
    w.open = [&](const PluginLib& lib, uint64_t id) -> std::unique_ptr<ArmComm> {
      CommSpec s = spec;
      s.comm_id = id;
      auto comm = std::make_unique<Communicator>(lib, boot, s);
      std::function<void(Communicator&)> collect;
      if (ap.gpu_copies) {
        alltoall_stage(*comm, in.data(), block);
        collect = [&](Communicator& c) { alltoall_collect(c, in.data(), out.data(), block); };
      }
      return std::make_unique<AlltoAllArm>(
          std::move(comm),
          [&](Communicator& c) { alltoall(c, ap, in.data(), out.data(), per_peer, o.dtype, dt); },
          std::move(collect));
    };
    works.push_back(std::move(w));
  }
  const BoundCheck check = [&](const uint8_t* got, const Bound& b) {
    return check_alltoall(want.data(), got, per_peer, n, o.dtype, b);
  };
  return measure(ctx, row, std::move(works), out.data(), per_peer * un, check);
}

}  // namespace squeeze::perf

#include "perf/collective/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "perf/collective/alltoall.h"
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
};

// Elements beyond `bound` in one output (only called for a bound that is not exact: an
// exact bound counts the elements that differ from the raw ring's result).
using BoundCheck = std::function<CheckResult(const uint8_t* out, const Bound& bound)>;

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }

// Outside the timed region: `stage` once the communicator is up, `collect` after each call.
struct Untimed {
  std::function<void(Communicator&)> stage, collect;
};

// One plugin instance's side of a measurement: its communicator, timings and findings.
struct Arm {
  const PluginLib* lib = nullptr;
  const StatsFile* stats = nullptr;
  Bound bound;
  bool baseline = false;
  std::optional<Communicator> comm;
  std::vector<double> times;
  Summary mine;
  WireTotals before;
};

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
    for (std::size_t r = 0; r < n; ++r) worst = std::max(worst, all_times[r * arm.times.size() + i]);
    sum += worst;
    row.iter_us.push_back(worst);
  }
  row.arm = !ctx.baseline_lib ? "" : arm.baseline ? "baseline" : "main";
  row.nranks = boot.nranks();
  row.iters = ctx.opt.iters;
  row.time_us = sum / static_cast<double>(arm.times.size());
  row.algbw = static_cast<double>(row.bytes) / (row.time_us * 1e3);  // B/us -> GB/s
  row.busbw = row.algbw * busbw_factor(row.collective, row.nranks);
  row.have_ratio = true;
  row.bound = arm.bound.text;
  row.agree_required = arm.bound.bitwise;
  row.wrong = 0;
  for (const Summary& s : all) {
    row.max_err = nan_max(row.max_err, s.max_err);
    row.differing += s.differing;
    if (s.wrong_applies != 0 && row.wrong >= 0) row.wrong += static_cast<int64_t>(s.wrong);
    else row.wrong = -1;
    row.handed += s.handed;
    row.wire += s.wire;
    row.have_ratio = row.have_ratio && s.stats_found != 0;
  }
  row.have_ratio = row.have_ratio && row.wire > 0;
  row.ratio = row.have_ratio ? static_cast<double>(row.handed) / static_cast<double>(row.wire) : 1.0;
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

// Warm-up and timed iterations of `run`, checking `out` against `want` after each one. With
// a --baseline instance, each iteration runs on both communicators, in alternating order, so
// that both see the same machine; rows[0] is the main instance's, rows[1] the baseline's.
std::vector<Row> measure(RankContext& ctx, CommSpec spec, const Row& row, const std::function<void(Communicator&)>& run,
                         const uint8_t* out, const uint8_t* want, std::size_t elems, const BoundCheck& bound_check,
                         const Untimed& untimed = {}) {
  const Options& o = ctx.opt;
  Bootstrap& boot = ctx.boot;
  spec.name = "squeeze-perf-" + row.collective + "-" + std::to_string(row.bytes);
  spec.dev = ctx.dev;
  spec.chain = o.chain;
  spec.timeout_s = o.timeout_s;
  const bool agreement = row.collective == "allreduce";  // only all-reduce outputs agree across ranks
  std::vector<Arm> arms(ctx.baseline_lib ? 2 : 1);
  const Coll coll = agreement ? Coll::kAllReduce : Coll::kAllToAll;
  const int n = boot.nranks();
  arms[0].lib = &ctx.lib;
  arms[0].stats = &ctx.stats;
  arms[0].bound = bound_for(ctx.policy, coll, o.dtype, row.count, n);
  if (ctx.baseline_lib) {
    arms[1].lib = ctx.baseline_lib;
    arms[1].stats = ctx.baseline_stats;
    arms[1].bound = bound_for(ctx.baseline_policy, coll, o.dtype, row.count, n);
    arms[1].baseline = true;
  }
  for (Arm& a : arms) {
    a.before = a.stats->read();
    spec.comm_id = ctx.comm_base + ++ctx.comm_index;
    a.comm.emplace(*a.lib, boot, spec);
    if (untimed.stage) untimed.stage(*a.comm);
  }
  for (int it = 0; it < o.warmup + o.iters; ++it) {
    for (std::size_t k = 0; k < arms.size(); ++k) {
      Arm& a = arms[(static_cast<std::size_t>(it) + k) % arms.size()];
      boot.barrier();
      const auto t0 = Clock::now();
      run(*a.comm);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      if (it >= o.warmup) a.times.push_back(us);
      // Every rank is done before anyone checks: a rank's checks must not take the CPU
      // from a rank still inside its timed collective.
      boot.barrier();
      if (untimed.collect) untimed.collect(*a.comm);
      Comparison c = compare(out, want, elems, o.dtype);
      a.mine.max_err = nan_max(a.mine.max_err, c.max_abs_err);
      a.mine.differing += c.differing;
      if (a.bound.kind == Bound::Kind::kExact) {
        a.mine.wrong += c.differing;
      } else if (c.differing != 0) {  // a lossy run that happened to send raw is within any bound
        const CheckResult chk = bound_check(out, a.bound);
        a.mine.wrong += chk.wrong;
        a.mine.wrong_applies = chk.wrong_applies ? 1 : 0;
      } else {  // what the check would say for a bit-exact output
        a.mine.wrong_applies = a.bound.kind == Bound::Kind::kNone || (agreement && o.op == RedOp::kProd) ? 0 : 1;
      }
      if (agreement) a.mine.hash = hash_bytes(out, elems * compress::dtype_size(o.dtype), a.mine.hash);
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
    rows.push_back(summarize(ctx, row, a, agreement));
  }
  if (rows.size() == 2) rows[0].speedup = paired_speedup(rows[1].iter_us, rows[0].iter_us);
  return rows;
}

}  // namespace

std::vector<Row> run_allreduce(RankContext& ctx, std::size_t bytes) {
  const Options& o = ctx.opt;
  const int n = ctx.boot.nranks(), r = ctx.boot.rank();
  const std::size_t es = compress::dtype_size(o.dtype);
  const std::size_t count = bytes / es;
  Row row;
  row.collective = "allreduce";
  row.bytes = count * es;
  row.count = count;
  row.type = nccl_tests_type_name(o.dtype);
  row.redop = red_op_name(o.op);
  row.data = o.ar_data;

  // Every rank regenerates every rank's input, so each knows the exact result.
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<const uint8_t*> ptrs;
  for (int q = 0; q < n; ++q) inputs.push_back(make_input(o.ar_data, count, derive_seed(o.seed, 1, static_cast<uint64_t>(q)), o.dtype));
  for (const auto& v : inputs) ptrs.push_back(v.data());
  // avg: as NCCL, each rank's input times 1/n, then a sum (the ring's inputs; the bound check
  // takes the original ones).
  std::vector<std::vector<uint8_t>> scaled;
  std::vector<const uint8_t*> ring_in = ptrs;
  if (o.op == RedOp::kAvg) {
    for (std::size_t q = 0; q < ptrs.size(); ++q) {
      scaled.emplace_back(row.bytes);
      premultiply(scaled.back().data(), ptrs[q], count, o.dtype, 1.0f / static_cast<float>(n));
      ring_in[q] = scaled.back().data();
    }
  }
  RingParams rp;
  rp.step_bytes = o.step_bytes;
  RingSchedule sched(count, n, o.dtype, rp, o.op == RedOp::kAvg ? RedOp::kSum : o.op);
  std::vector<uint8_t> want(row.bytes), out(row.bytes);
  sched.reference(ring_in, want.data());
  const uint8_t* in = ring_in[static_cast<std::size_t>(r)];

  CommSpec spec;
  spec.kind = ConnKind::kRing;
  spec.simple_bytes = static_cast<std::size_t>(kSteps) * o.step_bytes;
  if (n > 1) {
    spec.send_peers = {(r + 1) % n};
    spec.recv_peers = {(r + n - 1) % n};
  }
  const char* dt = nccl_dtype_name(o.dtype_name);
  const BoundCheck check = [&](const uint8_t* got, const Bound& b) {
    return check_allreduce(ptrs, got, count, o.dtype, b, o.op);
  };
  return measure(
      ctx, spec, row, [&](Communicator& c) { ring_allreduce(c, sched, rp, in, out.data(), dt); }, out.data(), want.data(),
      count, check);
}

std::vector<Row> run_alltoall(RankContext& ctx, std::size_t bytes) {
  const Options& o = ctx.opt;
  const int n = ctx.boot.nranks(), r = ctx.boot.rank();
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
    auto mine = make_input(o.a2a_data, per_peer, derive_seed(o.seed, 2 + static_cast<uint64_t>(r), uq), o.dtype);
    auto theirs = make_input(o.a2a_data, per_peer, derive_seed(o.seed, 2 + uq, static_cast<uint64_t>(r)), o.dtype);
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
  Untimed untimed;
  if (ap.gpu_copies) {
    untimed.stage = [&](Communicator& c) { alltoall_stage(c, in.data(), block); };
    untimed.collect = [&](Communicator& c) { alltoall_collect(c, in.data(), out.data(), block); };
  }
  const char* dt = nccl_dtype_name(o.dtype_name);
  const BoundCheck check = [&](const uint8_t* got, const Bound& b) {
    return check_alltoall(want.data(), got, per_peer, n, o.dtype, b);
  };
  return measure(
      ctx, spec, row, [&](Communicator& c) { alltoall(c, ap, in.data(), out.data(), per_peer, o.dtype, dt); },
      out.data(), want.data(), per_peer * un, check, untimed);
}

}  // namespace squeeze::perf

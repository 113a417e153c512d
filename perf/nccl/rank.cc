#include "perf/nccl/rank.h"

#include <dlfcn.h>
#include <strings.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perf/collective/data.h"
#include "perf/collective/stats_file.h"
#include "perf/common/dtype_names.h"
#include "perf/common/result_check.h"
#include "perf/common/stated_bound.h"
#include "perf/nccl/cuda_res.h"
#include "perf/nccl/report.h"
#include "perf/nccl/run_files.h"
#include "plugin/params/params.h"
#include "plugin/policy/policy_load.h"

namespace squeeze::perf::nccl {
namespace {

using Clock = std::chrono::steady_clock;

struct Ctx {
  const Options& o;
  const NcclLib& lib;
  int rank = 0, n = 0;
  std::shared_ptr<const policy::Policy> policy;  // null: NCCL's socket transport
  std::unique_ptr<StatsFile> stats;              // null: no plugin
  bool a2a_sendrecv = false;                     // all-to-all as grouped ncclSend/ncclRecv
  RunInfo info;
};

struct Summary {
  double time_us = 0, max_err = 0;
  uint64_t wrong = 0, hash = 0, handed = 0, wire = 0, collnet_handed = 0;
  bool wrong_applies = true, stats_found = false;
};

std::string env_or(const char* name, const std::string& dflt) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : dflt;
}

ncclDataType_t nccl_type(compress::Dtype d) {
  return d == compress::Dtype::kBfloat16  ? ncclBfloat16
         : d == compress::Dtype::kFloat16 ? ncclFloat16
                                          : ncclFloat32;
}

ncclRedOp_t nccl_op(RedOp op) {
  switch (op) {
    case RedOp::kProd: return ncclProd;
    case RedOp::kMin: return ncclMin;
    case RedOp::kMax: return ncclMax;
    case RedOp::kAvg: return ncclAvg;
    default: return ncclSum;
  }
}

ncclUniqueId share_id(const Ctx& c, int k) {
  ncclUniqueId id{};
  const std::string name = "id." + std::to_string(k);
  if (c.rank == 0) {
    const ncclResult_t r = c.lib.GetUniqueId(&id);
    if (r != ncclSuccess) throw std::runtime_error(c.lib.describe("ncclGetUniqueId", r));
    publish(c.o.run_dir, name, std::string(id.internal, sizeof id.internal));
    return id;
  }
  const std::string s = await(c.o.run_dir, name, c.o.timeout_s);
  if (s.size() != sizeof id.internal)
    throw std::runtime_error(c.o.run_dir + "/" + name + ": " + std::to_string(s.size()) +
                             " bytes, not an ncclUniqueId (" + std::to_string(sizeof id.internal) +
                             ")");
  std::memcpy(id.internal, s.data(), sizeof id.internal);
  return id;
}

nlohmann::json to_json(const Summary& s) {
  return {{"time_us", s.time_us},
          {"max_err", std::isnan(s.max_err) ? nlohmann::json(nullptr) : nlohmann::json(s.max_err)},
          {"wrong", s.wrong},
          {"wrong_applies", s.wrong_applies},
          {"hash", s.hash},
          {"stats_found", s.stats_found},
          {"handed", s.handed},
          {"wire", s.wire},
          {"collnet_handed", s.collnet_handed}};
}

Summary from_json(const std::string& text, const std::string& where) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::runtime_error(where + ": not a rank summary");
  Summary s;
  s.time_us = j.value("time_us", 0.0);
  s.max_err = j["max_err"].is_null() ? NAN : j["max_err"].get<double>();
  s.wrong = j.value("wrong", uint64_t{0});
  s.wrong_applies = j.value("wrong_applies", true);
  s.hash = j.value("hash", uint64_t{0});
  s.stats_found = j.value("stats_found", false);
  s.handed = j.value("handed", uint64_t{0});
  s.wire = j.value("wire", uint64_t{0});
  s.collnet_handed = j.value("collnet_handed", uint64_t{0});
  return s;
}

// Runs row k on this rank; returns this rank's summary. `row` gets the row's shape.
Summary run_row(Ctx& c, int k, Coll coll, std::size_t bytes, const Bound& bound, Row* row) {
  const Options& o = c.o;
  const std::size_t es = compress::dtype_size(o.dtype), un = static_cast<std::size_t>(c.n);
  const auto me = static_cast<uint64_t>(c.rank);
  std::vector<std::vector<uint8_t>> inputs;  // all-reduce: every rank's input (for the exact sum)
  std::vector<uint8_t> in, want;             // all-to-all: what this rank sends and must receive
  std::size_t per_peer = 0;
  if (coll == Coll::kAllReduce) {
    row->count = bytes / es;
    row->bytes = row->count * es;
    for (std::size_t q = 0; q < un; ++q)
      inputs.push_back(make_input(o.ar_data, row->count, derive_seed(o.seed, 1, q), o.dtype));
  } else {
    per_peer = bytes / es / un;
    row->count = per_peer;  // nccl-tests' count of an all-to-all: per peer
    row->bytes = per_peer * un * es;
    in.resize(row->bytes);
    want.resize(row->bytes);
    for (std::size_t q = 0; q < un; ++q) {
      auto mine = make_input(o.a2a_data, per_peer, derive_seed(o.seed, 2 + me, q), o.dtype);
      auto theirs = make_input(o.a2a_data, per_peer, derive_seed(o.seed, 2 + q, me), o.dtype);
      std::memcpy(in.data() + q * per_peer * es, mine.data(), per_peer * es);
      std::memcpy(want.data() + q * per_peer * es, theirs.data(), per_peer * es);
    }
  }
  const uint8_t* src = coll == Coll::kAllReduce ? inputs[me].data() : in.data();
  std::vector<uint8_t> got(row->bytes);

  const ncclUniqueId id = share_id(c, k);
  const WireTotals before = c.stats ? c.stats->read() : WireTotals{};
  Summary s;
  {
    // The communicator last, so that on an error it is aborted (stopping its kernels) before
    // the buffers and the stream go.
    Stream stream;
    DeviceBuffer send(row->bytes), recv(row->bytes);
    Comm comm(c.lib, c.n, id, c.rank);
    cuda_check(cudaMemcpy(send.get(), src, row->bytes, cudaMemcpyHostToDevice),
               "cudaMemcpy to the GPU");
    cuda_check(cudaMemset(recv.get(), 0xFF, row->bytes),
               "cudaMemset");  // NaNs where nothing arrives
    const ncclDataType_t dt = nccl_type(o.dtype);
    auto launch = [&] {
      if (coll == Coll::kAllReduce) {
        comm.check(c.lib.AllReduce(send.get(), recv.get(), row->count, dt, nccl_op(o.op),
                                   comm.get(), stream.get()),
                   "ncclAllReduce");
        return;
      }
      if (!c.a2a_sendrecv) {
        comm.check(c.lib.AlltoAll(send.get(), recv.get(), per_peer, dt, comm.get(), stream.get()),
                   "ncclAlltoAll");
        return;
      }
      comm.check(c.lib.GroupStart(), "ncclGroupStart");
      for (std::size_t q = 0; q < un; ++q) {
        const int peer = static_cast<int>(q);
        comm.check(c.lib.Send(send.bytes() + q * per_peer * es, per_peer, dt, peer, comm.get(),
                              stream.get()),
                   "ncclSend");
        comm.check(c.lib.Recv(recv.bytes() + q * per_peer * es, per_peer, dt, peer, comm.get(),
                              stream.get()),
                   "ncclRecv");
      }
      comm.check(c.lib.GroupEnd(), "ncclGroupEnd");
    };
    for (int i = 0; i < o.warmup; ++i) launch();
    comm.wait(stream, o.timeout_s);
    const auto t0 = Clock::now();
    for (int i = 0; i < o.iters; ++i) launch();
    comm.wait(stream, o.timeout_s);
    s.time_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / o.iters;
    cuda_check(cudaMemcpy(got.data(), recv.get(), row->bytes, cudaMemcpyDeviceToHost),
               "cudaMemcpy from the GPU");
    comm.close();  // the plugin's finalize writes its statistics
  }
  CheckResult chk;
  if (coll == Coll::kAllReduce) {
    std::vector<const uint8_t*> ptrs;
    for (const auto& v : inputs) ptrs.push_back(v.data());
    chk = check_allreduce(ptrs, got.data(), row->count, o.dtype, bound, o.op);
    s.hash = hash_bytes(got.data(), got.size());
  } else {
    chk = check_alltoall(want.data(), got.data(), per_peer, c.n, o.dtype, bound);
  }
  s.max_err = chk.max_err;
  s.wrong = chk.wrong;
  s.wrong_applies = chk.wrong_applies;
  if (c.stats) {
    const WireTotals d = wire_delta(before, c.stats->read());
    s.stats_found = d.found;
    s.handed = d.handed();
    s.wire = d.wire();
    s.collnet_handed = d.collnet_handed;
  }
  return s;
}

Row gather_row(const Ctx& c, int k, Row row, const Bound& bound) {
  row.mode = c.o.mode_name;
  row.nranks = c.n;
  row.iters = c.o.iters;
  row.type = nccl_tests_type_name(c.o.dtype);
  row.bound = bound.text;
  row.agree_required = bound.bitwise;
  row.have_ratio = c.stats != nullptr;
  row.wrong = 0;
  std::vector<Summary> all;
  for (int q = 0; q < c.n; ++q) {
    const std::string name = "sum." + std::to_string(k) + "." + std::to_string(q);
    all.push_back(from_json(await(c.o.run_dir, name, c.o.timeout_s), c.o.run_dir + "/" + name));
  }
  for (const Summary& s : all) {
    row.time_us = std::max(row.time_us, s.time_us);
    row.max_err =
        std::isnan(s.max_err) || std::isnan(row.max_err) ? NAN : std::max(row.max_err, s.max_err);
    if (s.wrong_applies && row.wrong >= 0)
      row.wrong += static_cast<int64_t>(s.wrong);
    else
      row.wrong = -1;
    row.handed += s.handed;
    row.wire += s.wire;
    row.collnet_handed += s.collnet_handed;
    row.have_ratio = row.have_ratio && s.stats_found;
  }
  row.have_ratio = row.have_ratio && row.wire > 0;
  row.ratio =
      row.have_ratio ? static_cast<double>(row.handed) / static_cast<double>(row.wire) : 1.0;
  row.algbw = static_cast<double>(row.bytes) / (row.time_us * 1e3);  // B/us -> GB/s
  row.busbw = row.algbw * busbw_factor(row.collective, c.n);
  if (row.collective == "allreduce") {
    row.agree = 1;
    for (const Summary& s : all) row.agree = row.agree && s.hash == all[0].hash;
  }
  return row;
}

int run(const Options& o) {
  if (o.run_dir.empty())
    throw std::runtime_error("--rank needs --run-dir (it is set by the launcher)");
  NcclLib lib(o.nccl_lib);
  Ctx c{o, lib, o.rank, o.nranks, nullptr, nullptr, false, {}};
  if (o.a2a_api == "alltoall" && lib.AlltoAll == nullptr)
    throw std::runtime_error("--a2a-api alltoall: NCCL " + lib.version_string() +
                             " has no ncclAlltoAll (2.28 on)");
  c.a2a_sendrecv = o.a2a_api == "sendrecv" || lib.AlltoAll == nullptr;
  c.info.a2a_api = c.a2a_sendrecv ? "sendrecv" : "alltoall";
  const int device = o.gpus[static_cast<std::size_t>(o.rank) % o.gpus.size()];
  cuda_check(cudaSetDevice(device), ("cudaSetDevice(" + std::to_string(device) + ")").c_str());
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");

  const std::string net = env_or("NCCL_NET", "(unset)");
  const bool socket = strcasecmp(net.c_str(), "Socket") == 0;
  c.info.mode = o.mode_name;
  c.info.net = net;
  c.info.nranks = o.nranks;
  c.info.ifname = env_or("NCCL_SOCKET_IFNAME", "(NCCL's choice)");
  c.info.algo = env_or("NCCL_ALGO", "");
  c.info.collnet = o.collnet && !socket;
  c.info.label = o.label;
  c.info.nccl = lib.version_string() + " (" + lib.path() + ")";
  std::string gpus;
  for (int g : o.gpus) {
    if (!gpus.empty()) gpus += ',';
    gpus += std::to_string(g);
  }
  c.info.devices = "cuda:" + gpus + " (" + prop.name + ")";
  if (!socket) {
    // Before NCCL loads the plugin: it names its statistics file after SQUEEZE_RANK.
    c.stats = std::make_unique<StatsFile>(o.rank);
    c.info.plugin = env_or("NCCL_NET_PLUGIN", "");
    // Keep the plugin mapped for the whole run: NCCL unloads it when its last communicator
    // goes, which would restart the statistics each row counts by difference.
    if (dlopen(c.info.plugin.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr)
      throw std::runtime_error("cannot load the plugin " + c.info.plugin + ": " + dlerror());
    const std::string pol =
        squeeze::params::Settings::read_env(squeeze::params::Id::kPolicy, nullptr).text;
    std::string error;
    c.policy = policy::load_policy(pol.empty() ? nullptr : pol.c_str(), &error);
    if (!c.policy) throw std::runtime_error(error);
    c.info.policy = pol.empty() ? "built-in default" : pol;
    c.info.bypass = squeeze::params::Settings::read_env(squeeze::params::Id::kBypass, nullptr).text;
  }
  if (o.rank == 0 && !o.json) print_header(c.info);

  bool ok = true;
  int k = 0;
  ResultTable table;
  for (Coll coll : {Coll::kAllReduce, Coll::kAllToAll}) {
    if ((coll == Coll::kAllReduce && !o.do_allreduce) ||
        (coll == Coll::kAllToAll && !o.do_alltoall))
      continue;
    const bool table_out = o.rank == 0 && !o.json;
    if (table_out) {
      std::printf("# %s: data %s\n", coll_name(coll),
                  coll == Coll::kAllReduce ? o.ar_data.c_str() : o.a2a_data.c_str());
      table.header();
    }
    for (std::size_t bytes : size_list(o)) {
      const std::size_t es = compress::dtype_size(o.dtype);
      if (coll == Coll::kAllToAll && bytes < static_cast<std::size_t>(o.nranks) * es) continue;
      Row row;
      row.collective = coll_name(coll);
      row.redop = coll == Coll::kAllReduce ? red_op_name(o.op) : "none";
      row.data = coll == Coll::kAllReduce ? o.ar_data : o.a2a_data;
      const std::size_t call_count =
          coll == Coll::kAllReduce ? bytes / es : bytes / es / static_cast<std::size_t>(o.nranks);
      // On the collective network each rank is a node; an average is reduced as a sum.
      const bool on_collnet = c.info.collnet && coll == Coll::kAllReduce;
      if (on_collnet) row.route = "collnet";
      const Bound bound =
          on_collnet
              ? collnet_bound_for(c.policy.get(), o.dtype, call_count, o.nranks,
                                  o.op == RedOp::kAvg ? RedOp::kSum : o.op)
              : bound_for(c.policy.get(), coll, o.dtype, call_count, o.nranks, c.a2a_sendrecv);
      const Summary s = run_row(c, k, coll, bytes, bound, &row);
      publish(o.run_dir, "sum." + std::to_string(k) + "." + std::to_string(o.rank),
              to_json(s).dump());
      if (o.rank == 0) {
        row = gather_row(c, k, row, bound);
        if (o.json) {
          std::printf("%s\n", row_json(row, c.info).c_str());
          std::fflush(stdout);
        } else {
          table.row(table_row(row));
        }
        append_line(o.run_dir, "rows.jsonl", row_json(row, c.info));
        if (o.check) ok = row_passes(row) && ok;
      }
      ++k;
    }
    if (table_out) table.footer();
  }
  return ok ? 0 : kExitCheckFailed;
}

}  // namespace

int run_rank(const Options& o) {
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "squeeze-nccl-perf: rank %d (mode %s): %s\n", o.rank, o.mode_name.c_str(),
                 e.what());
    return kExitRankError;
  }
}

}  // namespace squeeze::perf::nccl

#include "perf/train/train_options.h"

#include <string>

#include "perf/common/cli_args.h"

namespace squeeze::perf {

namespace {

constexpr const char* kAbout =
    "Data-parallel training through the plugin's collective network, as a check that a\n"
    "compressing policy still trains: N ranks (forked here) train the same two-layer MLP on\n"
    "their own batches of a synthetic task, each step's gradient summed by an all-reduce on\n"
    "ncclCollNetPlugin_v11 (driven as NCCL's CollNetChain proxy drives it), once under --policy\n"
    "and once, side by side in the same processes, under --raw-policy. Exit 1 unless the\n"
    "compressed run's final held-out loss is within --tolerance of the raw run's and every\n"
    "rank ends with the same parameters in both runs.";

// "R=FILE" of --rank-policy.
std::string add_rank_policy(const std::string& v, TrainOptions* o) {
  const std::size_t eq = v.find('=');
  if (eq == 0 || eq == std::string::npos || eq + 1 == v.size()) return "RANK=FILE";
  int rank = 0;
  for (char c : v.substr(0, eq)) {
    if (c < '0' || c > '9' || rank > 9999) return "RANK=FILE with RANK a rank number";
    rank = rank * 10 + (c - '0');
  }
  o->rank_policies.emplace_back(rank, v.substr(eq + 1));
  return "";
}

}  // namespace

const std::string& TrainOptions::policy_of(int rank) const {
  for (auto it = rank_policies.rbegin(); it != rank_policies.rend(); ++it)
    if (it->first == rank) return it->second;
  return policy;
}

TrainOptions parse_train_options(int argc, char** argv) {
  TrainOptions o;
  o.policy = SQUEEZE_PERF_POLICY_DIR "/collnet-threshold.json";
  o.raw_policy = SQUEEZE_CONFIG_DIR "/off.json";
  CliParser cli("squeeze-train-check", kAbout);
  cli.section("Ranks and plugin")
      .integer("-N,--nranks", &o.nranks, 1, 64, "ranks forked on this machine (one per node)")
      .text("--plugin", &o.plugin, "PATH", "plugin library (default: the one built with this tool)")
      .text("--policy", &o.policy, "FILE", "the compressed run's policy")
      .text("--raw-policy", &o.raw_policy, "FILE", "the raw run's policy")
      .custom("--rank-policy", "R=FILE", "RANK=FILE",
              "rank R's compressed run uses FILE instead of --policy (repeatable): nodes whose "
              "policies differ must still end bit-identical",
              [&o](const std::string& v) { return add_rank_policy(v, &o); })
      .integer("--collnet-channels", &o.channels, 1, 64,
               "CollNetChain channels: each iallreduce carries channels x chunk bytes")
      .flag("--bypass", &o.bypass,
            "let the plugin send raw where coding would not pay on the measured link (off by "
            "default: over loopback it never pays, and the check is about training)")
      .section("Model and training")
      .integer("--in", &o.shape.in, 1, 1 << 16, "input features")
      .integer("--hidden", &o.shape.hidden, 1, 1 << 16, "hidden units (ReLU)")
      .integer("--classes", &o.shape.out, 2, 1 << 16, "classes (softmax)")
      .integer("--teacher-hidden", &o.teacher_hidden, 1, 1 << 16,
               "hidden units of the labelling network")
      .integer("--batch", &o.batch, 1, 1 << 20, "samples per rank and step")
      .integer("--steps", &o.steps, 1, 1000000, "training steps")
      .number("--lr", &o.lr, 0, 100, "SGD learning rate")
      .number("--momentum", &o.momentum, 0, 0.9999, "SGD momentum")
      .integer("--seed", &o.seed, 0, 1LL << 62, "seed of the model, the teacher and the data")
      .integer("--eval", &o.eval, 1, 1 << 24, "held-out samples the final loss is measured on")
      .integer("--report-every", &o.report_every, 1, 1000000, "steps between two table rows")
      .number("--tolerance", &o.tolerance, 0, 10,
              "the compressed run's final loss may exceed the raw run's by this fraction")
      .number("--timeout", &o.timeout_s, 1, 86400, "seconds without progress before giving up")
      .section("Output")
      .flag("--json", &o.json, "JSON lines instead of the table");
  cli.parse_or_exit(argc, argv);
  for (const auto& [rank, file] : o.rank_policies)
    if (rank >= o.nranks)
      cli.fail("--rank-policy " + std::to_string(rank) + "=" + file + ": there are only " +
               std::to_string(o.nranks) + " ranks (0.." + std::to_string(o.nranks - 1) + ")");
  return o;
}

}  // namespace squeeze::perf

// The error bound a policy states for one collective call: the one place in perf/ where a
// policy's decision becomes the bound the tools print beside max_err and check results
// against (squeeze-perf and squeeze-nccl-perf both call it). Given the policy, the
// collective, the dtype, the element count and the rank count, it returns the bound and its
// text; nothing lossy applies to a null policy (NCCL's Socket transport) or to raw and
// lossless rules.
#pragma once

#include <cstdint>
#include <string>

#include "compress/codec.h"
#include "perf/common/reduce_op.h"
#include "plugin/policy/policy.h"

namespace squeeze::perf {

enum class Coll : uint8_t { kAllReduce, kAllToAll };
const char* coll_name(Coll c);  // "allreduce" | "alltoall"

struct Bound {
  enum class Kind : uint8_t { kExact, kAbs, kRel, kRelRow, kCast, kNone };
  Kind kind = Kind::kExact;
  double value = 0;         // kAbs: the bound; kRel/kRelRow: fraction of the value range
  uint32_t row_length = 0;  // kRelRow
  compress::Dtype cast_to = compress::Dtype::kBfloat16;  // kCast
  bool bitwise = true;  // all-reduce: the policy keeps ranks bit-identical
  // kCast all-reduce: casts an element's result went through, each adding up to the cast
  // type's unit roundoff times the sum of |inputs|; -1: the ring's lossy hops
  // (policy::allreduce_lossy_hops).
  int cast_hops = -1;
  // One word, for tables and JSON: "exact", "abs=0.01", "rel=0.02", "rel_row=0.01",
  // "cast=bfloat16", "none(threshold)".
  std::string text = "exact";
};

// The bound `policy` states for a call of `count` elements of dtype d (per peer for
// all-to-all) among nranks, as the plugin decides it for SIMPLE messages (LL/LL128 ones go
// raw, which is within any bound): for quantize the loosest the engine may use, with the
// schedule's start and the stream's multiplier. `as_send`: the all-to-all is grouped
// ncclSend/ncclRecv, which the plugin sees as "send", not "alltoall".
Bound bound_for(const policy::Policy* policy, Coll c, compress::Dtype d, uint64_t count, int nranks,
                bool as_send = false);

// The bound `policy` states for an all-reduce of `count` elements on Squeeze's collective
// network among `nodes` (one rank per node), from the plans policy::plan_message() makes for
// its two hops (Path::kCollNet, plugin/policy/plan.h): each coded contribution may add its
// share of the rule's bound, the coded result its own, and an element of a sum goes through
// nodes - 1 contributions and the result (a min or max through one of each), so quantize states
// the sum of those shares (the rule's bound; relative to the largest value range of the nodes'
// inputs to the call and of the reduced piece, plugin/policy/plan.h; rows taken as whole pieces), a
// cast two casts, threshold none. Ranks are always bit-identical there. op: kSum, kMin or kMax (an
// average is a sum).
Bound collnet_bound_for(const policy::Policy* policy, compress::Dtype d, uint64_t count, int nodes,
                        RedOp op);

}  // namespace squeeze::perf

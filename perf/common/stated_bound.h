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

}  // namespace squeeze::perf

// What a row's results must be: the bound the policy states for the call (nothing lossy
// over NCCL's Socket transport or for raw/lossless rules), and the checks of one rank's
// output against the exact result computed on the host.
//
// All-reduce: the exact result is the sum of every rank's input in double. With 2 ranks and
// a bit-exact bound the reference is that sum rounded as NCCL's kernel rounds it
// (float add, rounded to the dtype) and any differing bit is wrong; with more ranks the ring
// adds in an order this tool does not know, so "exact" allows the summation's rounding
// (n ulp-sized terms of sum |x|). Lossy bounds add the same rounding allowance.
// All-to-all: each block must equal the sender's block bit for bit, or lie within the bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "plugin/policy/policy.h"

namespace squeeze::perf::nccl {

enum class Coll : uint8_t { kAllReduce, kAllToAll };
const char* coll_name(Coll c);  // "allreduce" | "alltoall"

struct Bound {
  enum class Kind : uint8_t { kExact, kAbs, kRel, kRelRow, kCast, kNone };
  Kind kind = Kind::kExact;
  double value = 0;           // kAbs: the bound; kRel/kRelRow: fraction of the value range (multipliers applied)
  uint32_t row_length = 0;    // kRelRow
  compress::Dtype cast_to = compress::Dtype::kBfloat16;  // kCast
  bool bitwise = true;        // all-reduce: the policy keeps ranks bit-identical
  std::string text;           // for the table: "exact", "rel 0.02", "cast bfloat16", "none (threshold)"
};

// The bound `policy` states for a call of `count` elements of dtype d (per peer for
// all-to-all) among nranks, as the plugin decides it for SIMPLE messages (LL/LL128 ones go
// raw, which is within any bound). A null policy means no compression. `as_send`: the
// all-to-all is grouped ncclSend/ncclRecv, which the plugin sees as "send", not "alltoall".
Bound bound_for(const policy::Policy* policy, Coll c, compress::Dtype d, uint64_t count, int nranks,
                bool as_send = false);

struct CheckResult {
  double max_err = 0;          // max |got - exact| in double; NaN when a result is not finite
  uint64_t wrong = 0;          // elements beyond the bound (0 when !wrong_applies)
  bool wrong_applies = true;   // false for kNone (threshold states no per-element bound)
};

// `inputs[q]` is rank q's input, `got` this rank's all-reduce output, `count` elements.
CheckResult check_allreduce(const std::vector<const uint8_t*>& inputs, const uint8_t* got, std::size_t count,
                            compress::Dtype d, const Bound& b);
// `want` holds the nranks blocks this rank must receive (block q from rank q), `got` what it
// received; `per_peer` elements per block.
CheckResult check_alltoall(const uint8_t* want, const uint8_t* got, std::size_t per_peer, int nranks,
                           compress::Dtype d, const Bound& b);

}  // namespace squeeze::perf::nccl

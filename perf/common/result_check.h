// The checks of one rank's collective output against the exact result computed on the host,
// counting the elements beyond the policy's stated bound (perf/common/stated_bound.h): the
// #wrong column of squeeze-perf and squeeze-nccl-perf.
//
// All-reduce: the exact result is the reduction of every rank's input in double (avg: the sum
// over nranks). With 2 ranks and a bit-exact bound the reference is the pair reduced as NCCL's
// kernel does it (in float, rounded to the dtype) and any differing bit is wrong; with more
// ranks a sum is added in an order this check does not know, so "exact" allows the summation's
// rounding (n ulp-sized terms of sum |x|); min and max are exact in any order. Lossy bounds add
// the same rounding allowance; a product states no bound under a lossy codec.
// All-to-all: each block must equal the sender's block bit for bit, or lie within the bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compress/codec.h"
#include "perf/common/reduce_op.h"
#include "perf/common/stated_bound.h"

namespace squeeze::perf {

struct CheckResult {
  double max_err = 0;         // max |got - exact| in double; NaN when a result is not finite
  uint64_t wrong = 0;         // elements beyond the bound (0 when !wrong_applies)
  bool wrong_applies = true;  // false where no per-element bound is stated (threshold)
};

// `inputs[q]` is rank q's input, `got` this rank's all-reduce output, `count` elements.
CheckResult check_allreduce(const std::vector<const uint8_t*>& inputs, const uint8_t* got,
                            std::size_t count, compress::Dtype d, const Bound& b,
                            RedOp op = RedOp::kSum);
// `want` holds the nranks blocks this rank must receive (block q from rank q), `got` what it
// received; `per_peer` elements per block.
CheckResult check_alltoall(const uint8_t* want, const uint8_t* got, std::size_t per_peer,
                           int nranks, compress::Dtype d, const Bound& b);

}  // namespace squeeze::perf

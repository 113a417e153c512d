// The owner's reduction of one piece: every rank's contribution, combined in
// rank order, so the result depends only on the inputs and never on which
// arrived first. Float sums accumulate in double and round once into the
// element type; min and max pick an input's bits (NaN wins, the first in rank
// order); integer sums wrap (two's complement), as NCCL's do.
#pragma once

#include <cstdint>
#include <span>

#include "plugin/policy/message_meta.h"

namespace squeeze::collnet {

// True for the (dtype, op) pairs reduce_in_order implements
// (reduce_supported's).
bool can_reduce(policy::DataType dtype, policy::ReduceOp op);

// out[i] = inputs[0][i] op inputs[1][i] op ... for i < count. `inputs` are in
// rank order and hold `count` elements of `dtype` each; out must not overlap an
// input other than inputs[k] element for element. Returns false for a pair
// can_reduce refuses (out untouched).
bool reduce_in_order(policy::DataType dtype, policy::ReduceOp op,
                     std::span<const void* const> inputs, void* out, uint64_t count);

}  // namespace squeeze::collnet

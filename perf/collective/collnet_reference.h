// The exact result of an all-reduce on the plugin's collective network when nothing is coded
// (raw or lossless), restated from plugin/collnet/README.md rather than shared with the plugin,
// so the emulator checks the plugin against its stated contract: per element, the ranks' inputs
// in rank order; sums added in double and rounded once (to float, then to a half type); min and
// max take one input's bits (the first NaN wins, else the first strict minimum or maximum).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compress/codec.h"
#include "perf/common/reduce_op.h"

namespace squeeze::perf {

// op: kSum, kMin or kMax (an average is a sum of premultiplied inputs; the collective network
// has no product). Returns false, leaving `out` alone, for another op.
bool collnet_reference(const std::vector<const uint8_t*>& inputs, uint8_t* out, std::size_t count,
                       compress::Dtype d, RedOp op);

}  // namespace squeeze::perf

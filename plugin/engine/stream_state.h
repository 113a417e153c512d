// Per-stream state of a sending comm: one per policy::StreamKey (rule, element count; the
// count names a tensor in practice). Holds the DCT threshold state, the row-dedupe gate and
// whether an encode of the stream is running (stateful codecs encode a stream's messages one
// at a time, in order).
#pragma once

#include <cstdint>

#include "compress/threshold.h"
#include "plugin/engine/dedupe_gate.h"

namespace squeeze::plugin {

struct StreamState {
  compress::ThresholdState threshold;
  DedupeGate dedupe;
  uint64_t messages = 0;  // coded so far (the error-bound schedule's index)
  bool busy = false;      // an encode of this stream is running (progress thread only)
};

}  // namespace squeeze::plugin

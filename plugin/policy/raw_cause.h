// Why a message went raw, as the statistics count it.
#pragma once

#include <cstdint>

#include "plugin/policy/policy.h"

namespace squeeze::policy {

// The first three come from Decision::raw_reason.
enum class RawCause : uint8_t {
  kPolicy = 0,    // the rule or the default says raw
  kProtocol,      // LL/LL128
  kDtype,         // lossy codec, non-float dtype, fallback raw
  kNotWorthIt,    // the engine judged compression would not pay
  kFailed,        // encoding failed or had no room; sent raw instead
  kDeviceMemory,  // the buffer is GPU memory, which the CPU codecs cannot read
  kReduceOp,      // the codec drops values, which only a sum can take (CollNet min/max)
  kNoFeedback,    // the rule's error feedback cannot be given: the piece's place is unknown
};
inline constexpr int kNumRawCauses = 8;
const char* raw_cause_name(RawCause c);  // defined in stats.cc
RawCause raw_cause(RawReason r);         // kNone maps to kPolicy

}  // namespace squeeze::policy

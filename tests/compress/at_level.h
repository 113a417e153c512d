// Runs the quantize codec at one instruction-set level (compress/quantize_simd.h) for the
// lifetime of the object, so a test can compare levels on the same input.
#pragma once

#include "compress/quantize_simd.h"

namespace squeeze::compress {

class AtLevel {
 public:
  explicit AtLevel(qsimd::Level l) : prev_(qsimd::set_level(l)) {}
  ~AtLevel() { qsimd::set_level(prev_); }
  AtLevel(const AtLevel&) = delete;
  AtLevel& operator=(const AtLevel&) = delete;

 private:
  qsimd::Level prev_;
};

}  // namespace squeeze::compress

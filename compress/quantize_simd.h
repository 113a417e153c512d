// Which instruction set the quantize codec's hot loops use (the encoder's range scan, code
// kernel, row hash and block packing; the decoder's unpacking and reconstruction). Every
// level produces the same bytes;
// the lower ones exist for CPUs without the wider units, and so that tests can check that
// every level agrees with the scalar path.
//
// The level is the widest the CPU runs, capped by the environment variable
// SQUEEZE_QUANTIZE_SIMD=scalar|avx2|avx512 (read once; an unknown value is ignored), and
// can be lowered at run time with set_level (tests; not meant to race with encodes).
#pragma once

#include <cstdint>

namespace squeeze::compress::qsimd {

enum class Level : uint8_t {
  kScalar = 0,  // plain C++ (what SSE2 runs)
  kAvx2 = 1,    // 256-bit kernels
  kAvx512 = 2,  // 512-bit kernels (needs AVX-512 F, VL, DQ and BW)
};

// The widest level this CPU supports.
Level cpu_level();
// The level the encoder uses now.
Level level();
// Sets the level (clamped to cpu_level()); returns the previous one.
Level set_level(Level want);
// "scalar", "avx2" or "avx512".
const char* level_name(Level l);

}  // namespace squeeze::compress::qsimd

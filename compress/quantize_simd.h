// Which instruction set the quantize codec's hot loops use (the encoder's range scan, code
// kernel, row hash and block packing; the decoder's unpacking and reconstruction). Every
// level produces the same bytes;
// the lower ones exist for CPUs without the wider units, and so that tests can check that
// every level agrees with the scalar path.
//
// The level is the widest the CPU runs, unless the caller lowers it with set_level: the
// plugin does so at init from SQUEEZE_QUANTIZE_SIMD (plugin/params), the codec benchmark and
// tests directly. Not meant to race with encodes.
#pragma once

#include <cstdint>
#include <string_view>

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
// The level level_name() calls `name`; false for anything else.
bool parse_level(std::string_view name, Level* out);

}  // namespace squeeze::compress::qsimd

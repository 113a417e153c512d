// AVX-512 block packing (the format of bitpack.h) for the quantize encoder, which spent
// longer packing its codes than computing them. Every function writes exactly the bytes of
// its scalar counterpart; call them only when qsimd::cpu_level() is kAvx512 (they use
// AVX-512 F, VL, DQ and BW instructions unconditionally).
#pragma once

#include <cstddef>
#include <cstdint>

namespace squeeze::compress::bitpack {

// pack64: in[0..63] must each fit in `width` bits; writes exactly 8*width bytes to out.
void pack64_avx512(const uint32_t* in, unsigned width, uint8_t* out);

// zigzag_pack64 (bitpack.h).
unsigned zigzag_pack64_avx512(const int32_t* codes, uint8_t* out, std::size_t room, bool* fits);

}  // namespace squeeze::compress::bitpack

// AVX-512 versions of the quantize decoder's hot loops (quantize_decode.cc holds the
// portable ones): unpacking a block's codes, reconstructing float32 values from codes, and
// both at once straight from the payload. Same results bit for bit; call them only when
// qsimd::level() is kAvx512 (they use AVX-512 F, VL, DQ and BW instructions
// unconditionally).
#pragma once

#include <cstddef>
#include <cstdint>

namespace squeeze::compress::qavx512 {

// The codes of `blocks` packed blocks (compress/bitpack.h) of widths widths[0 .. blocks)
// (each 0..32), packed back to back at in, zigzag-decoded: what bitpack::unpack64 and
// (zz >> 1) ^ -(zz & 1) give, 64 per block. Reads exactly the blocks' bytes; returns the
// end of the last.
const uint8_t* unpack_codes(const uint8_t* in, const uint8_t* widths, std::size_t blocks,
                            int32_t* codes);

// float(qmath::reconstruct(offset, step, codes[i])) for i < n, stored as float32 at out
// (any alignment; exactly 4n bytes written).
void reconstruct(const int32_t* codes, std::size_t n, double offset, float step, uint8_t* out);

// unpack_codes and reconstruct fused: the first n codes of the blocks packed back to back
// at payload, of widths widths[0 .. ceil(n/64)), reconstructed as float32 at out. Reads only
// those blocks' bytes and writes exactly 4n bytes; returns the end of the last block.
const uint8_t* decode_f32(const uint8_t* payload, const uint8_t* widths, std::size_t n,
                          double offset, float step, uint8_t* out);

}  // namespace squeeze::compress::qavx512

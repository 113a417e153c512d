// AVX-512 versions of the quantize encoder's hot loops (quantize_kernels.h holds the
// 4-lane originals). Same results bit for bit; call them only when qsimd::level() is
// kAvx512 (they use AVX-512 F, VL, DQ and BW instructions unconditionally).
#pragma once

#include <cstddef>
#include <cstdint>

#include "compress/codec.h"
#include "compress/quantize_math.h"

namespace squeeze::compress::qavx512 {

// qkern::quantize_run, eight elements per step: codes for v[0..n), 0 for elements that miss
// the bound; true when every element meets it.
template <Dtype D>
bool quantize_run(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes);

// Finite min/max of the n float32 values at src (any alignment) folded into *mn/*mx
// (untouched when nothing is finite). Which zero it reports when both -0 and +0 are extreme
// may differ from a sequential scan; nothing the encoder derives from the range depends on
// it (quantize_table.h, range_keys).
void range_update(const uint8_t* src, std::size_t n, float* mn, float* mx);

}  // namespace squeeze::compress::qavx512

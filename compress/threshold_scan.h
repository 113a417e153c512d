// The threshold codec's hot loop: list the positions whose magnitude is >= tau. Magnitude
// bits of IEEE floats order like the magnitudes (and NaN sorts above Inf), so the test is an
// integer compare on the masked bits, exact and conversion-free. SSE2 on x86-64, portable
// scalar code elsewhere; both give the same list.
#pragma once

#include <cstdint>
#include <vector>

#include "compress/codec.h"

namespace squeeze::compress {

// Appends each i < n with (bits(x_i) & 0x7fffffff) >= tau_bits (tau_bits >= 1) to out.
// Returns false as soon as more than max_kept are listed.
bool threshold_scan_f32(const uint8_t* base, uint64_t n, uint32_t tau_bits, uint64_t max_kept,
                        std::vector<uint64_t>* out);
// The same for bfloat16 / float16 elements with (bits & 0x7fff) >= tau_bits.
bool threshold_scan_u16(const uint8_t* base, uint64_t n, uint16_t tau_bits, uint64_t max_kept,
                        std::vector<uint64_t>* out);
// Error feedback: y_i = float(x_i) + r_i (r may be null: zeros) is stored to ybuf[i] and
// thresholded on its float32 magnitude bits.
bool threshold_scan_feedback(Dtype dt, const uint8_t* base, const float* r, uint64_t n,
                             uint32_t tau_bits, uint64_t max_kept, float* ybuf,
                             std::vector<uint64_t>* out);

}  // namespace squeeze::compress

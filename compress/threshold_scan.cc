#include "compress/threshold_scan.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "compress/threshold_values.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace squeeze::compress {
namespace {

// Appends base_index + each set bit of mask.
inline void push_bits(uint64_t base_index, uint32_t mask, std::vector<uint64_t>* out) {
  while (mask != 0) {
    out->push_back(base_index + static_cast<uint64_t>(std::countr_zero(mask)));
    mask &= mask - 1;
  }
}

#if defined(__SSE2__)
// Bit k set where element k of the 16 float32 bit patterns w0..w3 has magnitude bits above t
// (mask clears the sign): the lanes threshold_scan_f32 and threshold_scan_feedback keep.
inline uint32_t lanes_above(__m128i w0, __m128i w1, __m128i w2, __m128i w3, __m128i mask,
                            __m128i t) {
  const __m128i c0 = _mm_cmpgt_epi32(_mm_and_si128(w0, mask), t);
  const __m128i c1 = _mm_cmpgt_epi32(_mm_and_si128(w1, mask), t);
  const __m128i c2 = _mm_cmpgt_epi32(_mm_and_si128(w2, mask), t);
  const __m128i c3 = _mm_cmpgt_epi32(_mm_and_si128(w3, mask), t);
  const __m128i any = _mm_or_si128(_mm_or_si128(c0, c1), _mm_or_si128(c2, c3));
  if (_mm_movemask_epi8(any) == 0) return 0;
  return static_cast<uint32_t>(
      _mm_movemask_ps(_mm_castsi128_ps(c0)) | (_mm_movemask_ps(_mm_castsi128_ps(c1)) << 4) |
      (_mm_movemask_ps(_mm_castsi128_ps(c2)) << 8) | (_mm_movemask_ps(_mm_castsi128_ps(c3)) << 12));
}
#endif

// Scalar tail / fallback for [i, n).
template <typename U>
void scan_scalar(const uint8_t* base, uint64_t i, uint64_t n, U tau_bits,
                 std::vector<uint64_t>* out) {
  constexpr U kMask = static_cast<U>(static_cast<U>(~U{0}) >> 1);
  for (; i < n; ++i) {
    U v;
    std::memcpy(&v, base + i * sizeof(U), sizeof v);
    if (static_cast<U>(v & kMask) >= tau_bits) out->push_back(i);
  }
}

}  // namespace

bool threshold_scan_f32(const uint8_t* base, uint64_t n, uint32_t tau_bits, uint64_t max_kept,
                        std::vector<uint64_t>* out) {
  uint64_t i = 0;
#if defined(__SSE2__)
  const __m128i mask = _mm_set1_epi32(0x7fffffff);
  const __m128i t = _mm_set1_epi32(static_cast<int32_t>(tau_bits - 1));  // a > t  <=>  a >= tau
  for (; i + 16 <= n; i += 16) {
    const auto* p = reinterpret_cast<const __m128i*>(base + 4 * i);
    const uint32_t bits = lanes_above(_mm_loadu_si128(p + 0), _mm_loadu_si128(p + 1),
                                      _mm_loadu_si128(p + 2), _mm_loadu_si128(p + 3), mask, t);
    if (bits == 0) continue;
    push_bits(i, bits, out);
    if (out->size() > max_kept) return false;
  }
#endif
  scan_scalar<uint32_t>(base, i, n, tau_bits, out);
  return out->size() <= max_kept;
}

bool threshold_scan_u16(const uint8_t* base, uint64_t n, uint16_t tau_bits, uint64_t max_kept,
                        std::vector<uint64_t>* out) {
  uint64_t i = 0;
#if defined(__SSE2__)
  const __m128i mask = _mm_set1_epi16(0x7fff);
  const __m128i t = _mm_set1_epi16(static_cast<int16_t>(tau_bits - 1));
  for (; i + 32 <= n; i += 32) {
    const auto* p = reinterpret_cast<const __m128i*>(base + 2 * i);
    const __m128i c0 = _mm_cmpgt_epi16(_mm_and_si128(_mm_loadu_si128(p + 0), mask), t);
    const __m128i c1 = _mm_cmpgt_epi16(_mm_and_si128(_mm_loadu_si128(p + 1), mask), t);
    const __m128i c2 = _mm_cmpgt_epi16(_mm_and_si128(_mm_loadu_si128(p + 2), mask), t);
    const __m128i c3 = _mm_cmpgt_epi16(_mm_and_si128(_mm_loadu_si128(p + 3), mask), t);
    const __m128i lo = _mm_packs_epi16(c0, c1);  // one byte per element, order kept
    const __m128i hi = _mm_packs_epi16(c2, c3);
    const int any = _mm_movemask_epi8(_mm_or_si128(lo, hi));
    if (any == 0) continue;
    const auto bits = static_cast<uint32_t>(_mm_movemask_epi8(lo)) |
                      (static_cast<uint32_t>(_mm_movemask_epi8(hi)) << 16);
    push_bits(i, bits, out);
    if (out->size() > max_kept) return false;
  }
#endif
  scan_scalar<uint16_t>(base, i, n, tau_bits, out);
  return out->size() <= max_kept;
}

namespace {

// Error feedback from element i0 on, 64 at a time: any dtype, portable.
bool scan_feedback_from(Dtype dt, const uint8_t* base, const float* r, uint64_t i0, uint64_t n,
                        uint32_t tau_bits, uint64_t max_kept, float* ybuf,
                        std::vector<uint64_t>* out) {
  constexpr uint64_t kChunk = 64;
  for (uint64_t i = i0; i < n; i += kChunk) {
    const uint64_t m = std::min(kChunk, n - i);
    float* y = ybuf + i;
    // Widen and add in separate simple loops so each vectorises.
    if (dt == Dtype::kFloat32) {
      std::memcpy(y, base + 4 * i, 4 * m);
    } else if (dt == Dtype::kBfloat16) {
      uint16_t h[kChunk];
      std::memcpy(h, base + 2 * i, 2 * m);
      for (uint64_t j = 0; j < m; ++j) y[j] = f32_from_bits(static_cast<uint32_t>(h[j]) << 16);
    } else {
      for (uint64_t j = 0; j < m; ++j) y[j] = load_as_float(dt, base, i + j);
    }
    if (r != nullptr) {
      for (uint64_t j = 0; j < m; ++j) y[j] += r[i + j];
    }
    uint32_t u[kChunk];
    std::memcpy(u, y, 4 * m);
    int any = 0;
    for (uint64_t j = 0; j < m; ++j) any |= (u[j] & 0x7fffffffu) >= tau_bits;
    if (any == 0) continue;
    for (uint64_t j = 0; j < m; ++j) {
      if ((u[j] & 0x7fffffffu) >= tau_bits) out->push_back(i + j);
    }
    if (out->size() > max_kept) return false;
  }
  return true;
}

}  // namespace

bool threshold_scan_feedback(Dtype dt, const uint8_t* base, const float* r, uint64_t n,
                             uint32_t tau_bits, uint64_t max_kept, float* ybuf,
                             std::vector<uint64_t>* out) {
  uint64_t i = 0;
#if defined(__SSE2__)
  // float32, 16 elements at a time in one pass: y = x + r (the same IEEE additions as the
  // portable loop, so the same bits), stored, and its magnitude bits compared as in
  // threshold_scan_f32. (The portable loop makes three passes over each chunk and a fourth to
  // list the kept ones; this is the contributor's and the owner's hot loop under error
  // feedback.)
  if (dt == Dtype::kFloat32) {
    const __m128i mask = _mm_set1_epi32(0x7fffffff);
    const __m128i t = _mm_set1_epi32(static_cast<int32_t>(tau_bits - 1));  // a > t <=> a >= tau
    const auto* x = reinterpret_cast<const float*>(base);
    for (; i + 16 <= n; i += 16) {
      __m128 y0 = _mm_loadu_ps(x + i), y1 = _mm_loadu_ps(x + i + 4);
      __m128 y2 = _mm_loadu_ps(x + i + 8), y3 = _mm_loadu_ps(x + i + 12);
      if (r != nullptr) {
        y0 = _mm_add_ps(y0, _mm_loadu_ps(r + i));
        y1 = _mm_add_ps(y1, _mm_loadu_ps(r + i + 4));
        y2 = _mm_add_ps(y2, _mm_loadu_ps(r + i + 8));
        y3 = _mm_add_ps(y3, _mm_loadu_ps(r + i + 12));
      }
      _mm_storeu_ps(ybuf + i, y0);
      _mm_storeu_ps(ybuf + i + 4, y1);
      _mm_storeu_ps(ybuf + i + 8, y2);
      _mm_storeu_ps(ybuf + i + 12, y3);
      const uint32_t bits = lanes_above(_mm_castps_si128(y0), _mm_castps_si128(y1),
                                        _mm_castps_si128(y2), _mm_castps_si128(y3), mask, t);
      if (bits == 0) continue;
      push_bits(i, bits, out);
      if (out->size() > max_kept) return false;
    }
  }
#endif
  return scan_feedback_from(dt, base, r, i, n, tau_bits, max_kept, ybuf, out);
}

}  // namespace squeeze::compress

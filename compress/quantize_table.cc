// Table-driven quantize codes for bf16/fp16 (see quantize_table.h) and the run-time choice
// between the AVX-512, AVX2 and scalar code kernels (quantize_simd.h).
#include "compress/quantize_table.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "compress/half.h"
#include "compress/quantize_avx512.h"
#include "compress/quantize_kernels.h"
#include "compress/quantize_simd.h"

namespace squeeze::compress::qtable {
namespace {

#if defined(__x86_64__)
#define SQUEEZE_AVX2 __attribute__((target("avx2")))
#else
#define SQUEEZE_AVX2
#endif

bool use_avx2() { return qsimd::level() >= qsimd::Level::kAvx2; }

template <Dtype D>
SQUEEZE_AVX2 bool quantize_avx2(const float* v, std::size_t n, const qmath::Params& p,
                                int32_t* codes) {
  return qkern::quantize_run<D>(v, n, p, codes);
}

// Branch-free, so it vectorizes (with gathers where the target has them).
inline __attribute__((always_inline)) bool lookup_run(const uint8_t* src, std::size_t n,
                                                      const int32_t* t, uint32_t lo, uint32_t m,
                                                      int32_t* codes) {
  uint32_t esc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t h =
        static_cast<uint32_t>(src[2 * i]) | (static_cast<uint32_t>(src[2 * i + 1]) << 8);
    uint32_t k = key(h) - lo;
    k = k < m ? k : m;
    const int32_t c = t[k];
    const bool e = c == kEscape;
    esc |= static_cast<uint32_t>(e);
    codes[i] = e ? 0 : c;
  }
  return esc == 0;
}

#if defined(__x86_64__)
// lookup_run eight at a time with AVX2 gathers (compilers do not vectorize it themselves).
SQUEEZE_AVX2 bool lookup_avx2(const uint8_t* src, std::size_t n, const int32_t* t, uint32_t lo,
                              uint32_t m, int32_t* codes) {
  const __m256i vlo = _mm256_set1_epi32(static_cast<int32_t>(lo));
  const __m256i vm = _mm256_set1_epi32(static_cast<int32_t>(m));
  const __m256i k8000 = _mm256_set1_epi32(0x8000), k7fff = _mm256_set1_epi32(0x7fff);
  const __m256i esc = _mm256_set1_epi32(kEscape);
  __m256i any = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i h =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i)));
    const __m256i neg = _mm256_srai_epi32(_mm256_slli_epi32(h, 16), 31);
    const __m256i k = _mm256_xor_si256(h, _mm256_or_si256(k8000, _mm256_and_si256(k7fff, neg)));
    const __m256i idx = _mm256_min_epu32(_mm256_sub_epi32(k, vlo), vm);
    const __m256i c = _mm256_i32gather_epi32(t, idx, 4);
    const __m256i e = _mm256_cmpeq_epi32(c, esc);
    any = _mm256_or_si256(any, e);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), _mm256_andnot_si256(e, c));
  }
  const bool tail = lookup_run(src + 2 * i, n - i, t, lo, m, codes + i);
  return tail && _mm256_testz_si256(any, any) != 0;
}
#else
bool lookup_avx2(const uint8_t* src, std::size_t n, const int32_t* t, uint32_t lo, uint32_t m,
                 int32_t* codes) {
  return lookup_run(src, n, t, lo, m, codes);
}
#endif

bool lookup_plain(const uint8_t* src, std::size_t n, const int32_t* t, uint32_t lo, uint32_t m,
                  int32_t* codes) {
  return lookup_run(src, n, t, lo, m, codes);
}

template <Dtype D>
inline constexpr uint32_t kInfBits = D == Dtype::kBfloat16 ? 0x7f80u : 0x7c00u;

template <Dtype D>
inline __attribute__((always_inline)) void range_run(const uint8_t* src, std::size_t n,
                                                     uint32_t* kmin, uint32_t* kmax) {
  using u16x16 = uint16_t __attribute__((vector_size(32)));
  using i16x16 = int16_t __attribute__((vector_size(32)));
  u16x16 vmin = u16x16{} + static_cast<uint16_t>(*kmin),
         vmax = u16x16{} + static_cast<uint16_t>(*kmax);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    u16x16 h;
    std::memcpy(&h, src + 2 * i, sizeof h);  // little-endian hosts only (x86, arm64)
    const i16x16 finite =
        __builtin_bit_cast(i16x16, h & 0x7fffu) < static_cast<int16_t>(kInfBits<D>);
    const u16x16 neg = __builtin_bit_cast(u16x16, __builtin_bit_cast(i16x16, h) >> 15);
    const u16x16 k = h ^ ((neg & 0x7fffu) | 0x8000u);
    const u16x16 kmn = finite ? k : (u16x16{} + 0xffffu);
    const u16x16 kmx = finite ? k : u16x16{};
    vmin = kmn < vmin ? kmn : vmin;
    vmax = kmx > vmax ? kmx : vmax;
  }
  // Fold the lanes by halves (integer min/max: any order gives the same result).
  using u16x8 = uint16_t __attribute__((vector_size(16)));
  u16x8 mn8 = __builtin_shufflevector(vmin, vmin, 0, 1, 2, 3, 4, 5, 6, 7);
  u16x8 mx8 = __builtin_shufflevector(vmax, vmax, 0, 1, 2, 3, 4, 5, 6, 7);
  const u16x8 mn8h = __builtin_shufflevector(vmin, vmin, 8, 9, 10, 11, 12, 13, 14, 15);
  const u16x8 mx8h = __builtin_shufflevector(vmax, vmax, 8, 9, 10, 11, 12, 13, 14, 15);
  mn8 = mn8h < mn8 ? mn8h : mn8;
  mx8 = mx8h > mx8 ? mx8h : mx8;
  uint32_t lo = *kmin, hi = *kmax;
  for (int j = 0; j < 8; ++j) {
    lo = std::min<uint32_t>(lo, mn8[j]);
    hi = std::max<uint32_t>(hi, mx8[j]);
  }
  for (; i < n; ++i) {
    const uint32_t h =
        static_cast<uint32_t>(src[2 * i]) | (static_cast<uint32_t>(src[2 * i + 1]) << 8);
    if ((h & 0x7fffu) >= kInfBits<D>) continue;
    lo = std::min(lo, key(h));
    hi = std::max(hi, key(h));
  }
  *kmin = lo;
  *kmax = hi;
}

template <Dtype D>
SQUEEZE_AVX2 void range_avx2(const uint8_t* src, std::size_t n, uint32_t* kmin, uint32_t* kmax) {
  range_run<D>(src, n, kmin, kmax);
}

template <Dtype D>
void range_plain(const uint8_t* src, std::size_t n, uint32_t* kmin, uint32_t* kmax) {
  range_run<D>(src, n, kmin, kmax);
}

template <Dtype D>
uint32_t bits16(float f) {
  return D == Dtype::kBfloat16 ? f32_to_bf16(f) : f32_to_f16(f);
}

// Keys of the first and last entry over [mn, mx]; the range takes both zeros when it
// touches zero (the range scan may have met either sign first).
template <Dtype D>
bool key_range(float mn, float mx, uint32_t* lo, uint32_t* hi) {
  if (!(mn <= mx)) return false;
  *lo = mn == 0.0f ? key(0x8000u) : key(bits16<D>(mn));
  *hi = mx == 0.0f ? key(0x0000u) : key(bits16<D>(mx));
  return true;
}

}  // namespace

template <Dtype D>
bool quantize_codes(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes) {
  switch (qsimd::level()) {
    case qsimd::Level::kAvx512: return qavx512::quantize_run<D>(v, n, p, codes);
    case qsimd::Level::kAvx2: return quantize_avx2<D>(v, n, p, codes);
    case qsimd::Level::kScalar: break;
  }
  return qmath::quantize_each<D>(v, n, p, codes);
}

template <Dtype D>
void range_keys(const uint8_t* src, std::size_t n, uint32_t* kmin, uint32_t* kmax) {
  if (use_avx2()) {
    range_avx2<D>(src, n, kmin, kmax);
  } else {
    range_plain<D>(src, n, kmin, kmax);
  }
}

template <Dtype D>
float key_value(uint32_t k) {
  const uint16_t h = pattern(k);
  return D == Dtype::kBfloat16 ? bf16_to_f32(h) : f16_to_f32(h);
}

template <Dtype D>
std::size_t CodeTable::entries(float mn, float mx) {
  uint32_t lo = 0, hi = 0;
  return key_range<D>(mn, mx, &lo, &hi) ? hi - lo + 1 : 0;
}

template <Dtype D>
void CodeTable::build(float mn, float mx, const qmath::Params& p) {
  static_assert(D != Dtype::kFloat32, "tables are for 16-bit dtypes");
  uint32_t hi = 0;
  if (!key_range<D>(mn, mx, &lo_, &hi)) {
    lo_ = 0;
    hi = 0xffffffffu;  // no entries
  }
  n_ = hi + 1 - lo_;
  t_.assign(n_ + std::size_t{1}, kEscape);
  constexpr std::size_t kStep = 1024;
  float xs[kStep];
  for (uint32_t i0 = 0; i0 < n_; i0 += kStep) {
    const std::size_t m = std::min<std::size_t>(kStep, n_ - i0);
    for (std::size_t j = 0; j < m; ++j) {
      const uint16_t h = pattern(lo_ + i0 + static_cast<uint32_t>(j));
      xs[j] = D == Dtype::kBfloat16 ? bf16_to_f32(h) : f16_to_f32(h);
    }
    int32_t* out = t_.data() + i0;
    if (quantize_codes<D>(xs, m, p, out)) continue;
    for (std::size_t j = 0; j < m; ++j) {  // the encoder's escape decision: quantize_one
      bool good;
      qmath::quantize_one<D>(xs[j], p, &good);
      if (!good) out[j] = kEscape;
    }
  }
}

bool CodeTable::lookup(const uint8_t* src, std::size_t n, int32_t* codes) const {
  return use_avx2() ? lookup_avx2(src, n, t_.data(), lo_, n_, codes)
                    : lookup_plain(src, n, t_.data(), lo_, n_, codes);
}

template bool quantize_codes<Dtype::kFloat32>(const float*, std::size_t, const qmath::Params&,
                                              int32_t*);
template bool quantize_codes<Dtype::kBfloat16>(const float*, std::size_t, const qmath::Params&,
                                               int32_t*);
template bool quantize_codes<Dtype::kFloat16>(const float*, std::size_t, const qmath::Params&,
                                              int32_t*);
template void range_keys<Dtype::kBfloat16>(const uint8_t*, std::size_t, uint32_t*, uint32_t*);
template void range_keys<Dtype::kFloat16>(const uint8_t*, std::size_t, uint32_t*, uint32_t*);
template float key_value<Dtype::kBfloat16>(uint32_t);
template float key_value<Dtype::kFloat16>(uint32_t);
template std::size_t CodeTable::entries<Dtype::kBfloat16>(float, float);
template std::size_t CodeTable::entries<Dtype::kFloat16>(float, float);
template void CodeTable::build<Dtype::kBfloat16>(float, float, const qmath::Params&);
template void CodeTable::build<Dtype::kFloat16>(float, float, const qmath::Params&);

}  // namespace squeeze::compress::qtable

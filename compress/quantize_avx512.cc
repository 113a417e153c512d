// AVX-512 quantize kernels (quantize_avx512.h). The code kernel performs, per element, the
// operations of qmath::quantize_one in the same order in double precision: subtract, multiply,
// clamp, round by the magic constant, multiply, add, round to float and to the dtype,
// subtract, compare. No multiply and add fuse: GCC contracts them into an FMA under
// AVX-512 (its C++ default is -ffp-contract=fast), which an empty asm between them prevents;
// the result would be the same anyway, as r*step is exact (quantize_math.h).
#include "compress/quantize_avx512.h"

#include <cfloat>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "compress/quantize_kernels.h"

namespace squeeze::compress::qavx512 {

#if defined(__x86_64__)
#define SQUEEZE_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw")))

namespace {

// The last n < 8 elements, by quantize_one compiled for the baseline target (no FMA there).
template <Dtype D>
__attribute__((noinline)) bool tail(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes) {
  return qmath::quantize_each<D>(v, n, p, codes);
}

// GCC 12 warns that the undefined pass-through operand inside _mm512_cvtps_pd,
// _mm512_cvtpd_ps and the _mm512_reduce_* shuffles is used uninitialized (it is not: the
// mask is all ones, or the lanes are discarded).
#pragma GCC diagnostic push
#if !defined(__clang__)  // clang has no -Wmaybe-uninitialized (and does not warn here)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"

template <Dtype D>
SQUEEZE_AVX512 bool quantize_512(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes) {
  const __m512d off = _mm512_set1_pd(p.offset), inv = _mm512_set1_pd(p.inv_step);
  const __m512d step = _mm512_set1_pd(static_cast<double>(p.step)), eb = _mm512_set1_pd(p.bound);
  const __m512d kmax = _mm512_set1_pd(qmath::kMaxCode), kmin = _mm512_set1_pd(-qmath::kMaxCode);
  const __m512d magic = _mm512_set1_pd(qmath::kRoundMagic);
  __mmask8 all = 0xff;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(v + i));
    __m512d q = _mm512_mul_pd(_mm512_sub_pd(x, off), inv);
    q = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(q, kmin, _CMP_LT_OQ), q, kmin);  // q < -max ? -max : q
    q = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(q, kmax, _CMP_GT_OQ), q, kmax);  // q > max ? max : q
    const __m512d r = _mm512_sub_pd(_mm512_add_pd(q, magic), magic);
    __m512d prod = _mm512_mul_pd(r, step);
    asm("" : "+v"(prod));  // keeps the multiply and the add apart (GCC would fuse them)
    const __m512d rec = _mm512_add_pd(off, prod);
    __m256 back = _mm512_cvtpd_ps(rec);
    qkern::round_in_place<D>(&back);
    const __m512d diff = _mm512_sub_pd(_mm512_cvtps_pd(back), x);
    const __mmask8 good = _mm512_cmp_pd_mask(_mm512_abs_pd(diff), eb, _CMP_LE_OQ);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), _mm512_maskz_cvttpd_epi32(good, r));
    all = static_cast<__mmask8>(all & good);
  }
  // GCC 12 leaves out the vzeroupper before the call; without it the SSE code that runs
  // next (the block packer) slows down by more than this kernel gains.
  _mm256_zeroupper();
  return tail<D>(v + i, n - i, p, codes + i) && all == 0xff;
}

SQUEEZE_AVX512 void range_512(const uint8_t* src, std::size_t n, float* mn, float* mx) {
  __m512 vmn = _mm512_set1_ps(*mn), vmx = _mm512_set1_ps(*mx);
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), max_finite = _mm512_set1_epi32(0x7f7fffff);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_loadu_si512(src + 4 * i);
    const __m512 x = _mm512_castsi512_ps(bits);
    const __mmask16 finite = _mm512_cmple_epu32_mask(_mm512_and_si512(bits, abs_mask), max_finite);
    vmn = _mm512_mask_min_ps(vmn, finite, x, vmn);  // finite lanes: x < vmn ? x : vmn
    vmx = _mm512_mask_max_ps(vmx, finite, x, vmx);  // finite lanes: x > vmx ? x : vmx
  }
  // The lanes hold finite values or the starting ones, no NaN: min/max fold in any order.
  float lo = _mm512_reduce_min_ps(vmn), hi = _mm512_reduce_max_ps(vmx);
  for (; i < n; ++i) {
    float x;
    std::memcpy(&x, src + 4 * i, 4);
    const bool finite = std::fabs(x) <= FLT_MAX;
    lo = finite && x < lo ? x : lo;
    hi = finite && x > hi ? x : hi;
  }
  *mn = lo;
  *mx = hi;
}

#pragma GCC diagnostic pop

}  // namespace

// The target attribute goes on separate functions: in C++ a declaration with a different
// target than the header's would be another version of the function, not this one.
template <Dtype D>
bool quantize_run(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes) {
  return quantize_512<D>(v, n, p, codes);
}

void range_update(const uint8_t* src, std::size_t n, float* mn, float* mx) { range_512(src, n, mn, mx); }

#else  // not x86-64: never called (qsimd::level() is kScalar), defined for the linker

template <Dtype D>
bool quantize_run(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes) {
  return qkern::quantize_run<D>(v, n, p, codes);
}

void range_update(const uint8_t* src, std::size_t n, float* mn, float* mx) {
  for (std::size_t i = 0; i < n; ++i) {
    float x;
    std::memcpy(&x, src + 4 * i, 4);
    qkern::range_update(&x, 1, mn, mx);
  }
}

#endif

template bool quantize_run<Dtype::kFloat32>(const float*, std::size_t, const qmath::Params&, int32_t*);
template bool quantize_run<Dtype::kBfloat16>(const float*, std::size_t, const qmath::Params&, int32_t*);
template bool quantize_run<Dtype::kFloat16>(const float*, std::size_t, const qmath::Params&, int32_t*);

}  // namespace squeeze::compress::qavx512

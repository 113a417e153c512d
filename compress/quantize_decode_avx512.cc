// AVX-512 quantize decode kernels (quantize_decode_avx512.h), 16 codes per step.
//
// Unpacking. In a block of width w, the 16 values of group g fill bytes [2wg, 2wg + 2w);
// a byte-masked load reads exactly those (nothing past the block, so a payload may end right
// after it). Value i of the group starts at bit iw, in 32-bit word j = iw >> 5 at bit
// s = iw & 31, and ends in word j or j + 1 (s + w <= 63): lane i gathers both words with a
// permute and computes ((word[j] >> s) | (word[j+1] << (32 - s))) & (2^w - 1) (when s = 0
// the left shift is by 32, which gives 0), with indices and shifts from a per-width table.
// Then zigzag: (zz >> 1) ^ -(zz & 1), as the portable decoder does.
//
// Reconstruction performs qmath::reconstruct's operations per lane, in double precision:
// convert the code (exact), multiply by step, add offset, each rounded once, then round
// to float with the current rounding mode, as static_cast<float> does. The multiply and the
// add never fuse: GCC contracts them into an FMA under AVX-512 (its C++ default is
// -ffp-contract=fast, and its intrinsics are plain vector operators), which an empty asm
// between them prevents (an FMA would differ only where code*step is inexact, |code| > 2^29,
// which valid frames never hold, but these kernels take any code).
//
// Single-precision shortcut, taken where offset is +-0, step > 0 and |code| <= 2^24 (in the
// fused kernel: the block's width is at most 25): float(code) is exact, code*step is exact
// in double (24 + 25 significant bits), adding +-0 to it changes nothing (and gives +0 for
// code 0, as 0.0f * step does), so the double path's result is the exact product rounded
// once to float, which is what a float multiply computes, overflow to Inf and subnormal
// results included. This is the common case: the encoder picks offset 0 whenever the value
// range holds 0 (qmath::choose).
#include "compress/quantize_decode_avx512.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#include "compress/avx512_target.h"
#endif

#include "compress/bitpack.h"
#include "compress/quantize_math.h"

namespace squeeze::compress::qavx512 {

#if defined(__x86_64__)
namespace {

SQUEEZE_INTRINSIC_WARNINGS_OFF  // compress/avx512_target.h

    // Per width w, for lane i of a group: the words holding value i (j = iw >> 5 and j + 1,
    // wrapped to 0 when 16: that happens only with s = 0, whose left shift by 32 gives 0), the
    // shifts that align it (s = iw & 31 and 32 - s), and the value mask 2^w - 1.
    struct alignas(64) Lanes {
  uint32_t lo[16], hi[16], sr[16], sl[16], mask[16];
};

constexpr std::array<Lanes, 33> lanes_table() {
  std::array<Lanes, 33> t{};
  for (unsigned w = 0; w <= 32; ++w) {
    for (unsigned i = 0; i < 16; ++i) {
      t[w].lo[i] = (i * w) >> 5;
      t[w].hi[i] = (((i * w) >> 5) + 1) & 15;
      t[w].sr[i] = (i * w) & 31;
      t[w].sl[i] = 32 - t[w].sr[i];
      t[w].mask[i] = static_cast<uint32_t>((uint64_t{1} << w) - 1);
    }
  }
  return t;
}

constexpr std::array<Lanes, 33> kLanes = lanes_table();

// kLanes[w] in registers, and the byte mask of a group's 2w bytes.
struct Unpacker {
  __m512i lo, hi, sr, sl, mask;
  __mmask64 bytes;
};

SQUEEZE_AVX512 inline Unpacker unpacker(unsigned w) {
  const Lanes& l = kLanes[w];
  return {_mm512_load_si512(l.lo),   _mm512_load_si512(l.hi),
          _mm512_load_si512(l.sr),   _mm512_load_si512(l.sl),
          _mm512_load_si512(l.mask), w >= 32 ? ~__mmask64{0} : (__mmask64{1} << (2 * w)) - 1};
}

// The 16 zigzag-decoded codes of the group whose bytes start at in.
SQUEEZE_AVX512 inline __m512i unpack16(const Unpacker& u, const uint8_t* in) {
  const __m512i words = _mm512_maskz_loadu_epi8(u.bytes, in);
  const __m512i a = _mm512_srlv_epi32(_mm512_permutexvar_epi32(u.lo, words), u.sr);
  const __m512i b = _mm512_sllv_epi32(_mm512_permutexvar_epi32(u.hi, words), u.sl);
  const __m512i zz = _mm512_and_si512(_mm512_or_si512(a, b), u.mask);
  const __m512i half = _mm512_srli_epi32(zz, 1);
  // Where zz is odd, -(zz & 1) is all ones: flip every bit of zz >> 1.
  return _mm512_mask_xor_epi32(half, _mm512_test_epi32_mask(zz, _mm512_set1_epi32(1)), half,
                               _mm512_set1_epi32(-1));
}

// The reconstruction's constants.
struct Recon {
  __m512d offset, step;  // the double path's
  __m512 step_f;         // the shortcut's
};

SQUEEZE_AVX512 inline Recon recon(double offset, float step) {
  return {_mm512_set1_pd(offset), _mm512_set1_pd(static_cast<double>(step)), _mm512_set1_ps(step)};
}

// Reconstructs 16 codes (by the shortcut where kSingle: only where the header comment says it
// is exact) and stores the first n <= 16 floats at out.
template <bool kSingle>
SQUEEZE_AVX512 inline void emit16(const Recon& r, __m512i code, std::size_t n, uint8_t* out) {
  if constexpr (kSingle) {
    const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(code), r.step_f);
    if (n >= 16) {
      _mm512_storeu_ps(out, f);
    } else {
      _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << n) - 1), f);
    }
  } else {
    __m512d p0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(code)), r.step);
    __m512d p1 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(code, 1)), r.step);
    asm("" : "+v"(p0), "+v"(p1));  // keeps the multiplies and the adds apart (GCC would fuse them)
    const __m256 f0 = _mm512_cvtpd_ps(_mm512_add_pd(r.offset, p0));
    const __m256 f1 = _mm512_cvtpd_ps(_mm512_add_pd(r.offset, p1));
    if (n >= 16) {
      _mm256_storeu_ps(reinterpret_cast<float*>(out), f0);
      _mm256_storeu_ps(reinterpret_cast<float*>(out + 32), f1);
    } else {
      const auto m = static_cast<unsigned>((1u << n) - 1);
      _mm256_mask_storeu_ps(out, static_cast<__mmask8>(m), f0);
      _mm256_mask_storeu_ps(out + 32, static_cast<__mmask8>(m >> 8), f1);
    }
  }
}

SQUEEZE_AVX512 const uint8_t* unpack_512(const uint8_t* in, const uint8_t* widths,
                                         std::size_t blocks, int32_t* codes) {
  for (std::size_t b = 0; b < blocks; ++b, codes += 64) {
    const unsigned w = widths[b];
    const Unpacker u = unpacker(w);
    for (unsigned g = 0; g < 4; ++g)
      _mm512_storeu_si512(codes + 16 * g, unpack16(u, in + 2 * w * g));
    in += 8 * w;
  }
  return in;
}

SQUEEZE_AVX512 void reconstruct_512(const int32_t* codes, std::size_t n, double offset, float step,
                                    uint8_t* out) {
  const Recon r = recon(offset, step);
  const bool single = offset == 0.0 && step > 0.0f;
  const __m512i small = _mm512_set1_epi32(1 << 24);
  for (std::size_t i = 0; i < n; i += 16) {
    const std::size_t left = n - i;
    const __mmask16 lanes =
        left >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << left) - 1);
    const __m512i c = _mm512_maskz_loadu_epi32(lanes, codes + i);
    if (single && _mm512_cmple_epu32_mask(_mm512_abs_epi32(c), small) == 0xffff) {
      emit16<true>(r, c, left, out + 4 * i);
    } else {
      emit16<false>(r, c, left, out + 4 * i);
    }
  }
}

// One block's first n <= 64 values.
template <bool kSingle>
SQUEEZE_AVX512 inline void block_f32(const Recon& r, const uint8_t* in, unsigned w, std::size_t n,
                                     uint8_t* out) {
  const Unpacker u = unpacker(w);
  for (unsigned g = 0; g < 4 && 16 * g < n; ++g) {
    emit16<kSingle>(r, unpack16(u, in + 2 * w * g), n - 16 * g, out + 64 * g);
  }
}

SQUEEZE_AVX512 const uint8_t* decode_f32_512(const uint8_t* in, const uint8_t* widths,
                                             std::size_t n, double offset, float step,
                                             uint8_t* out) {
  const Recon r = recon(offset, step);
  const bool single = offset == 0.0 && step > 0.0f;
  for (std::size_t i = 0; i < n; i += 64) {
    const unsigned w = *widths++;
    const std::size_t len = n - i < 64 ? n - i : 64;
    if (single && w <= 25) {  // |code| <= 2^24
      block_f32<true>(r, in, w, len, out + 4 * i);
    } else {
      block_f32<false>(r, in, w, len, out + 4 * i);
    }
    in += 8 * w;
  }
  return in;
}

SQUEEZE_INTRINSIC_WARNINGS_ON

}  // namespace

// The target attribute goes on separate functions: in C++ a declaration with a different
// target than the header's would be another version of the function, not this one.
const uint8_t* unpack_codes(const uint8_t* in, const uint8_t* widths, std::size_t blocks,
                            int32_t* codes) {
  return unpack_512(in, widths, blocks, codes);
}

void reconstruct(const int32_t* codes, std::size_t n, double offset, float step, uint8_t* out) {
  reconstruct_512(codes, n, offset, step, out);
}

const uint8_t* decode_f32(const uint8_t* payload, const uint8_t* widths, std::size_t n,
                          double offset, float step, uint8_t* out) {
  return decode_f32_512(payload, widths, n, offset, step, out);
}

#else  // not x86-64: never called (qsimd::level() is kScalar), defined for the linker

const uint8_t* unpack_codes(const uint8_t* in, const uint8_t* widths, std::size_t blocks,
                            int32_t* codes) {
  for (std::size_t b = 0; b < blocks; ++b, codes += 64) {
    bitpack::unpack64_unzigzag(in, widths[b], codes);
    in += 8u * widths[b];
  }
  return in;
}

void reconstruct(const int32_t* codes, std::size_t n, double offset, float step, uint8_t* out) {
  for (std::size_t i = 0; i < n; ++i) {
    const auto f =
        static_cast<float>(qmath::reconstruct(offset, static_cast<double>(step), codes[i]));
    std::memcpy(out + 4 * i, &f, 4);
  }
}

const uint8_t* decode_f32(const uint8_t* payload, const uint8_t* widths, std::size_t n,
                          double offset, float step, uint8_t* out) {
  int32_t codes[64];
  for (std::size_t i = 0; i < n; i += 64) {
    payload = unpack_codes(payload, widths++, 1, codes);
    reconstruct(codes, n - i < 64 ? n - i : 64, offset, step, out + 4 * i);
  }
  return payload;
}

#endif

}  // namespace squeeze::compress::qavx512

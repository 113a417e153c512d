// AVX-512 block packing (bitpack_avx512.h). Why the bytes are pack64's: in the block's bit
// stream value i sits at bits [i*w, (i+1)*w), so any 2^m consecutive values aligned to 2^m
// fill exactly their own 2^m * w bits; with eight or more that is whole bytes. The kernel
// merges neighbours in registers until each 128-bit lane holds such a run at its low end,
// then stores every lane's bytes where its run begins:
//  w <= 8:  the values narrowed to bytes (exact: each is below 2^w); merging the upper half
//           of every 16-, 32-, 64- and 128-bit field, shifted up by the width of the lower
//           half's run, onto the lower half leaves sixteen values, 2w bytes, per lane.
//  w <= 16: the same from 16 bits up, eight values, w bytes, per lane.
//  w > 16:  pack64 (quantize codes rarely need that many bits).
// A merge step ORs the upper half, shifted right by the field's half size and back up by
// the run's width, onto the lower half masked to its run; the run is at most the half size,
// so nothing overlaps or is lost. The 128-bit step does this across the two qwords: the
// upper qword shifted up by the run's width joins the lower one, and what does not fit
// stays in the upper qword, shifted down (shifts by 64 or more give 0, so w = 8 and w = 16
// need no special case). The lane stores are masked to the run's bytes, so nothing outside
// the block's 8*w bytes is written and their order does not matter.
#include "compress/bitpack_avx512.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "compress/avx512_target.h"
#endif

#include "compress/bitpack.h"

namespace squeeze::compress::bitpack {

#if defined(__x86_64__)
namespace {

SQUEEZE_INTRINSIC_WARNINGS_OFF  // compress/avx512_target.h

    SQUEEZE_AVX512 inline __m128i
    count(unsigned bits) {
  return _mm_cvtsi32_si128(static_cast<int>(bits));
}

// (a & b) | c
SQUEEZE_AVX512 inline __m512i and_or(__m512i a, __m512i b, __m512i c) {
  return _mm512_ternarylogic_epi64(a, b, c, 0xEA);
}

// Each 128-bit lane: the run of `bits` bits at the low end of its upper qword joins the run
// at the low end of its lower qword (bits <= 64).
SQUEEZE_AVX512 inline __m512i merge128(__m512i x, unsigned bits) {
  const __m512i up = _mm512_sll_epi64(_mm512_shuffle_epi32(x, _MM_PERM_BADC),
                                      count(bits));  // upper qword to lower
  return _mm512_mask_or_epi64(_mm512_srl_epi64(x, count(64 - bits)), 0x55, x, up);
}

// Lane m's low `bytes` bytes (1..16) to out + m * bytes.
SQUEEZE_AVX512 inline void store_lanes(__m512i x, unsigned bytes, uint8_t* out) {
  const auto keep = static_cast<__mmask16>((1u << bytes) - 1);
  _mm_mask_storeu_epi8(out, keep, _mm512_castsi512_si128(x));
  _mm_mask_storeu_epi8(out + bytes, keep, _mm512_extracti32x4_epi32(x, 1));
  _mm_mask_storeu_epi8(out + 2 * bytes, keep, _mm512_extracti32x4_epi32(x, 2));
  _mm_mask_storeu_epi8(out + 3 * bytes, keep, _mm512_extracti32x4_epi32(x, 3));
}

// Writes the 64 values z[j] lane i = value 16j + i, each below 2^w, as pack64 would.
SQUEEZE_AVX512 inline void pack_regs(const __m512i (&z)[4], unsigned w, uint8_t* out) {
  if (w == 0) return;
  if (w <= 8) {
    __m512i x = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(z[0]));  // value i in byte i
    x = _mm512_inserti32x4(x, _mm512_cvtepi32_epi8(z[1]), 1);
    x = _mm512_inserti32x4(x, _mm512_cvtepi32_epi8(z[2]), 2);
    x = _mm512_inserti32x4(x, _mm512_cvtepi32_epi8(z[3]), 3);
    x = and_or(x, _mm512_set1_epi16(0xff), _mm512_sll_epi16(_mm512_srli_epi16(x, 8), count(w)));
    x = and_or(x, _mm512_set1_epi32(0xffff),
               _mm512_sll_epi32(_mm512_srli_epi32(x, 16), count(2 * w)));
    x = and_or(x, _mm512_set1_epi64(0xffffffff),
               _mm512_sll_epi64(_mm512_srli_epi64(x, 32), count(4 * w)));
    store_lanes(merge128(x, 8 * w), 2 * w, out);
    return;
  }
  if (w <= 16) {
    for (unsigned h = 0; h < 2; ++h) {  // values 32h.. in 16 bits each
      __m512i x = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(z[2 * h])),
                                     _mm512_cvtepi32_epi16(z[2 * h + 1]), 1);
      x = and_or(x, _mm512_set1_epi32(0xffff),
                 _mm512_sll_epi32(_mm512_srli_epi32(x, 16), count(w)));
      x = and_or(x, _mm512_set1_epi64(0xffffffff),
                 _mm512_sll_epi64(_mm512_srli_epi64(x, 32), count(2 * w)));
      store_lanes(merge128(x, 4 * w), w, out + 4 * w * h);
    }
    return;
  }
  alignas(64) uint32_t in[kBlock];
  for (unsigned j = 0; j < 4; ++j) _mm512_store_si512(in + 16 * j, z[j]);
  _mm256_zeroupper();  // pack64 is SSE code
  pack64(in, w, out);
}

SQUEEZE_AVX512 void pack_512(const uint32_t* in, unsigned w, uint8_t* out) {
  const __m512i z[4] = {_mm512_loadu_si512(in), _mm512_loadu_si512(in + 16),
                        _mm512_loadu_si512(in + 32), _mm512_loadu_si512(in + 48)};
  pack_regs(z, w, out);
}

SQUEEZE_AVX512 unsigned zigzag_pack_512(const int32_t* codes, uint8_t* out, std::size_t room,
                                        bool* fits) {
  __m512i z[4];
  __m512i any = _mm512_setzero_si512();
  for (unsigned j = 0; j < 4; ++j) {
    const __m512i c = _mm512_loadu_si512(codes + 16 * j);
    z[j] = _mm512_xor_si512(_mm512_slli_epi32(c, 1), _mm512_srai_epi32(c, 31));
    any = _mm512_or_si512(any, z[j]);
  }
  const unsigned w = bit_width(static_cast<uint32_t>(_mm512_reduce_or_epi32(any)));
  *fits = 8u * w <= room;
  if (*fits) pack_regs(z, w, out);
  return w;
}

SQUEEZE_INTRINSIC_WARNINGS_ON

}  // namespace

// The target attribute goes on separate functions (as in quantize_avx512.cc).
void pack64_avx512(const uint32_t* in, unsigned width, uint8_t* out) { pack_512(in, width, out); }

unsigned zigzag_pack64_avx512(const int32_t* codes, uint8_t* out, std::size_t room, bool* fits) {
  return zigzag_pack_512(codes, out, room, fits);
}

#else  // not x86-64: never called (qsimd::cpu_level() is kScalar), defined for the linker

void pack64_avx512(const uint32_t* in, unsigned width, uint8_t* out) { pack64(in, width, out); }

unsigned zigzag_pack64_avx512(const int32_t* codes, uint8_t* out, std::size_t room, bool* fits) {
  return zigzag_pack64(codes, out, room, fits);
}

#endif

}  // namespace squeeze::compress::bitpack

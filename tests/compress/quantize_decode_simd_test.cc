// The AVX-512 quantize decoder (compress/quantize_decode_avx512.h) gives the portable
// decoder's bytes: its block unpacker gives bitpack::unpack64's zigzag-decoded codes for every
// width 0..32, its reconstruction gives float(qmath::reconstruct) for any code, offset and
// step (including cases where a fused multiply-add would round differently), and whole
// bodies, written by hand so that blocks of every legal width 0..30 and codes up to
// +-kQuantizeMaxCode occur, decode to the same bytes at the AVX-512 level as at the scalar
// level, for every dtype, bound mode, with and without row dedupe, with escapes, lengths
// that are no multiple of 16 or 64, and payloads that end exactly where their heap buffer
// does (so that AddressSanitizer sees any read past it). Frames from the encoder, with data
// that sweeps the block widths, decode the same too. Skipped without AVX-512.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "compress/bitpack.h"
#include "compress/codec.h"
#include "compress/half.h"
#include "compress/quantize.h"
#include "compress/quantize_decode_avx512.h"
#include "compress/quantize_math.h"
#include "compress/quantize_simd.h"
#include "tests/compress/at_level.h"

namespace squeeze::compress {
namespace {

using qsimd::Level;

#define SKIP_WITHOUT_AVX512() \
  if (qsimd::cpu_level() < Level::kAvx512) GTEST_SKIP() << "this CPU lacks AVX-512 F/VL/DQ/BW"

// A heap copy of exactly bytes.size() bytes: a read past its end is a heap overflow.
std::unique_ptr<uint8_t[]> exact_copy(const std::vector<uint8_t>& bytes) {
  auto p = std::make_unique<uint8_t[]>(bytes.size());
  if (!bytes.empty()) std::memcpy(p.get(), bytes.data(), bytes.size());
  return p;
}

int32_t unzigzag(uint32_t zz) { return static_cast<int32_t>((zz >> 1) ^ (0u - (zz & 1u))); }
uint32_t zigzag(int32_t c) {
  return (static_cast<uint32_t>(c) << 1) ^ static_cast<uint32_t>(c >> 31);
}

uint32_t width_mask(unsigned w) { return static_cast<uint32_t>((uint64_t{1} << w) - 1); }

// 64 values of width w: random, with the extremes (all ones, the top bit alone, just below
// it, 0) at varying places.
std::vector<uint32_t> block_values(unsigned w, std::mt19937_64& rng) {
  std::vector<uint32_t> v(kQuantizeBlock);
  const uint32_t m = width_mask(w);
  for (auto& x : v) x = static_cast<uint32_t>(rng()) & m;
  if (w > 0) {
    const uint32_t top = 1u << (w - 1);
    const uint32_t special[] = {m, top, top - 1, 0, m - 1};
    for (unsigned k = 0; k < 12; ++k) v[rng() % kQuantizeBlock] = special[k % 5];
    v[63] = m;
  }
  return v;
}

// Blocks of random widths 0..32 back to back: their widths, packed bytes and the codes
// they hold (zigzag-decoded).
struct MixedBlocks {
  std::vector<uint8_t> widths, packed;
  std::vector<int32_t> codes;
};
MixedBlocks mixed_blocks(std::size_t blocks, std::mt19937_64& rng) {
  MixedBlocks m;
  m.widths.resize(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    m.widths[b] = static_cast<uint8_t>(rng() % (bitpack::kMaxWidth + 1));
    const std::vector<uint32_t> v = block_values(m.widths[b], rng);
    const std::size_t at = m.packed.size();
    m.packed.resize(at + 8 * m.widths[b]);
    bitpack::pack64(v.data(), m.widths[b], m.packed.data() + at);
    for (uint32_t x : v) m.codes.push_back(unzigzag(x));
  }
  return m;
}

TEST(QuantizeDecodeSimd, UnpackGivesBitpackCodesForEveryWidth) {
  SKIP_WITHOUT_AVX512();
  std::mt19937_64 rng(5);
  for (unsigned w = 0; w <= bitpack::kMaxWidth; ++w) {
    for (int trial = 0; trial < 20; ++trial) {
      const std::vector<uint32_t> v = block_values(w, rng);
      std::vector<uint8_t> packed(8 * w);
      bitpack::pack64(v.data(), w, packed.data());
      const auto block = exact_copy(packed);
      int32_t got[kQuantizeBlock + 1];
      got[kQuantizeBlock] = 12345;
      const uint8_t widths[1] = {static_cast<uint8_t>(w)};
      const uint8_t* end = qavx512::unpack_codes(block.get(), widths, 1, got);
      ASSERT_EQ(end, block.get() + 8 * w) << "w=" << w;
      uint32_t want[kQuantizeBlock];
      bitpack::unpack64(packed.data(), w, want);
      for (unsigned i = 0; i < kQuantizeBlock; ++i) {
        ASSERT_EQ(want[i], v[i]);
        ASSERT_EQ(got[i], unzigzag(want[i])) << "w=" << w << " value " << i << " zz=" << want[i];
      }
      ASSERT_EQ(got[kQuantizeBlock], 12345) << "wrote past the codes";
    }
  }
  // Many blocks of mixed widths back to back, in one exactly sized buffer.
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t blocks = 1 + rng() % 40;
    const MixedBlocks m = mixed_blocks(blocks, rng);
    const auto buf = exact_copy(m.packed);
    std::vector<int32_t> got(m.codes.size());
    ASSERT_EQ(qavx512::unpack_codes(buf.get(), m.widths.data(), blocks, got.data()),
              buf.get() + m.packed.size());
    ASSERT_EQ(got, m.codes) << "trial " << trial;
  }
}

// The bits of float(qmath::reconstruct(offset, step, c)) for each code.
std::vector<uint32_t> reference_floats(const std::vector<int32_t>& codes, double offset,
                                       float step) {
  std::vector<uint32_t> out(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) {
    out[i] = f32_bits(
        static_cast<float>(qmath::reconstruct(offset, static_cast<double>(step), codes[i])));
  }
  return out;
}

// The bits of n floats at p.
std::vector<uint32_t> float_bits(const uint8_t* p, std::size_t n) {
  std::vector<uint32_t> out(n);
  if (n > 0) std::memcpy(out.data(), p, 4 * n);
  return out;
}

std::vector<uint32_t> simd_floats(const std::vector<int32_t>& codes, double offset, float step) {
  auto out = std::make_unique<uint8_t[]>(4 * codes.size());  // exactly sized: no store past it
  qavx512::reconstruct(codes.data(), codes.size(), offset, step, out.get());
  return float_bits(out.get(), codes.size());
}

TEST(QuantizeDecodeSimd, ReconstructGivesQmathsFloatForAnyCode) {
  SKIP_WITHOUT_AVX512();
  std::mt19937_64 rng(9);
  const double offsets[] = {0.0, -0.0, 1.5, -3.0e30, 1e-40, 3.0e38, 0.1, -7.25, 1e300};
  const float steps[] = {0.0f, -0.0f, 1e-45f, FLT_MIN, 1.0f, 0.1f, 3.0e38f, 1e-3f, 7.62939453e-6f};
  const int32_t specials[] = {0,
                              1,
                              -1,
                              1 << 24,
                              -(1 << 24),
                              (1 << 24) + 1,
                              -(1 << 24) - 1,
                              kQuantizeMaxCode,
                              -kQuantizeMaxCode - 1,
                              INT32_MAX,
                              INT32_MIN};
  for (double off : offsets) {
    for (float step : steps) {
      for (std::size_t n : {0, 1, 7, 15, 16, 17, 31, 33, 64, 100}) {
        for (int kind = 0; kind < 3; ++kind) {
          std::vector<int32_t> codes(n);
          for (auto& c : codes) {
            switch (kind) {
              case 0: c = static_cast<int32_t>(rng() % 201) - 100; break;  // the shortcut's range
              case 1: c = specials[rng() % std::size(specials)]; break;
              default: c = static_cast<int32_t>(static_cast<uint32_t>(rng())); break;
            }
          }
          ASSERT_EQ(simd_floats(codes, off, step), reference_floats(codes, off, step))
              << "offset " << off << " step " << step << " n " << n << " kind " << kind;
        }
      }
    }
  }
  // Cases where a fused multiply-add rounds differently. With an odd |c| in [1.5, 2) 2^29
  // and a step in [1.5, 2) with an odd significand, c*step lies in [2^30, 2^31), an odd
  // multiple of 2^-23, inexact in double (ulp 2^-22). off(set) + the rounded product is then
  // exactly a midpoint S between two floats near 8, so the float rounding ties to even; the
  // exact sum is S + err (err, the product's rounding error, +-2^-23), which an FMA would
  // round to the float on err's side: S is chosen so that side is the odd one.
  for (int trial = 0; trial < 2000; ++trial) {
    const auto mag = static_cast<int32_t>((3u << 28) + (rng() % (1u << 28) | 1u));
    const int32_t c = (trial & 1) ? -mag : mag;
    const float step = 1.5f + static_cast<float>(rng() % (1u << 22) | 1u) * 0x1p-23f;
    const double pd = qmath::dmul(static_cast<double>(c), static_cast<double>(step));
    const double err = std::fma(static_cast<double>(c), static_cast<double>(step), -pd);  // exact
    ASSERT_NE(err, 0.0) << "test construction";
    const double s = err > 0 ? 8 + 0x1p-21 : 8 + 3 * 0x1p-21;  // ties to 8 and to 8 + 2^-19
    const double off = s - pd;  // exact: a multiple of ulp(pd) below 2^31, 53 bits at most
    const auto fused =
        static_cast<float>(std::fma(static_cast<double>(c), static_cast<double>(step), off));
    const auto want = static_cast<float>(qmath::reconstruct(off, static_cast<double>(step), c));
    ASSERT_NE(f32_bits(fused), f32_bits(want)) << "test construction";
    std::vector<int32_t> codes(19);
    for (auto& x : codes) x = static_cast<int32_t>(rng() % 2001) - 1000;
    codes[rng() % codes.size()] = c;
    ASSERT_EQ(simd_floats(codes, off, step), reference_floats(codes, off, step))
        << "c " << c << " step " << step;
  }
}

TEST(QuantizeDecodeSimd, FusedDecodeGivesUnpackThenReconstruct) {
  SKIP_WITHOUT_AVX512();
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + rng() % 700;
    MixedBlocks m = mixed_blocks((n + kQuantizeBlock - 1) / kQuantizeBlock, rng);
    std::vector<int32_t>& codes = m.codes;
    codes.resize(n);
    const int e_off = static_cast<int>(rng() % 40) - 20, e_step = static_cast<int>(rng() % 60) - 40;
    const double off =
        (trial % 3 == 0) ? 0.0 : std::ldexp(static_cast<double>(rng() % 2001) - 1000.5, e_off);
    const float step = (trial % 7 == 0)
                           ? 0.0f
                           : std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 1000.0f, e_step);
    const auto buf = exact_copy(m.packed);
    auto out = std::make_unique<uint8_t[]>(4 * n);
    qavx512::decode_f32(buf.get(), m.widths.data(), n, off, step, out.get());
    ASSERT_EQ(float_bits(out.get(), n), reference_floats(codes, off, step))
        << "trial " << trial << " n " << n;
  }
}

// A quantize body written field by field (compress/FORMAT.md), with each block's width
// chosen by the test rather than the smallest that fits.
struct Body {
  BoundMode mode = BoundMode::kAbs;
  bool dedupe = false;
  uint32_t row_length = 0;
  double offset = 0;
  float step = 0;
  uint64_t n_full_rows = 0;
  uint32_t n_unique = 0;
  std::vector<uint32_t> map;                    // dedupe: the distinct row of each full row
  std::vector<std::pair<float, float>> params;  // rel-row: offset and step per row
  std::vector<int32_t> codes;                   // the stream, padded to whole blocks with 0
  std::vector<uint8_t> widths;
  std::vector<uint32_t> escapes;  // stream positions, increasing
  std::vector<uint8_t> escape_values;

  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> b;
    auto put = [&](const auto& v) {
      const auto* p = reinterpret_cast<const uint8_t*>(&v);
      b.insert(b.end(), p, p + sizeof v);
    };
    put(static_cast<uint8_t>(mode));
    put(static_cast<uint8_t>(dedupe ? kQuantizeFlagDedupe : 0));
    put(uint16_t{0});
    put(row_length);
    put(1e-3);                                     // error_bound
    put(mode == BoundMode::kRelRow ? 0.0 : 1e-3);  // bound_abs
    put(offset);
    put(step);
    put(static_cast<uint32_t>(escapes.size()));
    put(n_unique);
    if (dedupe) {
      const unsigned bits = n_unique > 1 ? bitpack::bit_width(n_unique - 1) : 0;
      std::vector<uint8_t> m(bitpack::packed_array_bytes(n_full_rows, bits));
      if (!m.empty()) bitpack::pack_array(map.data(), n_full_rows, bits, m.data());
      b.insert(b.end(), m.begin(), m.end());
    }
    for (const auto& [o, s] : params) {
      put(o);
      put(s);
    }
    b.insert(b.end(), widths.begin(), widths.end());
    for (std::size_t k = 0; k < widths.size(); ++k) {
      uint32_t zz[kQuantizeBlock];
      for (unsigned i = 0; i < kQuantizeBlock; ++i) zz[i] = zigzag(codes[k * kQuantizeBlock + i]);
      const std::size_t at = b.size();
      b.resize(at + 8u * widths[k]);
      bitpack::pack64(zz, widths[k], b.data() + at);
    }
    for (uint32_t e : escapes) put(e);
    b.insert(b.end(), escape_values.begin(), escape_values.end());
    return b;
  }
};

// A random body for count elements of dtype dt; block k gets width k % 31 (every legal
// width), its codes spread over that width with the extremes, and +-kQuantizeMaxCode.
Body random_body(Dtype dt, uint64_t count, BoundMode mode, bool dedupe, uint32_t row, bool escapes,
                 std::mt19937_64& rng) {
  Body q;
  q.mode = mode;
  q.dedupe = dedupe;
  const bool rows = dedupe || mode == BoundMode::kRelRow;
  q.row_length = rows ? row : 0;
  q.n_full_rows = rows ? count / row : 0;
  const uint64_t tail = rows ? count % row : count;
  uint64_t n_stream = count;
  if (dedupe) {
    uint32_t next = 0;
    for (uint64_t r = 0; r < q.n_full_rows; ++r) {
      const bool fresh = next == 0 || rng() % 3 == 0;
      q.map.push_back(fresh ? next++ : static_cast<uint32_t>(rng() % next));
    }
    q.n_unique = next;
    n_stream = uint64_t{next} * row + tail;
  }
  if (mode == BoundMode::kRelRow) {
    const uint64_t n_params = (dedupe ? q.n_unique : q.n_full_rows) + (tail > 0 ? 1 : 0);
    for (uint64_t k = 0; k < n_params; ++k) {
      const float o = (k % 3 == 0)
                          ? 0.0f
                          : static_cast<float>(static_cast<double>(rng() % 20001) / 7.0 - 1400.0);
      const int e = static_cast<int>(rng() % 30) - 25;
      const float s =
          (k % 5 == 4) ? 0.0f : std::ldexp(1.0f + static_cast<float>(rng() % 4096) / 4096.0f, e);
      q.params.emplace_back(o, s);
    }
  } else {
    q.offset = (rng() % 2 == 0) ? 0.0 : static_cast<double>(rng() % 100001) / 3.0 - 16000.0;
    q.step = std::ldexp(1.0f + static_cast<float>(rng() % 4096) / 4096.0f,
                        static_cast<int>(rng() % 30) - 25);
  }
  const uint64_t blocks = (n_stream + kQuantizeBlock - 1) / kQuantizeBlock;
  const unsigned first_width = static_cast<unsigned>(rng() % (kQuantizeMaxWidth + 1));
  q.codes.assign(blocks * kQuantizeBlock, 0);
  for (uint64_t k = 0; k < blocks; ++k) {
    const auto w = static_cast<unsigned>((first_width + k) % (kQuantizeMaxWidth + 1));
    q.widths.push_back(static_cast<uint8_t>(w));
    const std::vector<uint32_t> v = block_values(w, rng);
    for (unsigned i = 0; i < kQuantizeBlock; ++i) {
      const uint64_t p = k * kQuantizeBlock + i;
      if (p < n_stream) q.codes[p] = unzigzag(v[i]);  // padding past the stream stays 0
    }
    if (w == kQuantizeMaxWidth && k * kQuantizeBlock + 1 < n_stream) {
      q.codes[k * kQuantizeBlock] = kQuantizeMaxCode;
      q.codes[k * kQuantizeBlock + 1] = -kQuantizeMaxCode;
    }
  }
  if (escapes) {
    for (uint64_t p = rng() % 50; p < n_stream; p += 1 + rng() % 200) {
      q.escapes.push_back(static_cast<uint32_t>(p));
      for (std::size_t b = 0; b < dtype_size(dt); ++b)
        q.escape_values.push_back(static_cast<uint8_t>(rng()));
    }
  }
  return q;
}

std::vector<uint8_t> decode_body_at(Level l, const std::vector<uint8_t>& body, Dtype dt,
                                    uint64_t count) {
  AtLevel at(l);
  const auto in = exact_copy(body);
  const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(dt);
  auto out = std::make_unique<uint8_t[]>(bytes);
  const Status st = quantize_body_decode(std::span<const uint8_t>(in.get(), body.size()), dt, count,
                                         std::span<uint8_t>(out.get(), bytes));
  EXPECT_TRUE(st.ok()) << st.message();
  return std::vector<uint8_t>(out.get(), out.get() + bytes);
}

TEST(QuantizeDecodeSimd, HandWrittenBodiesDecodeAsAtTheScalarLevel) {
  SKIP_WITHOUT_AVX512();
  std::mt19937_64 rng(17);
  std::size_t compared = 0;
  for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (BoundMode mode : {BoundMode::kAbs, BoundMode::kRel, BoundMode::kRelRow}) {
      for (bool dedupe : {false, true}) {
        for (uint64_t count : {1, 15, 16, 17, 63, 64, 65, 1000, 2049, 4133}) {
          for (uint32_t row : {37u, 128u}) {
            for (bool escapes : {false, true}) {  // without escapes the payload ends the body
              if (!dedupe && mode != BoundMode::kRelRow && row != 128u) continue;
              const Body q = random_body(dt, count, mode, dedupe, row, escapes, rng);
              const std::vector<uint8_t> body = q.bytes();
              const std::vector<uint8_t> want = decode_body_at(Level::kScalar, body, dt, count);
              const std::vector<uint8_t> got = decode_body_at(Level::kAvx512, body, dt, count);
              ASSERT_EQ(got, want)
                  << dtype_name(dt) << " mode " << static_cast<int>(mode) << " dedupe " << dedupe
                  << " count " << count << " row " << row << " escapes " << escapes;
              ++compared;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 200u);
}

// Encoder frames whose blocks need widths from 0 up to 30: block k holds values of magnitude
// about 2^(k % 31) steps, and a few at the largest code.
TEST(QuantizeDecodeSimd, EncodedFramesOfEveryWidthDecodeAsAtTheScalarLevel) {
  SKIP_WITHOUT_AVX512();
  std::mt19937_64 rng(23);
  std::normal_distribution<double> gauss(0.0, 1.0);
  for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (BoundMode mode : {BoundMode::kAbs, BoundMode::kRel}) {
      for (std::size_t n : {31 * 64 + 5, 64 * 31, 1000}) {
        for (double center : {0.0, 1000.0}) {
          std::vector<float> v(n);
          for (std::size_t i = 0; i < n; ++i) {
            const int k = static_cast<int>((i / kQuantizeBlock) % 31);
            v[i] = static_cast<float>(center + std::ldexp(gauss(rng), k - 20));
          }
          CodecParams cp;
          cp.codec = CodecId::kQuantize;
          cp.quantize.mode = mode;
          cp.quantize.error_bound = mode == BoundMode::kAbs ? 0x1p-21 : 1e-9;
          std::vector<uint8_t> in(n * dtype_size(dt));
          for (std::size_t i = 0; i < n; ++i) {
            if (dt == Dtype::kFloat32) {
              std::memcpy(in.data() + 4 * i, &v[i], 4);
            } else {
              const uint16_t h = dt == Dtype::kBfloat16 ? f32_to_bf16(v[i]) : f32_to_f16(v[i]);
              std::memcpy(in.data() + 2 * i, &h, 2);
            }
          }
          EncodeRequest req{dt, in.data(), n, &cp, nullptr};
          std::vector<uint8_t> frame(max_frame_bytes(req));
          std::size_t len = 0;
          ASSERT_TRUE(encode_frame(req, frame, &len).ok());
          frame.resize(len);
          const auto exact = exact_copy(frame);
          std::vector<uint8_t> out[2];
          for (int li = 0; li < 2; ++li) {
            AtLevel at(li == 0 ? Level::kScalar : Level::kAvx512);
            auto dst = std::make_unique<uint8_t[]>(in.size());
            std::size_t written = 0;
            const Status st = decode_frame(std::span<const uint8_t>(exact.get(), len),
                                           std::span<uint8_t>(dst.get(), in.size()), &written);
            ASSERT_TRUE(st.ok()) << st.message();
            ASSERT_EQ(written, in.size());
            out[li].assign(dst.get(), dst.get() + in.size());
          }
          ASSERT_EQ(out[1], out[0]) << dtype_name(dt) << " mode " << static_cast<int>(mode) << " n "
                                    << n << " center " << center;
        }
      }
    }
  }
}

}  // namespace
}  // namespace squeeze::compress

// The quantize body's Rice-coded payload (flag 0x02, CPU only) and the reference range: the
// same codes as the bit-packed body, so the same decoded bits; fewer bytes on heavy-tailed
// gradients; every malformed payload refused before anything is written; frames the CUDA
// decoder must not see are named by gpu_decodable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compress/codec.h"
#include "compress/crc32c.h"
#include "compress/quantize.h"
#include "compress/quantize_rice.h"
#include "tests/compress/test_data.h"

namespace squeeze::compress {
namespace {

QuantizeParams params(BoundMode mode, double eb, bool rice, uint32_t row_length = 0,
                      bool dedupe = false) {
  QuantizeParams p;
  p.mode = mode;
  p.error_bound = eb;
  p.row_length = row_length;
  p.dedupe_rows = dedupe;
  p.rice_codes = rice;
  return p;
}

std::vector<uint8_t> encode_body(const std::vector<uint8_t>& in, Dtype d, std::size_t n,
                                 const QuantizeParams& qp) {
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  cp.quantize = qp;
  EncodeRequest req{d, in.data(), n, &cp, nullptr};
  std::vector<uint8_t> body(quantize_body_bound(req));
  std::size_t written = 0;
  const Status st = quantize_body_encode(req, body, &written);
  EXPECT_TRUE(st.ok()) << st.message();
  body.resize(written);
  return body;
}

std::vector<uint8_t> decode_body(const std::vector<uint8_t>& body, Dtype d, std::size_t n) {
  testdata::Guarded out(n * dtype_size(d));
  const Status st = quantize_body_decode(body, d, n, out.span());
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(out.guards_intact());
  return std::vector<uint8_t>(out.data(), out.data() + n * dtype_size(d));
}

// Student-t(3) gradients in layers of different scales, as the collective network's tests.
std::vector<float> gradients(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::student_t_distribution<double> t3(3.0);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double scale = std::pow(10.0, -4.0 + 2.0 * static_cast<double>((i / 4096) % 5) / 4);
    v[i] = static_cast<float>(t3(rng) * scale);
  }
  return v;
}

std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(QuantizeRice, DecodesToTheSameBitsAsThePackedBodyForEveryDistributionSizeDtypeAndMode) {
  const std::vector<QuantizeParams> modes = {params(BoundMode::kAbs, 1e-3, true),
                                             params(BoundMode::kAbs, 0.25, true),
                                             params(BoundMode::kRel, 1e-2, true),
                                             params(BoundMode::kRel, 1e-6, true),
                                             params(BoundMode::kRelRow, 1e-2, true, 64),
                                             params(BoundMode::kRel, 1e-2, true, 16, true),
                                             params(BoundMode::kRelRow, 1e-3, true, 7, true)};
  const std::vector<std::size_t> sizes = {0, 1, 2, 63, 64, 65, 1023, 1025, 4097, 65537};
  for (Dtype d : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (testdata::Dist dist : testdata::all_dists()) {
      for (std::size_t n : sizes) {
        const auto in = testdata::to_dtype(testdata::make_floats(dist, n, n + 7), d);
        for (std::size_t m = 0; m < modes.size(); ++m) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " " + testdata::dist_name(dist) +
                       " n=" + std::to_string(n) + " mode#" + std::to_string(m));
          QuantizeParams packed = modes[m];
          packed.rice_codes = false;
          const std::vector<uint8_t> rb = encode_body(in, d, n, modes[m]);
          const std::vector<uint8_t> pb = encode_body(in, d, n, packed);
          ASSERT_GE(rb.size(), kQuantizeHeaderBytes);
          EXPECT_EQ(rb[1] & kQuantizeFlagRice, kQuantizeFlagRice);
          QuantizeLayout q;
          const Status st = parse_quantize_body(rb, d, n, &q);
          ASSERT_TRUE(st.ok()) << st.message();
          EXPECT_TRUE(q.rice);
          EXPECT_EQ(decode_body(rb, d, n), decode_body(pb, d, n));
          if (HasFailure()) return;
        }
      }
    }
  }
}

TEST(QuantizeRice, CodesHeavyTailedGradientsInFewerBytesThanPacking) {
  const std::size_t n = 1 << 16;
  const auto in = bytes_of(gradients(n, 3));
  for (double eb : {1e-3 / 6, 1e-3 / 2, 1e-2}) {
    const std::size_t rice =
        encode_body(in, Dtype::kFloat32, n, params(BoundMode::kRel, eb, true)).size();
    const std::size_t packed =
        encode_body(in, Dtype::kFloat32, n, params(BoundMode::kRel, eb, false)).size();
    std::printf("rel %.3g: packed %.3f, Rice %.3f bits per element\n", eb,
                8.0 * static_cast<double>(packed) / static_cast<double>(n),
                8.0 * static_cast<double>(rice) / static_cast<double>(n));
    EXPECT_LT(rice, packed * 9 / 10) << "rel " << eb;
  }
}

TEST(QuantizeRice, EveryCodeWidthAndEscapeRoundTrips) {
  // Blocks whose codes need every Rice parameter, and outliers past the 32-zero escape.
  std::vector<float> v;
  for (int k = 0; k <= 29; ++k) {
    for (int i = 0; i < 64; ++i) {
      const double mag = std::ldexp(1.0, k) * (0.5 + (i % 7) / 8.0);
      v.push_back(static_cast<float>((i % 2 ? -1 : 1) * (i == 5 ? mag * 1000 : mag)));
    }
  }
  const auto in = bytes_of(v);
  const QuantizeParams qp = params(BoundMode::kAbs, 0.5, true);
  const std::vector<uint8_t> body = encode_body(in, Dtype::kFloat32, v.size(), qp);
  const std::vector<uint8_t> out = decode_body(body, Dtype::kFloat32, v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    float y;
    std::memcpy(&y, out.data() + 4 * i, 4);
    ASSERT_LE(std::fabs(static_cast<double>(y) - v[i]), 0.5) << i;
  }
}

TEST(QuantizeRice, ReferenceRangeIsWhatARelativeBoundIsTakenOf) {
  const std::size_t n = 4096;
  const auto v = gradients(n, 5);
  const auto in = bytes_of(v);
  const double own = quantize_value_range(Dtype::kFloat32, in.data(), n);
  ASSERT_GT(own, 0);
  QuantizeParams qp = params(BoundMode::kRel, 1e-3, true);
  const std::size_t alone = encode_body(in, Dtype::kFloat32, n, qp).size();
  qp.reference_range = own / 2;  // smaller than its own range: its own range holds
  QuantizeLayout q;
  std::vector<uint8_t> body = encode_body(in, Dtype::kFloat32, n, qp);
  ASSERT_TRUE(parse_quantize_body(body, Dtype::kFloat32, n, &q).ok());
  EXPECT_DOUBLE_EQ(q.bound_abs, 1e-3 * own);
  EXPECT_EQ(body.size(), alone);
  qp.reference_range = own * 8;
  body = encode_body(in, Dtype::kFloat32, n, qp);
  ASSERT_TRUE(parse_quantize_body(body, Dtype::kFloat32, n, &q).ok());
  EXPECT_DOUBLE_EQ(q.bound_abs, 1e-3 * own * 8);  // the header states the bound it met
  EXPECT_LT(body.size(), alone);
  const std::vector<uint8_t> out = decode_body(body, Dtype::kFloat32, n);
  for (std::size_t i = 0; i < n; ++i) {
    float y;
    std::memcpy(&y, out.data() + 4 * i, 4);
    ASSERT_LE(std::fabs(static_cast<double>(y) - v[i]), q.bound_abs) << i;
  }
}

TEST(QuantizeRice, RejectsABadReferenceRange) {
  const std::vector<uint8_t> in(64 * 4, 0);
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  EncodeRequest req{Dtype::kFloat32, in.data(), 64, &cp, nullptr};
  std::vector<uint8_t> body(quantize_body_bound(req));
  std::size_t written = 0;
  for (double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    cp.quantize = params(BoundMode::kRel, 1e-3, true);
    cp.quantize.reference_range = bad;
    const Status st = quantize_body_encode(req, body, &written);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("reference_range"), std::string::npos) << st.message();
  }
  cp.quantize = params(BoundMode::kAbs, 1e-3, true);
  cp.quantize.reference_range = 1.0;  // abs has no range
  EXPECT_EQ(quantize_body_encode(req, body, &written).code(), Status::Code::kInvalidArgument);
}

// A Rice-coded body to break: one block of varied codes, one all-zero block, one partial.
std::vector<uint8_t> sample_body(std::size_t* n_out) {
  std::vector<float> v(64 * 3 - 9, 0.0f);
  for (std::size_t i = 0; i < 64; ++i) v[i] = static_cast<float>(i % 11) - 5.0f;
  for (std::size_t i = 128; i < v.size(); ++i) v[i] = static_cast<float>(i % 3);
  *n_out = v.size();
  return encode_body(bytes_of(v), Dtype::kFloat32, v.size(), params(BoundMode::kAbs, 0.5, true));
}

// Decoding must fail with `code` and a message naming `what`, and write nothing.
void expect_refused(const std::vector<uint8_t>& body, std::size_t n, Status::Code code,
                    const std::string& what) {
  QuantizeLayout q;
  const Status parsed = parse_quantize_body(body, Dtype::kFloat32, n, &q);
  EXPECT_EQ(parsed.code(), code) << parsed.message();
  EXPECT_NE(parsed.message().find(what), std::string::npos) << parsed.message();
  std::vector<uint8_t> dst(n * 4, 0xA5);
  const Status st = quantize_body_decode(body, Dtype::kFloat32, n, dst);
  EXPECT_EQ(st.code(), code) << st.message();
  EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  for (uint8_t b : dst) ASSERT_EQ(b, 0xA5) << "written before the body was refused";
}

TEST(QuantizeRice, MalformedPayloadsAreRefusedBeforeAnythingIsWritten) {
  std::size_t n = 0;
  const std::vector<uint8_t> good = sample_body(&n);
  QuantizeLayout q;
  ASSERT_TRUE(parse_quantize_body(good, Dtype::kFloat32, n, &q).ok());
  ASSERT_EQ(q.n_blocks, 3u);
  ASSERT_EQ(q.n_escapes, 0u);
  ASSERT_GT(q.widths[0], 0);
  ASSERT_EQ(q.widths[1], 0);
  ASSERT_GT(q.payload.size(), 2u);
  const std::size_t widths = q.widths_offset, payload = q.payload_offset;
  {
    auto b = good;  // one byte short: the last code runs past the end
    b.pop_back();
    expect_refused(b, n, Status::Code::kCorrupt, "runs past the payload's end");
  }
  {
    auto b = good;  // a stray byte before the escapes
    b.push_back(0);
    expect_refused(b, n, Status::Code::kCorrupt, "stray bytes");
  }
  {
    auto b = good;  // a Rice parameter past k = 30
    b[widths] = 32;
    expect_refused(b, n, Status::Code::kCorrupt, "Rice parameter 32");
  }
  {
    auto b = good;  // an unknown flag
    b[1] |= 0x04;
    expect_refused(b, n, Status::Code::kCorrupt, "unknown flags");
  }
  {
    auto b = good;  // k = 30 with a quotient: a code of more than 30 bits
    b[widths] = 31;
    std::fill(b.begin() + static_cast<std::ptrdiff_t>(payload), b.end(), 0x02);
    expect_refused(b, n, Status::Code::kCorrupt, "more than 30");
  }
  {
    auto b = good;  // all zero bits: escapes that run past the end
    std::fill(b.begin() + static_cast<std::ptrdiff_t>(payload), b.end(), 0x00);
    expect_refused(b, n, Status::Code::kCorrupt, "runs past the payload's end");
  }
  {
    auto b = good;  // nonzero padding bits after the last code (when there are any)
    QuantizeLayout ql;
    ASSERT_TRUE(parse_quantize_body(b, Dtype::kFloat32, n, &ql).ok());
    const uint8_t last = b.back();
    if (last != 0xFF && (last & 0x80) == 0) {
      b.back() = static_cast<uint8_t>(last | 0x80);
      expect_refused(b, n, Status::Code::kCorrupt, "padding bits");
    }
  }
  {
    auto b = good;  // escapes claimed that the body cannot hold
    b[36] = 0xFF;
    b[37] = 0;
    expect_refused(b, n, Status::Code::kCorrupt, "n_escapes");
  }
}

TEST(QuantizeRice, GpuDecodableNamesTheFramesOnlyTheCpuReads) {
  const auto v = gradients(4096, 9);
  const auto in = bytes_of(v);
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  cp.quantize = params(BoundMode::kRel, 1e-3, true);
  EncodeRequest req{Dtype::kFloat32, in.data(), v.size(), &cp, nullptr};
  std::vector<uint8_t> frame(max_frame_bytes(req));
  std::size_t bytes = 0;
  ASSERT_TRUE(encode_frame(req, frame, &bytes).ok());
  frame.resize(bytes);
  const Status st = gpu_decodable(frame);
  EXPECT_EQ(st.code(), Status::Code::kUnsupported);
  EXPECT_NE(st.message().find("Rice"), std::string::npos) << st.message();
  std::vector<uint8_t> out(in.size());
  std::size_t written = 0;
  EXPECT_TRUE(decode_frame(frame, out, &written).ok());  // the CPU reads it

  cp.quantize.rice_codes = false;
  std::vector<uint8_t> packed(max_frame_bytes(req));
  ASSERT_TRUE(encode_frame(req, packed, &bytes).ok());
  packed.resize(bytes);
  EXPECT_TRUE(gpu_decodable(packed).ok());
}

// Inputs from integer arithmetic only (no <random> distributions, no libm), so every
// standard library and compiler makes the same bytes: heavy-tailed values in layers of
// different scales, with NaN, infinities and huge outliers (escapes) and whole blocks of
// large codes (Rice parameters up to 30 and quotients past the 32-zero escape).
std::vector<float> pinned_input(std::size_t n, uint64_t seed) {
  std::vector<float> v(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const double u = static_cast<double>(x >> 11) * 0x1p-53;            // [0, 1)
    const double w = static_cast<double>((x >> 3) & 0xffff) * 0x1p-16;  // [0, 1)
    const double t = (2 * u - 1) / (1.0009765625 - w);                  // heavy tail
    const double scale = static_cast<double>(1u << ((i / 4096) % 5)) * 0x1p-12;
    double y = t * scale;
    if (i % 997 == 3) y = t * 0x1p40;        // beyond +-2^29 codes: an escape, or a large block
    if ((i / 64) % 61 == 7) y = t * 0x1p+6;  // a block of large codes
    v[i] = static_cast<float>(y);
  }
  if (n > 100) {
    v[17] = std::numeric_limits<float>::quiet_NaN();
    v[n / 2] = std::numeric_limits<float>::infinity();
    v[n - 1] = -std::numeric_limits<float>::infinity();
  }
  return v;
}

// The encoder's output is the wire format (compress/FORMAT.md): a faster encoder must write
// the very same bytes. These CRC32Cs were taken from the encoder as of main 91d591d.
TEST(QuantizeRice, EncoderWritesTheSameBytesAsBefore) {
  struct Case {
    std::size_t n;
    QuantizeParams qp;
    std::pair<uint32_t, std::size_t> f32, bf16;  // CRC32C and size of the body
  };
  const std::vector<Case> cases = {
      {1, params(BoundMode::kAbs, 1e-4, true), {0xcd4e9f93, 45}, {0x56c0d6b3, 45}},
      {1000, params(BoundMode::kRel, 1e-3, true), {0x92ec74a8, 124}, {0xe545e48b, 126}},
      {16384, params(BoundMode::kRel, 1e-3, true), {0x673c3797, 653}, {0xcd1612a3, 744}},
      {16384, params(BoundMode::kAbs, 1e-7, true), {0xbe8cb442, 37010}, {0x124c2af3, 36571}},
      {100003, params(BoundMode::kRel, 1e-2, true), {0x1b9efa8f, 1935}, {0x84669ab1, 2077}},
      {100003, params(BoundMode::kRel, 1e-5, true), {0x0bc3faf8, 4466}, {0x140ac00a, 5138}},
      {65536,
       params(BoundMode::kRelRow, 1e-3, true, 100),
       {0x56726a2c, 57541},
       {0x4dd77754, 65414}},
      {65536,
       params(BoundMode::kRel, 1e-3, true, 64, true),
       {0x0a29245f, 3505},
       {0xd8b212d7, 3809}},
      {100003, params(BoundMode::kAbs, 1e-6, true), {0xad2a52c7, 181632}, {0xdc7cac8f, 181135}},
      {65536,
       params(BoundMode::kAbs, 3e-5, true, 128, true),
       {0x25280935, 78927},
       {0xef907a17, 78766}},
  };
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const auto in = bytes_of(pinned_input(cases[c].n, c + 1));
    for (Dtype d : {Dtype::kFloat32, Dtype::kBfloat16}) {
      std::vector<uint8_t> typed(in);
      if (d == Dtype::kBfloat16) {  // the high halves: exactly representable
        typed.resize(cases[c].n * 2);
        for (std::size_t i = 0; i < cases[c].n; ++i) std::memcpy(&typed[2 * i], &in[4 * i + 2], 2);
      }
      const std::vector<uint8_t> body = encode_body(typed, d, cases[c].n, cases[c].qp);
      const auto& want = d == Dtype::kFloat32 ? cases[c].f32 : cases[c].bf16;
      EXPECT_EQ(crc32c(body), want.first) << "case " << c << " " << dtype_name(d);
      EXPECT_EQ(body.size(), want.second) << "case " << c << " " << dtype_name(d);
      const std::vector<uint8_t> out = decode_body(body, d, cases[c].n);
      ASSERT_EQ(out.size(), typed.size());
    }
  }
}

// compress/FORMAT.md's Rice payload read bit by bit: the reference the decoder's fast paths
// are checked against. Returns false where a decoder must refuse the payload.
bool reference_rice_decode(const QuantizeLayout& q, std::vector<int32_t>* codes) {
  const uint64_t nbits = q.payload.size() * 8ull;
  uint64_t pos = 0;
  auto bit = [&](uint64_t i) { return (q.payload[i / 8] >> (i % 8)) & 1u; };
  codes->assign(q.n_stream, 0);
  for (uint64_t e = 0; e < q.n_stream; ++e) {
    const unsigned param = q.widths[e / kQuantizeBlock];
    if (param == 0) continue;
    const unsigned k = param - 1;
    uint64_t quotient = 0;
    while (quotient < kRiceEscapeZeros) {
      if (pos >= nbits) return false;
      if (bit(pos++)) break;
      ++quotient;
    }
    uint64_t z = 0;
    const unsigned low = quotient == kRiceEscapeZeros ? kRiceRawBits : k;
    if (pos + low > nbits) return false;
    for (unsigned b = 0; b < low; ++b) z |= static_cast<uint64_t>(bit(pos++)) << b;
    if (quotient < kRiceEscapeZeros) z |= quotient << k;
    if (z >> kRiceRawBits) return false;
    const auto zz = static_cast<uint32_t>(z);
    (*codes)[e] = static_cast<int32_t>((zz >> 1) ^ (0u - (zz & 1)));
  }
  if ((pos + 7) / 8 != q.payload.size()) return false;
  for (uint64_t i = pos; i < nbits; ++i) {
    if (bit(i)) return false;
  }
  return true;
}

// rice_decode_codes and rice::encode_block pick a BMI2 build of the same code at run time;
// the portable one must give the same codes, statuses and bytes, on good and on damaged
// payloads; and both must accept exactly what the bit-by-bit reference accepts, with its codes.
TEST(QuantizeRice, Bmi2PortableAndReferenceDecodersAgree) {
  std::mt19937_64 rng(11);
  std::size_t refused = 0, accepted = 0, small_k_blocks = 0, k3_blocks = 0;
  for (std::size_t c = 0; c < 6; ++c) {
    const std::size_t n = std::vector<std::size_t>{1, 63, 1000, 4097, 16384, 65537}[c];
    const auto in = bytes_of(pinned_input(n, c + 100));
    // Bounds that make Rice parameters 0..4 (k <= 3: the table decoder's) and large ones.
    for (double eb : {1e-7, 1e-5, 1e-3, 3e-3, 1e-2, 3e-2}) {
      const std::vector<uint8_t> body =
          encode_body(in, Dtype::kFloat32, n, params(BoundMode::kAbs, eb, true));
      for (int damage = 0; damage < 20; ++damage) {
        std::vector<uint8_t> b = body;
        QuantizeLayout q;
        ASSERT_TRUE(parse_quantize_layout(b, Dtype::kFloat32, n, &q).ok());
        if (damage > 0 && !q.payload.empty()) {  // flip a few payload bits
          for (int f = 0; f < damage % 4 + 1; ++f) {
            const std::size_t bit = rng() % (q.payload.size() * 8);
            b[q.payload_offset + bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
          }
          ASSERT_TRUE(parse_quantize_layout(b, Dtype::kFloat32, n, &q).ok());
        }
        std::vector<int32_t> fast(n + 1, 7), portable(n + 1, 7), reference;
        const Status a = rice_decode_codes(q, fast.data());
        const Status p = rice_decode_codes_portable(q, portable.data());
        const bool valid = reference_rice_decode(q, &reference);
        (valid ? accepted : refused)++;
        if (damage == 0) {
          for (uint8_t w : q.widths) {
            small_k_blocks += w >= 1 && w <= 4;
            k3_blocks += w == 4;
          }
        }
        ASSERT_EQ(a.ok(), valid) << a.message() << " (damage " << damage << ")";
        reference.push_back(7);
        if (valid) {
          ASSERT_EQ(fast, reference);
        }
        ASSERT_EQ(a.code(), p.code()) << a.message() << " / " << p.message();
        ASSERT_EQ(a.message(), p.message());
        if (a.ok()) {
          ASSERT_EQ(fast, portable) << "n " << n << " eb " << eb;
        }
        ASSERT_EQ(fast[n], 7);  // nothing past the codes
        ASSERT_EQ(portable[n], 7);
      }
    }
  }
  EXPECT_GT(refused, 100u);
  EXPECT_GT(accepted, 200u);
  EXPECT_GT(small_k_blocks, 1000u);  // the table decoder's blocks
  EXPECT_GT(k3_blocks, 100u);
  std::printf("%zu damaged payloads refused, %zu accepted, %zu blocks with k <= 3 (%zu k = 3)\n",
              refused, accepted, small_k_blocks, k3_blocks);
  for (unsigned len : {1u, 17u, 64u}) {
    for (int shape = 0; shape < 40; ++shape) {
      std::vector<int32_t> codes(len);
      for (auto& v : codes) {
        const int bits = shape % 31;
        v = static_cast<int32_t>(rng() % (1ull << bits)) - (1 << bits) / 2;
        if (rng() % 50 == 0) v = static_cast<int32_t>(rng() % (1u << 29));  // escapes
      }
      for (std::size_t cap : {std::size_t{600}, std::size_t{100}, std::size_t{9}}) {
        std::vector<uint8_t> x(cap + 8, 0xEE), y(cap + 8, 0xEE);
        rice::Writer wx(x.data(), cap), wy(y.data(), cap);
        wx.put(5, 3);  // start mid-byte
        wy.put(5, 3);
        ASSERT_EQ(rice::encode_block(codes.data(), len, &wx),
                  rice::encode_block_portable(codes.data(), len, &wy));
        const std::size_t bx = wx.finish(), by = wy.finish();
        ASSERT_EQ(wx.ok(), wy.ok());
        ASSERT_EQ(bx, by);
        ASSERT_TRUE(std::equal(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(bx), y.begin()));
        for (std::size_t i = cap; i < cap + 8; ++i) ASSERT_EQ(x[i], 0xEE) << "written past cap";
      }
    }
  }
}

}  // namespace
}  // namespace squeeze::compress

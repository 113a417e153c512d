// The quantize codec's promise: after decoding into the original dtype, every finite
// element is within the bound, and NaN/Inf come back bit for bit; for every distribution,
// size, dtype and bound mode. Plus dedupe, rel-row, constant input and compactness.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/quantize.h"
#include "compress/quantize_kernels.h"
#include "tests/compress/test_data.h"

namespace squeeze::compress {
namespace {

using testdata::Dist;

// The bound, computed independently of the codec: eb, or eb * (max - min) over finite values.
double range_bound(const uint8_t* data, Dtype d, std::size_t begin, std::size_t end, double rel) {
  double mn = INFINITY, mx = -INFINITY;
  for (std::size_t i = begin; i < end; ++i) {
    const float v = testdata::element(data, d, i);
    if (!std::isfinite(v)) continue;
    mn = std::fmin(mn, static_cast<double>(v));
    mx = std::fmax(mx, static_cast<double>(v));
  }
  return mn <= mx ? rel * (mx - mn) : 0.0;
}

// Checks every element; returns the number of violations (and reports the first few).
std::size_t check_bound(const std::vector<uint8_t>& in, const uint8_t* out, Dtype d, std::size_t n,
                        const QuantizeParams& p) {
  std::size_t bad = 0;
  double eb =
      p.mode == BoundMode::kAbs ? p.error_bound : range_bound(in.data(), d, 0, n, p.error_bound);
  for (std::size_t i = 0; i < n; ++i) {
    if (p.mode == BoundMode::kRelRow && i % p.row_length == 0) {
      eb = range_bound(in.data(), d, i, std::min<std::size_t>(n, i + p.row_length), p.error_bound);
    }
    const float x = testdata::element(in.data(), d, i);
    const float y = testdata::element(out, d, i);
    const bool ok =
        std::isfinite(x)
            ? std::fabs(static_cast<double>(x) - static_cast<double>(y)) <= eb
            : testdata::element_bits(in.data(), d, i) == testdata::element_bits(out, d, i);
    if (!ok && ++bad <= 3) {
      ADD_FAILURE() << "element " << i << ": x=" << x << " x'=" << y << " bound=" << eb;
    }
  }
  return bad;
}

QuantizeParams make_params(BoundMode mode, double eb, uint32_t row_length = 0,
                           bool dedupe = false) {
  QuantizeParams p;
  p.mode = mode;
  p.error_bound = eb;
  p.row_length = row_length;
  p.dedupe_rows = dedupe;
  return p;
}

// Encodes the body directly (no stored fallback), decodes into a guarded buffer, checks.
void round_trip_body(const std::vector<uint8_t>& in, Dtype d, std::size_t n,
                     const QuantizeParams& qp) {
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  cp.quantize = qp;
  EncodeRequest req{d, in.data(), n, &cp, nullptr};
  std::vector<uint8_t> body(quantize_body_bound(req));
  std::size_t written = 0;
  Status st = quantize_body_encode(req, body, &written);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_LE(written, body.size());
  body.resize(written);
  testdata::Guarded out(in.size());
  st = quantize_body_decode(body, d, n, out.span());
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(out.guards_intact());
  EXPECT_EQ(check_bound(in, out.data(), d, n, qp), 0u);
}

TEST(Quantize, BoundHoldsForEveryElementAcrossDistributionsSizesDtypesModes) {
  const std::vector<QuantizeParams> modes = {make_params(BoundMode::kAbs, 1e-3),
                                             make_params(BoundMode::kAbs, 0.25),
                                             make_params(BoundMode::kRel, 1e-2),
                                             make_params(BoundMode::kRel, 1e-5),
                                             make_params(BoundMode::kRelRow, 1e-2, 64),
                                             make_params(BoundMode::kRel, 1e-2, 16, true),
                                             make_params(BoundMode::kRelRow, 1e-3, 7, true)};
  const std::vector<std::size_t> sizes = {0, 1, 2, 63, 64, 65, 1023, 1025, 4097, 65537};
  for (Dtype d : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (Dist dist : testdata::all_dists()) {
      for (std::size_t n : sizes) {
        const auto in = testdata::to_dtype(testdata::make_floats(dist, n, n + 1), d);
        for (std::size_t m = 0; m < modes.size(); ++m) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " " + testdata::dist_name(dist) +
                       " n=" + std::to_string(n) + " mode#" + std::to_string(m));
          round_trip_body(in, d, n, modes[m]);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(Quantize, FramesRoundTripThroughEncodeFrameWithStoredFallback) {
  for (Dtype d : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (Dist dist : testdata::all_dists()) {
      const std::size_t n = 3001;
      const auto in = testdata::to_dtype(testdata::make_floats(dist, n, 7), d);
      CodecParams cp;
      cp.codec = CodecId::kQuantize;
      cp.quantize = make_params(BoundMode::kRel, 1e-2);
      EncodeRequest req{d, in.data(), n, &cp, nullptr};
      std::vector<uint8_t> frame(max_frame_bytes(req));
      std::size_t fb = 0;
      ASSERT_TRUE(encode_frame(req, frame, &fb).ok());
      testdata::Guarded out(in.size());
      std::size_t written = 0;
      Status st = decode_frame(std::span(frame.data(), fb), out.span(), &written);
      ASSERT_TRUE(st.ok()) << st.message();
      EXPECT_EQ(written, in.size());
      EXPECT_TRUE(out.guards_intact());
      EXPECT_EQ(check_bound(in, out.data(), d, n, cp.quantize), 0u)
          << dtype_name(d) << " " << testdata::dist_name(dist);
    }
  }
}

TEST(Quantize, ConstantInputHasAllZeroCodesAndDecodesExactly) {
  const std::vector<float> v(10000, -7.5f);
  for (Dtype d : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    const auto in = testdata::to_dtype(v, d);
    CodecParams cp;
    cp.codec = CodecId::kQuantize;
    cp.quantize = make_params(BoundMode::kRel, 1e-2);
    EncodeRequest req{d, in.data(), v.size(), &cp, nullptr};
    std::vector<uint8_t> body(quantize_body_bound(req));
    std::size_t n = 0;
    ASSERT_TRUE(quantize_body_encode(req, body, &n).ok());
    QuantizeLayout q;
    ASSERT_TRUE(parse_quantize_body(std::span(body.data(), n), d, v.size(), &q).ok());
    EXPECT_EQ(q.payload.size(), 0u);
    EXPECT_EQ(q.n_escapes, 0u);
    std::vector<uint8_t> out(in.size());
    ASSERT_TRUE(quantize_body_decode(std::span(body.data(), n), d, v.size(), out).ok());
    EXPECT_EQ(out, in);
  }
}

TEST(Quantize, ZerosStayExactAndZeroBlocksTakeNoPayload) {
  auto v = testdata::make_floats(Dist::kSparse, 64 * 1000, 3);
  const auto in = testdata::to_dtype(v, Dtype::kFloat32);
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  cp.quantize = make_params(BoundMode::kRel, 1e-2);
  EncodeRequest req{Dtype::kFloat32, in.data(), v.size(), &cp, nullptr};
  std::vector<uint8_t> body(quantize_body_bound(req));
  std::size_t n = 0;
  ASSERT_TRUE(quantize_body_encode(req, body, &n).ok());
  std::vector<float> out(v.size());
  ASSERT_TRUE(quantize_body_decode(std::span(body.data(), n), Dtype::kFloat32, v.size(),
                                   std::span(reinterpret_cast<uint8_t*>(out.data()), in.size()))
                  .ok());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 0.0f) {
      ASSERT_EQ(out[i], 0.0f) << i;
    }
  }
  EXPECT_LT(n, in.size() / 8) << "1%-dense data should compress well past 8x";
}

TEST(Quantize, DedupeSendsEachDistinctRowOnce) {
  const uint32_t dim = 64;
  const auto table = testdata::make_floats(Dist::kGaussian, 50 * dim, 5);
  std::vector<float> rows;
  for (int r = 0; r < 1000; ++r) {  // 1000 lookups of 50 distinct rows, plus a partial tail
    const int id = (r * 7919) % 50;
    rows.insert(rows.end(), table.begin() + id * dim, table.begin() + (id + 1) * dim);
  }
  rows.insert(rows.end(), table.begin(), table.begin() + 10);
  const auto in = testdata::to_dtype(rows, Dtype::kFloat32);
  QuantizeParams qp = make_params(BoundMode::kRel, 1e-2, dim, true);
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  cp.quantize = qp;
  EncodeRequest req{Dtype::kFloat32, in.data(), rows.size(), &cp, nullptr};
  std::vector<uint8_t> body(quantize_body_bound(req));
  std::size_t n = 0;
  ASSERT_TRUE(quantize_body_encode(req, body, &n).ok());
  QuantizeLayout q;
  ASSERT_TRUE(
      parse_quantize_body(std::span(body.data(), n), Dtype::kFloat32, rows.size(), &q).ok());
  EXPECT_EQ(q.n_unique, 50u);
  EXPECT_EQ(q.tail, 10u);
  EXPECT_EQ(q.n_stream, 50u * dim + 10);
  EXPECT_GT(static_cast<double>(in.size()) / static_cast<double>(n), 50.0);
  round_trip_body(in, Dtype::kFloat32, rows.size(), qp);
  // Identical rows decode identically.
  std::vector<float> out(rows.size());
  ASSERT_TRUE(quantize_body_decode(std::span(body.data(), n), Dtype::kFloat32, rows.size(),
                                   std::span(reinterpret_cast<uint8_t*>(out.data()), in.size()))
                  .ok());
  for (int r = 50; r < 1000; ++r) {
    const int prev = r - 50;  // (r*7919) % 50 repeats every 50 rows
    ASSERT_EQ(0, std::memcmp(&out[r * dim], &out[prev * dim], dim * 4)) << r;
  }
}

// The plugin skips dedupe on streams where it finds little (plugin/engine/dedupe_gate.h);
// that changes the bytes sent, never the values a receiver gets from a quantize body. (A
// frame may still differ: a body no smaller than the input is sent stored, exactly.)
TEST(Quantize, DedupeChangesTheBodyNotTheDecodedValuesAndReportsWhatItFound) {
  const uint32_t dim = 128;
  for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (BoundMode mode : {BoundMode::kAbs, BoundMode::kRel, BoundMode::kRelRow}) {
      const auto table = testdata::make_floats(Dist::kSpecial, 40 * dim, 9);
      std::vector<float> rows;
      for (int r = 0; r < 300; ++r) {  // a few repeats among mostly distinct rows, plus a tail
        const int id = r % 97 < 40 ? r % 97 : (r * 31) % 40;
        rows.insert(rows.end(), table.begin() + id * dim, table.begin() + (id + 1) * dim);
      }
      rows.insert(rows.end(), table.begin(), table.begin() + 5);
      const auto in = testdata::to_dtype(rows, dt);
      std::vector<uint8_t> decoded[2];
      for (bool dedupe : {false, true}) {
        CodecParams cp;
        cp.codec = CodecId::kQuantize;
        cp.quantize = make_params(mode, mode == BoundMode::kAbs ? 1e-3 : 1e-2, dim, dedupe);
        EncodeReport report;
        EncodeRequest req{dt, in.data(), rows.size(), &cp, nullptr, &report};
        std::vector<uint8_t> body(quantize_body_bound(req));
        std::size_t n = 0;
        ASSERT_TRUE(quantize_body_encode(req, body, &n).ok());
        EXPECT_EQ(report.dedupe_rows, dedupe ? 300u : 0u);
        EXPECT_EQ(report.dedupe_unique, dedupe ? 40u : 0u);
        decoded[dedupe].resize(in.size());
        ASSERT_TRUE(
            quantize_body_decode(std::span(body.data(), n), dt, rows.size(), decoded[dedupe]).ok());

        report = EncodeReport{7, 7};  // encode_frame starts the report afresh
        std::vector<uint8_t> frame(max_frame_bytes(req));
        ASSERT_TRUE(encode_frame(req, frame, &n).ok());
        EXPECT_EQ(report.dedupe_rows, dedupe ? 300u : 0u);
        EXPECT_EQ(report.dedupe_unique, dedupe ? 40u : 0u);
      }
      EXPECT_EQ(decoded[0], decoded[1]) << dtype_name(dt) << " mode " << static_cast<int>(mode);
    }
  }
}

TEST(Quantize, GaussianAtRelativeBoundPacksAboutSevenBitsPerElement) {
  const auto in =
      testdata::to_dtype(testdata::make_floats(Dist::kGaussian, 1 << 16, 9), Dtype::kFloat32);
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  cp.quantize = make_params(BoundMode::kRel, 1e-2);
  EncodeRequest req{Dtype::kFloat32, in.data(), 1 << 16, &cp, nullptr};
  std::vector<uint8_t> body(quantize_body_bound(req));
  std::size_t n = 0;
  ASSERT_TRUE(quantize_body_encode(req, body, &n).ok());
  const double bits = 8.0 * static_cast<double>(n) / (1 << 16);
  EXPECT_LT(bits, 6.5);  // range/(2*eb) = 50 levels: 6 bits, plus widths and rare escapes
  EXPECT_GT(bits, 4.0);
}

TEST(Quantize, RejectsBadParameters) {
  const std::vector<float> v(100, 1.0f);
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  std::vector<uint8_t> dst(4096);
  std::size_t n = 0;
  auto encode = [&](Dtype d, QuantizeParams qp) {
    cp.quantize = qp;
    EncodeRequest req{d, v.data(), 100, &cp, nullptr};
    return quantize_body_encode(req, dst, &n);
  };
  EXPECT_EQ(encode(Dtype::kBytes, make_params(BoundMode::kAbs, 1)).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(encode(Dtype::kFloat32, make_params(BoundMode::kAbs, 0)).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(encode(Dtype::kFloat32, make_params(BoundMode::kAbs, NAN)).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(encode(Dtype::kFloat32, make_params(BoundMode::kRel, -1)).code(),
            Status::Code::kInvalidArgument);
  Status st = encode(Dtype::kFloat32, make_params(BoundMode::kRelRow, 1e-2, 0));
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("row_length"), std::string::npos) << st.message();
  EXPECT_EQ(encode(Dtype::kFloat32, make_params(BoundMode::kRel, 1e-2, 0, true)).code(),
            Status::Code::kInvalidArgument);
  // Too small a destination is kNoSpace, never an overrun.
  cp.quantize = make_params(BoundMode::kAbs, 1e-6);
  const auto g = testdata::make_floats(Dist::kGaussian, 100, 1);
  EncodeRequest req{Dtype::kFloat32, g.data(), 100, &cp, nullptr};
  for (std::size_t cap = 0; cap < 300; cap += 7) {
    testdata::Guarded small(cap);
    EXPECT_EQ(quantize_body_encode(req, small.span(), &n).code(), Status::Code::kNoSpace) << cap;
    EXPECT_TRUE(small.guards_intact());
  }
}

// The vector kernel the encoder uses must compute exactly what the scalar reference does.
template <Dtype D>
void expect_kernel_matches_scalar(const std::vector<float>& v, const qmath::Params& p) {
  std::vector<int32_t> codes(v.size());
  const bool all = qkern::quantize_run<D>(v.data(), v.size(), p, codes.data());
  bool all_ref = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    bool good;
    const int32_t c = qmath::quantize_one<D>(v[i], p, &good);
    all_ref &= good;
    ASSERT_EQ(codes[i], c) << dtype_name(D) << " element " << i << " x=" << v[i];
  }
  EXPECT_EQ(all, all_ref);
}

TEST(Quantize, VectorKernelMatchesScalarReference) {
  for (Dist dist : testdata::all_dists()) {
    auto v = testdata::make_floats(dist, 4099, 21);
    for (double eb : {1e-6, 1e-2, 3.0}) {
      const auto p32 = qmath::choose<Dtype::kFloat32>(-1.0, 2.0, eb, false);
      const auto pbf = qmath::choose<Dtype::kBfloat16>(-3.0, 1.0, eb, true);
      const auto p16 = qmath::choose<Dtype::kFloat16>(0.5, 0.75, eb, false);
      expect_kernel_matches_scalar<Dtype::kFloat32>(v, p32);
      expect_kernel_matches_scalar<Dtype::kBfloat16>(v, pbf);
      expect_kernel_matches_scalar<Dtype::kFloat16>(v, p16);
    }
  }
}

TEST(Quantize, SixtyFourMiBOfFloat32) {
  const std::size_t n = (64u << 20) / 4;
  const auto in =
      testdata::to_dtype(testdata::make_floats(Dist::kGaussian, n, 64), Dtype::kFloat32);
  round_trip_body(in, Dtype::kFloat32, n, make_params(BoundMode::kRel, 1e-3));
}

}  // namespace
}  // namespace squeeze::compress

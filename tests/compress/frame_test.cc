// The frame layer: round trips for every codec this layer owns, the stored fallback, the
// checksum, and rejection of malformed frames (truncation at every length, bit flips in
// every header byte, wrong counts, huge sizes) without writing outside the destination.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compress/byte_io.h"
#include "compress/codec.h"
#include "compress/crc32c.h"
#include "tests/compress/test_data.h"

namespace squeeze::compress {
namespace {

std::vector<uint8_t> encode(Dtype d, const void* src, uint64_t count, const CodecParams& p) {
  EncodeRequest req{d, src, count, &p, nullptr};
  std::vector<uint8_t> frame(max_frame_bytes(req));
  std::size_t n = 0;
  Status st = encode_frame(req, frame, &n);
  EXPECT_TRUE(st.ok()) << st.message();
  frame.resize(n);
  return frame;
}

CodecParams params(CodecId c, bool checksum = false) {
  CodecParams p;
  p.codec = c;
  p.checksum = checksum;
  return p;
}

// Decodes into a guarded buffer of `cap` bytes; returns the status and checks the guards.
Status decode_guarded(std::span<const uint8_t> frame, std::size_t cap,
                      std::vector<uint8_t>* out = nullptr) {
  testdata::Guarded dst(cap);
  std::size_t written = 0;
  Status st = decode_frame(frame, dst.span(), &written);
  EXPECT_TRUE(dst.guards_intact());
  if (!st.ok()) {
    EXPECT_EQ(written, 0u);
  }
  if (out) out->assign(dst.data(), dst.data() + cap);
  return st;
}

TEST(Frame, StoredRoundTripsAnyBytesAndSizes) {
  std::mt19937 rng(1);
  for (std::size_t n : {0u, 1u, 7u, 64u, 1000u, 65537u}) {
    std::vector<uint8_t> in(n);
    for (auto& b : in) b = static_cast<uint8_t>(rng());
    for (bool checksum : {false, true}) {
      auto frame = encode(Dtype::kBytes, in.data(), n, params(CodecId::kStored, checksum));
      ASSERT_EQ(frame.size(), kFrameHeaderBytes + n);
      FrameInfo info{};
      ASSERT_TRUE(peek_frame(frame, &info).ok());
      EXPECT_EQ(info.codec, CodecId::kStored);
      EXPECT_EQ(info.count, n);
      EXPECT_EQ(info.original_bytes, n);
      EXPECT_EQ(info.frame_bytes, frame.size());
      EXPECT_EQ(info.has_checksum, checksum);
      std::vector<uint8_t> out;
      ASSERT_TRUE(decode_guarded(frame, n, &out).ok());
      EXPECT_EQ(out, in);
    }
  }
}

TEST(Frame, NullParamsMeanStoredAndPeekNeedsOnlyTheHeader) {
  const std::vector<float> v = {1, 2, 3};
  EncodeRequest req{Dtype::kFloat32, v.data(), 3, nullptr, nullptr};
  std::vector<uint8_t> frame(max_frame_bytes(req));
  std::size_t n = 0;
  ASSERT_TRUE(encode_frame(req, frame, &n).ok());
  FrameInfo info{};
  ASSERT_TRUE(peek_frame(std::span(frame.data(), kFrameHeaderBytes), &info).ok());
  EXPECT_EQ(info.codec, CodecId::kStored);
  EXPECT_EQ(info.dtype, Dtype::kFloat32);
  EXPECT_EQ(info.frame_bytes, n);
}

TEST(Frame, LossyCodecFallsBackToStoredWhenItWouldExpand) {
  // Random bits as float32 with a tiny absolute bound: quantize cannot win.
  std::mt19937 rng(2);
  std::vector<uint32_t> in(999);
  for (auto& u : in) u = static_cast<uint32_t>(rng());
  CodecParams p = params(CodecId::kQuantize);
  p.quantize.mode = BoundMode::kAbs;
  p.quantize.error_bound = 1e-30;
  auto frame = encode(Dtype::kFloat32, in.data(), in.size(), p);
  FrameInfo info{};
  ASSERT_TRUE(peek_frame(frame, &info).ok());
  EXPECT_EQ(info.codec, CodecId::kStored);
  EXPECT_EQ(frame.size(), max_frame_bytes({Dtype::kFloat32, in.data(), in.size(), &p, nullptr}));
  std::vector<uint8_t> out;
  ASSERT_TRUE(decode_guarded(frame, in.size() * 4, &out).ok());
  EXPECT_EQ(0, std::memcmp(out.data(), in.data(), out.size()));
}

TEST(Frame, EveryCodecFitsInMaxFrameBytes) {
  const auto v = testdata::make_floats(testdata::Dist::kGaussian, 4099, 3);
  for (CodecId c : {CodecId::kStored, CodecId::kQuantize, CodecId::kCast}) {
    auto frame = encode(Dtype::kFloat32, v.data(), v.size(), params(c, true));
    EXPECT_LE(frame.size(), kFrameHeaderBytes + v.size() * 4);
    EXPECT_TRUE(decode_guarded(frame, v.size() * 4).ok()) << codec_name(c);
  }
}

TEST(Frame, RejectsBadRequests) {
  const std::vector<float> v(10, 1.0f);
  std::vector<uint8_t> dst(1024);
  std::size_t n = 0;
  CodecParams p = params(CodecId::kStored);
  EXPECT_EQ(encode_frame({Dtype::kFloat32, nullptr, 10, &p, nullptr}, dst, &n).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(encode_frame({static_cast<Dtype>(9), v.data(), 10, &p, nullptr}, dst, &n).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(encode_frame(
                {Dtype::kFloat32, v.data(), std::numeric_limits<uint64_t>::max() / 2, &p, nullptr},
                dst, &n)
                .code(),
            Status::Code::kInvalidArgument);
  CodecParams bad = params(static_cast<CodecId>(77));
  EXPECT_EQ(encode_frame({Dtype::kFloat32, v.data(), 10, &bad, nullptr}, dst, &n).code(),
            Status::Code::kInvalidArgument);
  CodecParams cast = params(CodecId::kCast);
  EXPECT_EQ(encode_frame({Dtype::kBfloat16, v.data(), 10, &cast, nullptr}, dst, &n).code(),
            Status::Code::kInvalidArgument);
  testdata::Guarded small(kFrameHeaderBytes + 39);  // one byte short of a stored frame
  EXPECT_EQ(encode_frame({Dtype::kFloat32, v.data(), 10, &p, nullptr}, small.span(), &n).code(),
            Status::Code::kNoSpace);
  EXPECT_TRUE(small.guards_intact());
}

TEST(Frame, TruncationAtEveryLengthIsRejected) {
  const auto v = testdata::make_floats(testdata::Dist::kGaussian, 200, 4);
  for (CodecId c : {CodecId::kStored, CodecId::kQuantize, CodecId::kCast}) {
    const auto frame = encode(Dtype::kFloat32, v.data(), v.size(), params(c));
    for (std::size_t len = 0; len < frame.size(); ++len) {
      Status st = decode_guarded(std::span(frame.data(), len), v.size() * 4);
      EXPECT_EQ(st.code(), Status::Code::kTruncated)
          << codec_name(c) << " len " << len << ": " << st.message();
    }
    std::vector<uint8_t> longer = frame;
    longer.push_back(0);
    Status st = decode_guarded(longer, v.size() * 4);
    EXPECT_EQ(st.code(), Status::Code::kCorrupt);
    EXPECT_NE(st.message().find("trailing"), std::string::npos) << st.message();
  }
}

TEST(Frame, TruncationErrorNamesTheFieldAndOffset) {
  const std::vector<uint8_t> in(1234, 7);
  const auto frame = encode(Dtype::kBytes, in.data(), in.size(), params(CodecId::kStored));
  Status st = decode_guarded(std::span(frame.data(), kFrameHeaderBytes + 1000), in.size());
  EXPECT_EQ(st.message(), "frame: body_bytes 1234 at offset 24 exceeds remaining 1000");
}

TEST(Frame, FlippedBitInAnyHeaderByteIsRejected) {
  const auto v = testdata::make_floats(testdata::Dist::kUniform, 100, 5);
  const auto frame = encode(Dtype::kFloat32, v.data(), v.size(), params(CodecId::kQuantize));
  for (std::size_t byte = 0; byte < kFrameHeaderBytes; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      auto f = frame;
      f[byte] ^= static_cast<uint8_t>(1u << bit);
      Status st = decode_guarded(f, v.size() * 4);
      EXPECT_FALSE(st.ok()) << "byte " << byte << " bit " << bit;
      FrameInfo info{};
      EXPECT_FALSE(peek_frame(f, &info).ok()) << "byte " << byte << " bit " << bit;
    }
  }
}

// Rewrites a header field and fixes the header CRC, so the field's own check must fire.
std::vector<uint8_t> with_field(std::vector<uint8_t> f, std::size_t off, uint64_t v,
                                std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) f[off + i] = static_cast<uint8_t>(v >> (8 * i));
  store_le32(f.data() + 36, crc32c(f.data(), 36));
  return f;
}

TEST(Frame, InconsistentFieldsAreRejectedWithTheirName) {
  const std::vector<float> v(50, 2.0f);
  const auto frame = encode(Dtype::kFloat32, v.data(), v.size(), params(CodecId::kStored));
  struct Case {
    std::size_t off, width;
    uint64_t value;
    const char* expect;
  };
  const Case cases[] = {
      {8, 8, 51, "original_bytes 200 at offset 16"},                // count
      {16, 8, 204, "original_bytes 204 at offset 16"},              // original
      {8, 8, (1ull << 62) + 50, "original_bytes"},                  // count*4 overflows
      {24, 8, std::numeric_limits<uint64_t>::max(), "body_bytes"},  // huge body
      {24, 8, 199, "trailing"},                                     // body too short
      {5, 1, 9, "unknown codec 9 at offset 5"},
      {6, 1, 4, "unknown dtype 4 at offset 6"},
      {7, 1, 2, "unknown flags 2 at offset 7"},
      {32, 4, 5, "body checksum at offset 32"},
      {4, 1, 2, "version 2 at offset 4"},
      {0, 4, 0x12345678, "bad magic"},
  };
  for (const Case& c : cases) {
    Status st = decode_guarded(with_field(frame, c.off, c.value, c.width), v.size() * 4);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find(c.expect), std::string::npos)
        << "want '" << c.expect << "' in: " << st.message();
  }
  // A stored body whose size disagrees with original_bytes is the body's error.
  auto f = with_field(frame, 24, 196, 8);
  f.resize(f.size() - 4);
  Status st = decode_guarded(f, v.size() * 4);
  EXPECT_EQ(st.code(), Status::Code::kCorrupt);
  EXPECT_NE(st.message().find("stored"), std::string::npos) << st.message();
}

TEST(Frame, ChecksumCatchesBodyCorruption) {
  const auto v = testdata::make_floats(testdata::Dist::kGaussian, 300, 6);
  for (CodecId c : {CodecId::kStored, CodecId::kQuantize, CodecId::kCast}) {
    const auto frame = encode(Dtype::kFloat32, v.data(), v.size(), params(c, true));
    for (std::size_t i = kFrameHeaderBytes; i < frame.size(); i += 13) {
      auto f = frame;
      f[i] ^= 0x10;
      Status st = decode_guarded(f, v.size() * 4);
      EXPECT_EQ(st.code(), Status::Code::kCorrupt) << codec_name(c) << " byte " << i;
      EXPECT_NE(st.message().find("checksum"), std::string::npos) << st.message();
    }
  }
}

TEST(Frame, CorruptBodiesWithoutChecksumNeverWriteOutOfBounds) {
  const auto v = testdata::make_floats(testdata::Dist::kGaussian, 300, 8);
  for (CodecId c : {CodecId::kQuantize, CodecId::kCast}) {
    CodecParams p = params(c);
    p.quantize.row_length = 10;
    p.quantize.dedupe_rows = true;
    const auto frame = encode(Dtype::kFloat32, v.data(), v.size(), p);
    std::mt19937 rng(9);
    for (int t = 0; t < 3000; ++t) {
      auto f = frame;
      const std::size_t i = kFrameHeaderBytes + rng() % (f.size() - kFrameHeaderBytes);
      f[i] = static_cast<uint8_t>(rng());
      decode_guarded(f, v.size() * 4);  // may or may not be valid; guards are checked inside
    }
  }
}

TEST(Frame, SmallDestinationIsRejectedBeforeWriting) {
  const std::vector<float> v(16, 1.5f);
  const auto frame = encode(Dtype::kFloat32, v.data(), v.size(), params(CodecId::kStored));
  Status st = decode_guarded(frame, 63);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("dst holds 63"), std::string::npos) << st.message();
  EXPECT_TRUE(decode_guarded(frame, 100).ok());  // larger is fine; only 64 bytes are written
}

TEST(Frame, SixtyFourMiBStoredWithChecksum) {
  std::vector<uint8_t> in(64u << 20);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  const auto frame = encode(Dtype::kBytes, in.data(), in.size(), params(CodecId::kStored, true));
  std::vector<uint8_t> out;
  ASSERT_TRUE(decode_guarded(frame, in.size(), &out).ok());
  EXPECT_TRUE(out == in);
}

}  // namespace
}  // namespace squeeze::compress

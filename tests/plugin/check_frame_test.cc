// check_frame (plugin/engine/codec_jobs.h): the one check of a received frame against the
// message header that carried it, before any decode writes. Every decode path calls it: the
// host decode job (codec_jobs.cc), GPU staging's host destinations and GPU frames
// (engine/gpu/recv.cc, which needs a GPU to run) and the collective network (collnet). Issue 27
// found the GPU path's host destinations once skipped the original_bytes comparison; it runs
// here on the CPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "plugin/engine/codec_jobs.h"
#include "transport/transport.h"

namespace squeeze::plugin {
namespace {

std::vector<uint8_t> frame_of(const std::vector<float>& v, compress::CodecId codec) {
  compress::CodecParams p;
  p.codec = codec;
  compress::EncodeRequest req{compress::Dtype::kFloat32, v.data(), v.size(), &p, nullptr};
  std::vector<uint8_t> frame(compress::max_frame_bytes(req));
  std::size_t n = 0;
  EXPECT_TRUE(compress::encode_frame(req, frame, &n).ok());
  frame.resize(n);
  return frame;
}

transport::Received received(const std::vector<uint8_t>& frame, uint64_t original_bytes) {
  transport::Received got;
  got.header =
      transport::MessageHeader{7, transport::PayloadKind::kFrame, frame.size(), original_bytes};
  got.staged = {frame.data(), frame.size()};
  return got;
}

TEST(CheckFrame, AcceptsAFrameThatMatchesItsHeader) {
  const std::vector<float> v(1000, 1.5f);
  for (compress::CodecId c : {compress::CodecId::kStored, compress::CodecId::kLossless}) {
    const std::vector<uint8_t> frame = frame_of(v, c);
    compress::FrameInfo info{};
    const compress::Status s = check_frame(received(frame, v.size() * 4), &info);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(info.original_bytes, v.size() * 4);
    EXPECT_EQ(info.frame_bytes, frame.size());
  }
}

// The message header says one size and the frame decodes to another: a corrupt (or hostile)
// peer. Without this check a host destination sized by the header could be written past.
TEST(CheckFrame, RejectsOriginalBytesThatDisagreeWithTheMessageHeader) {
  const std::vector<float> v(1000, 1.5f);
  const std::vector<uint8_t> frame = frame_of(v, compress::CodecId::kStored);
  for (uint64_t said : {uint64_t{0}, uint64_t{3999}, uint64_t{4001}, uint64_t{1} << 40}) {
    compress::FrameInfo info{};
    const compress::Status s = check_frame(received(frame, said), &info);
    ASSERT_FALSE(s.ok()) << said;
    EXPECT_EQ(s.code(), compress::Status::Code::kCorrupt);
    EXPECT_NE(s.message().find("frame decodes to 4000 bytes but the message header says " +
                               std::to_string(said)),
              std::string::npos)
        << s.message();
  }
}

TEST(CheckFrame, RejectsAFrameWhoseSizeIsNotWhatArrived) {
  const std::vector<float> v(1000, 1.5f);
  std::vector<uint8_t> frame = frame_of(v, compress::CodecId::kStored);
  const std::size_t whole = frame.size();
  frame.push_back(0);  // one byte more arrived than the frame says
  compress::FrameInfo info{};
  compress::Status s = check_frame(received(frame, 4000), &info);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), compress::Status::Code::kCorrupt);
  EXPECT_NE(
      s.message().find(std::to_string(whole) + " bytes, " + std::to_string(whole + 1) + " arrived"),
      std::string::npos)
      << s.message();
  frame.resize(whole - 1);  // one byte fewer
  s = check_frame(received(frame, 4000), &info);
  EXPECT_FALSE(s.ok());
}

TEST(CheckFrame, RejectsGarbageAndATruncatedHeader) {
  std::vector<uint8_t> junk(100, 0xab);
  compress::FrameInfo info{};
  EXPECT_FALSE(check_frame(received(junk, 100), &info).ok());
  std::vector<uint8_t> frame = frame_of(std::vector<float>(10, 1.0f), compress::CodecId::kStored);
  frame.resize(compress::kFrameHeaderBytes - 1);
  EXPECT_FALSE(check_frame(received(frame, 40), &info).ok());
}

}  // namespace
}  // namespace squeeze::plugin

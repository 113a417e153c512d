// Dtype and codec names round-trip, sizes are right, and unknown names are refused.
#include <gtest/gtest.h>

#include <string>

#include "compress/codec.h"

namespace squeeze::compress {
namespace {

TEST(Dtype, SizesNamesAndParsing) {
  EXPECT_EQ(dtype_size(Dtype::kBytes), 1u);
  EXPECT_EQ(dtype_size(Dtype::kFloat32), 4u);
  EXPECT_EQ(dtype_size(Dtype::kBfloat16), 2u);
  EXPECT_EQ(dtype_size(Dtype::kFloat16), 2u);
  EXPECT_EQ(dtype_size(static_cast<Dtype>(4)), 0u);
  for (Dtype d : {Dtype::kBytes, Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    Dtype back = Dtype::kBytes;
    ASSERT_TRUE(parse_dtype(dtype_name(d), &back)) << dtype_name(d);
    EXPECT_EQ(back, d);
  }
  EXPECT_STREQ(dtype_name(Dtype::kBfloat16), "bfloat16");
  EXPECT_STREQ(dtype_name(static_cast<Dtype>(200)), "unknown");
  Dtype d = Dtype::kBytes;
  EXPECT_TRUE(parse_dtype("ncclBfloat16", &d));
  EXPECT_EQ(d, Dtype::kBfloat16);
  EXPECT_TRUE(parse_dtype("fp16", &d));
  EXPECT_EQ(d, Dtype::kFloat16);
  EXPECT_TRUE(parse_dtype("ncclFloat32", &d));
  EXPECT_EQ(d, Dtype::kFloat32);
  d = Dtype::kFloat16;
  EXPECT_FALSE(parse_dtype("float64", &d));
  EXPECT_FALSE(parse_dtype("", &d));
  EXPECT_FALSE(parse_dtype("Float32", &d));
  EXPECT_EQ(d, Dtype::kFloat16);  // untouched on failure
  EXPECT_TRUE(is_float(Dtype::kFloat16));
  EXPECT_FALSE(is_float(Dtype::kBytes));
}

TEST(Codec, NamesAndParsing) {
  for (CodecId c : {CodecId::kStored, CodecId::kQuantize, CodecId::kThreshold, CodecId::kLossless,
                    CodecId::kCast}) {
    CodecId back = CodecId::kStored;
    ASSERT_TRUE(parse_codec(codec_name(c), &back)) << codec_name(c);
    EXPECT_EQ(back, c);
  }
  EXPECT_STREQ(codec_name(CodecId::kQuantize), "quantize");
  EXPECT_STREQ(codec_name(static_cast<CodecId>(5)), "unknown");
  CodecId c = CodecId::kCast;
  EXPECT_FALSE(parse_codec("zstd", &c));
  EXPECT_EQ(c, CodecId::kCast);
  EXPECT_TRUE(is_lossy(CodecId::kCast));
  EXPECT_FALSE(is_lossy(CodecId::kLossless));
}

}  // namespace
}  // namespace squeeze::compress

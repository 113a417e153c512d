// CRC32C against the published check value and the RFC 3720 (iSCSI) test vectors; the
// hardware and table paths agree at every length and alignment; extension composes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "compress/crc32c.h"
#include "compress/crc32c_combine.h"

namespace squeeze::compress {
namespace {

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  uint8_t buf[32];
  std::memset(buf, 0, 32);
  EXPECT_EQ(crc32c(buf, 32), 0x8A9136AAu);
  std::memset(buf, 0xff, 32);
  EXPECT_EQ(crc32c(buf, 32), 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(crc32c(buf, 32), 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(31 - i);
  EXPECT_EQ(crc32c(buf, 32), 0x113FDB5Cu);
  EXPECT_EQ(crc32c_extend_portable(0, "123456789", 9), 0xE3069283u);
}

TEST(Crc32c, HardwareAndPortableAgreeAndExtensionComposes) {
  std::mt19937 rng(3);
  std::vector<uint8_t> data(4096 + 16);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (std::size_t off = 0; off < 8; ++off) {
    for (std::size_t len = 0; len < 300; ++len) {
      const uint8_t* p = data.data() + off;
      const uint32_t a = crc32c(p, len);
      ASSERT_EQ(a, crc32c_extend_portable(0, p, len)) << off << " " << len;
      const std::size_t cut = len / 3;
      ASSERT_EQ(crc32c_extend(crc32c(p, cut), p + cut, len - cut), a);
    }
  }
  EXPECT_EQ(crc32c(data.data(), 4096), crc32c_extend_portable(0, data.data(), 4096));
  std::printf("crc32c hardware accelerated: %s\n", crc32c_hardware_accelerated() ? "yes" : "no");
}

TEST(Crc32c, CombineOfPartsEqualsCrcOfWhole) {
  std::mt19937 rng(4);
  std::vector<uint8_t> data(20000);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (std::size_t cut : {0u, 1u, 7u, 4096u, 12345u, 20000u}) {
    const uint32_t a = crc32c(data.data(), cut);
    const uint32_t b = crc32c(data.data() + cut, data.size() - cut);
    EXPECT_EQ(crc32c_combine(a, b, data.size() - cut), crc32c(data.data(), data.size())) << cut;
  }
  uint32_t folded = crc32c(data.data(), 0);  // fold 4 KiB chunks in order, as the GPU does
  for (std::size_t off = 0; off < data.size(); off += 4096) {
    const std::size_t len = std::min<std::size_t>(4096, data.size() - off);
    folded = crc32c_combine(folded, crc32c(data.data() + off, len), len);
  }
  EXPECT_EQ(folded, crc32c(data.data(), data.size()));
}

}  // namespace
}  // namespace squeeze::compress

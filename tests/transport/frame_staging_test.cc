// The receivers' frame staging: a frame handed up is exactly the bytes received into it,
// whatever sizes came before on the same slot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "transport/frame_staging.h"

namespace squeeze::transport {
namespace {

std::vector<uint8_t> pattern(std::size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + 31 * i);
  return v;
}

TEST(FrameStaging, EachFrameIsExactlyWhatWasReceivedIntoIt) {
  FrameStaging st;
  EXPECT_TRUE(st.frame().empty());
  for (std::size_t n : {100u, 40u, 100u, 5000u, 1u, 4999u, 0u, 70000u}) {
    const std::vector<uint8_t> want = pattern(n, static_cast<uint8_t>(n));
    uint8_t* at = st.prepare(n);
    if (n != 0) std::memcpy(at, want.data(), n);  // the receive
    const auto got = st.frame();
    ASSERT_EQ(got.size(), n);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << n;
    st.clear();
    EXPECT_TRUE(st.frame().empty());
  }
}

TEST(FrameStaging, KeepsItsBufferForFramesThatFit) {
  FrameStaging st;
  uint8_t* big = st.prepare(4096);
  EXPECT_EQ(st.prepare(10), big);
  st.clear();
  EXPECT_EQ(st.prepare(4096), big);
}

}  // namespace
}  // namespace squeeze::transport

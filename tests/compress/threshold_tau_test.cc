// tau's search against its definition: the (1 - keep)-quantile of the finite magnitudes of x + r
// at threshold_sample_position's positions (the CUDA twin's), whatever the stride.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "compress/threshold.h"
#include "compress/threshold_sample.h"

namespace squeeze::compress {
namespace {

float tau_by_definition(const std::vector<float>& x, const std::vector<float>* r, double keep,
                        uint32_t sample_size) {
  std::vector<float> mags;
  const uint64_t n = threshold_sample_count(x.size(), sample_size);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t pos = threshold_sample_position(i, x.size(), sample_size);
    const float y = r != nullptr ? x[pos] + (*r)[pos] : x[pos];
    if (std::isfinite(y)) mags.push_back(std::fabs(y));
  }
  if (mags.empty()) return std::numeric_limits<float>::infinity();
  auto nth =
      mags.begin() + static_cast<std::ptrdiff_t>(threshold_quantile_index(mags.size(), keep));
  std::nth_element(mags.begin(), nth, mags.end());
  return std::max(*nth, std::numeric_limits<float>::denorm_min());
}

TEST(ThresholdTau, SamplesTheDefinitionsPositionsAtEveryStride) {
  std::mt19937 rng(11);
  std::normal_distribution<float> g(0.0f, 1.0f);
  // Strides 1 (every element), 8 and 64 (powers of two), 3, 7 and 12 (not).
  for (std::size_t count : {4096u, 32768u, 262144u, 12288u, 28672u, 49152u, 5000u, 100u}) {
    std::vector<float> x(count), r(count);
    for (float& v : x) v = g(rng);
    for (float& v : r) v = 0.3f * g(rng);
    x[count / 2] = std::numeric_limits<float>::quiet_NaN();
    for (double keep : {0.01, 0.1, 0.5}) {
      const std::vector<float>* const with_r[] = {nullptr, &r};
      for (const std::vector<float>* res : with_r) {
        const float want = tau_by_definition(x, res, keep, 4096);
        const float got = threshold_estimate_tau(
            Dtype::kFloat32, x.data(), res != nullptr ? res->data() : nullptr, count, keep, 4096);
        EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want))
            << "count " << count << " keep " << keep << (res != nullptr ? " with r" : "");
      }
    }
  }
}

}  // namespace
}  // namespace squeeze::compress

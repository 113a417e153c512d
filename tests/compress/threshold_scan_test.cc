// The threshold scans' vector loops against the plain definition: the same positions, the same
// y = x + r bits, the same early stop, for every length around the vector width and for the
// values an IEEE compare gets wrong (NaN, +-Inf, -0, denormals).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "compress/threshold_scan.h"

namespace squeeze::compress {
namespace {

struct Scan {
  std::vector<uint64_t> kept;
  std::vector<uint32_t> y;  // bits
  bool fits = true;
};

// The definition, one element at a time.
Scan reference(const std::vector<float>& x, const std::vector<float>* r, uint32_t tau_bits,
               uint64_t max_kept) {
  Scan s;
  for (std::size_t i = 0; i < x.size(); ++i) {
    float y = x[i];
    if (r != nullptr) y += (*r)[i];
    s.y.push_back(std::bit_cast<uint32_t>(y));
    if ((std::bit_cast<uint32_t>(y) & 0x7fffffffu) >= tau_bits) s.kept.push_back(i);
  }
  s.fits = s.kept.size() <= max_kept;
  return s;
}

std::vector<float> awkward(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            -0.0f,
                            0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max()};
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = rng() % 16 == 0 ? specials[rng() % std::size(specials)] : g(rng);
  return v;
}

TEST(ThresholdScan, FeedbackListsWhatTheDefinitionListsAtEveryLength) {
  const uint32_t taus[] = {1u, std::bit_cast<uint32_t>(0.5f), std::bit_cast<uint32_t>(2.5f),
                           std::bit_cast<uint32_t>(std::numeric_limits<float>::infinity())};
  for (std::size_t n : {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 1000, 4099}) {
    const std::vector<float> x = awkward(n, static_cast<uint32_t>(n) + 1);
    const std::vector<float> r = awkward(n, static_cast<uint32_t>(n) + 7);
    for (uint32_t tau : taus) {
      const std::vector<float>* const with_r[] = {nullptr, &r};
      for (const std::vector<float>* res : with_r) {
        const Scan want = reference(x, res, tau, n);
        std::vector<float> ybuf(n);
        std::vector<uint64_t> kept;
        const bool fits = threshold_scan_feedback(
            Dtype::kFloat32, reinterpret_cast<const uint8_t*>(x.data()),
            res != nullptr ? res->data() : nullptr, n, tau, n, ybuf.data(), &kept);
        ASSERT_TRUE(fits) << "n " << n;
        EXPECT_EQ(kept, want.kept) << "n " << n << " tau bits " << tau;
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(ybuf[i]), want.y[i]) << "y[" << i << "] of " << n;
        // The plain scan (no feedback) agrees where r is null.
        if (res == nullptr) {
          std::vector<uint64_t> plain;
          ASSERT_TRUE(
              threshold_scan_f32(reinterpret_cast<const uint8_t*>(x.data()), n, tau, n, &plain));
          EXPECT_EQ(plain, want.kept);
        }
      }
    }
  }
}

TEST(ThresholdScan, FeedbackStopsOnceMoreThanMaxKeptAreListed) {
  const std::size_t n = 1000;
  const std::vector<float> x = awkward(n, 3), r = awkward(n, 4);
  const uint32_t tau = std::bit_cast<uint32_t>(0.5f);
  const Scan all = reference(x, &r, tau, n);
  ASSERT_GT(all.kept.size(), 10u);
  std::vector<float> ybuf(n);
  std::vector<uint64_t> kept;
  EXPECT_FALSE(threshold_scan_feedback(Dtype::kFloat32, reinterpret_cast<const uint8_t*>(x.data()),
                                       r.data(), n, tau, all.kept.size() - 1, ybuf.data(), &kept));
  kept.clear();
  EXPECT_TRUE(threshold_scan_feedback(Dtype::kFloat32, reinterpret_cast<const uint8_t*>(x.data()),
                                      r.data(), n, tau, all.kept.size(), ybuf.data(), &kept));
  EXPECT_EQ(kept, all.kept);
}

}  // namespace
}  // namespace squeeze::compress

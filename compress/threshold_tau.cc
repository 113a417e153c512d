// tau estimation for the threshold codec: the (1 - keep)-quantile of the finite magnitudes
// in a deterministic sample (compress/threshold_sample.h), found with std::nth_element.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "compress/threshold.h"
#include "compress/threshold_sample.h"
#include "compress/threshold_values.h"

namespace squeeze::compress {

float threshold_estimate_tau(Dtype dtype, const void* src, const float* residual, uint64_t count,
                             double keep, uint32_t sample_size) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (count == 0 || sample_size == 0 || !is_float(dtype)) return kInf;
  const auto* base = static_cast<const uint8_t*>(src);
  const uint64_t n = threshold_sample_count(count, sample_size);
  std::vector<float> mags;
  mags.reserve(static_cast<std::size_t>(n));
  // threshold_sample_position's positions, with its two divisions per sample hoisted: the
  // stride once, and splitmix64(i) % stride as a mask where the stride is a power of two (a
  // CollNet piece of 32768 elements sampled 4096 times has stride 8). Same positions, so the
  // same tau as the CUDA twin's; the divisions were most of the search's time.
  const uint64_t stride = count <= sample_size ? 0 : count / sample_size;
  const bool pow2 = stride != 0 && (stride & (stride - 1)) == 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t pos = stride == 0 ? i
                         : pow2      ? i * stride + (splitmix64(i) & (stride - 1))
                                     : i * stride + splitmix64(i) % stride;
    float y = load_as_float(dtype, base, pos);
    if (residual != nullptr) y += residual[pos];
    if (std::isfinite(y)) mags.push_back(std::fabs(y));
  }
  if (mags.empty()) return kInf;
  const uint64_t idx = threshold_quantile_index(mags.size(), keep);
  auto nth = mags.begin() + static_cast<std::ptrdiff_t>(idx);
  std::nth_element(mags.begin(), nth, mags.end());
  return std::max(*nth, std::numeric_limits<float>::denorm_min());
}

}  // namespace squeeze::compress

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
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t pos = threshold_sample_position(i, count, sample_size);
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

// Traffic generators (see traffic_gen.h). A small SplitMix64-based generator keeps them
// fast and identical on every platform (std distributions are implementation-defined).
#include "perf/common/traffic_gen.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "compress/half.h"

namespace squeeze::perf {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u = 1.0 - uniform(), v = uniform();
    const double r = std::sqrt(-2.0 * std::log(u));
    spare_ = r * std::sin(2.0 * std::numbers::pi * v);
    has_spare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * v);
  }

 private:
  uint64_t s_;
  double spare_ = 0;
  bool has_spare_ = false;
};

uint64_t mix(uint64_t a, uint64_t b) {
  Rng r(a * 0xD6E8FEB86659FD93ull ^ b);
  return r.next();
}

// Zipf(alpha) over ranks 0..n-1 by inverse CDF.
class Zipf {
 public:
  Zipf(std::size_t n, double alpha) : cdf_(n) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i)
      cdf_[i] = (sum += std::pow(static_cast<double>(i + 1), -alpha));
    for (double& c : cdf_) c /= sum;
  }
  std::size_t draw(Rng* rng) const {
    const double u = rng->uniform();
    const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
    return std::min<std::size_t>(static_cast<std::size_t>(it - cdf_.begin()), cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
};

void embeddings(std::size_t bytes, uint64_t seed, uint32_t dim, Traffic* t) {
  static const std::size_t kRows[] = {1000, 10000, 100000, 1000000, 1000000, 100000, 10000, 1000};
  constexpr std::size_t kTables = sizeof kRows / sizeof kRows[0];
  const std::size_t batch = std::max<std::size_t>(1, bytes / (kTables * dim * 4));
  std::vector<Zipf> zipf;
  for (std::size_t n : kRows) zipf.emplace_back(n, 1.05);
  Rng rng(seed);
  t->row_length = dim;
  t->values.resize(batch * kTables * dim);
  float* out = t->values.data();
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t k = 0; k < kTables; ++k) {
      const double scale = 0.025 * std::pow(4.0, static_cast<double>(k % 4) / 3.0);  // 0.025 .. 0.1
      const uint64_t item = mix(k, zipf[k].draw(&rng)) % kRows[k];  // popular ranks scatter
      Rng row(mix(seed ^ (k << 40), item));
      for (uint32_t d = 0; d < dim; ++d) *out++ = static_cast<float>(scale * row.normal());
    }
  }
}

// Student-t(3) scaled: scale times a normal over the root of a chi-square(3) / 3.
double student_t3(Rng& rng, double scale) {
  const double a = rng.normal(), b = rng.normal(), c = rng.normal();
  const double chi = std::sqrt((a * a + b * b + c * c) / 3.0);
  return scale * rng.normal() / chi;
}

// step > 0: the same layers and scales as step 0 (the main stream is drawn exactly as then),
// the noise from a stream of its own.
void gradients(std::size_t bytes, uint64_t seed, uint64_t step, Traffic* t) {
  Rng rng(seed);
  Rng noise(seed ^ (step * 0xD1B54A32D192ED03ull));
  t->values.resize(std::max<std::size_t>(1, bytes / 4));
  std::size_t i = 0;
  while (i < t->values.size()) {
    const std::size_t layer = 4096 + static_cast<std::size_t>(rng.next() % 61441);
    const double scale = std::pow(10.0, -4.0 + 2.0 * rng.uniform());
    for (std::size_t j = 0; j < layer && i < t->values.size(); ++j, ++i) {
      const double x = student_t3(rng, scale);
      t->values[i] = static_cast<float>(step == 0 ? x : student_t3(noise, scale));
    }
  }
}

void sparse_grads(std::size_t bytes, uint64_t seed, Traffic* t) {
  const uint32_t dim = 64;
  const std::size_t rows = std::max<std::size_t>(1, bytes / (4 * dim));
  Rng rng(seed);
  t->row_length = dim;
  t->values.assign(rows * dim, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    if (rng.uniform() >= 0.05) continue;
    for (uint32_t d = 0; d < dim; ++d)
      t->values[r * dim + d] = static_cast<float>(1e-3 * rng.normal());
  }
}

void activations(std::size_t bytes, uint64_t seed, Traffic* t) {
  Rng rng(seed);
  t->values.resize(std::max<std::size_t>(1, bytes / 4));
  for (float& v : t->values) v = static_cast<float>(std::max(0.0, 0.1 + rng.normal()));
}

}  // namespace

const std::vector<std::string>& traffic_names() {
  static const std::vector<std::string> names = {"embeddings", "embeddings128", "gradients",
                                                 "sparse_grads", "activations"};
  return names;
}

bool make_traffic(const std::string& name, std::size_t bytes, uint64_t seed, Traffic* out,
                  uint64_t step) {
  out->name = name;
  out->row_length = 0;
  out->values.clear();
  // Only the gradients keep their layout from step to step; other data sets draw anew.
  if (step != 0 && name != "gradients") seed ^= step * 0xD1B54A32D192ED03ull;
  if (name == "embeddings") {
    embeddings(bytes, seed, 64, out);
  } else if (name == "embeddings128") {
    embeddings(bytes, seed, 128, out);
  } else if (name == "gradients") {
    gradients(bytes, seed, step, out);
  } else if (name == "sparse_grads") {
    sparse_grads(bytes, seed, out);
  } else if (name == "activations") {
    activations(bytes, seed, out);
  } else {
    return false;
  }
  return true;
}

std::vector<uint8_t> to_dtype(const std::vector<float>& v, compress::Dtype d) {
  std::vector<uint8_t> out(v.size() * compress::dtype_size(d));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (d == compress::Dtype::kFloat32) {
      std::memcpy(&out[4 * i], &v[i], 4);
    } else {
      const uint16_t h = d == compress::Dtype::kBfloat16 ? compress::f32_to_bf16(v[i])
                                                         : compress::f32_to_f16(v[i]);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

}  // namespace squeeze::perf

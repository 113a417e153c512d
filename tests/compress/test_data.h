// Shared test data for codec tests (header-only): deterministic float distributions, dtype
// conversion, element access and guarded destination buffers.
//
//   auto v = testdata::make_floats(testdata::Dist::kGaussian, 1000, /*seed=*/1);
//   auto bytes = testdata::to_dtype(v, Dtype::kBfloat16);
//   testdata::Guarded out(bytes.size());        // guard bytes before and after
//   decode_frame(frame, out.span(), &n);  EXPECT_TRUE(out.guards_intact());
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/float_element.h"
#include "compress/half.h"

namespace squeeze::testdata {

using compress::Dtype;

enum class Dist {
  kGaussian,     // N(0, 1)
  kUniform,      // U(-1, 1)
  kHeavyTailed,  // Student-t with 1.5 degrees of freedom: rare huge values
  kConstant,     // every element 3.25
  kZero,         // all +0
  kSparse,       // 99% zero, the rest N(0, 1)
  kSpecial,      // Gaussian sprinkled with NaN, +-Inf, -0, denormals, FLT_MAX
  kOffset,       // 1000 + U(0, 1): far from zero, narrow range
  kDenormal,     // float32 subnormals only
};

inline const std::vector<Dist>& all_dists() {
  static const std::vector<Dist> d = {Dist::kGaussian, Dist::kUniform, Dist::kHeavyTailed,
                                      Dist::kConstant, Dist::kZero,    Dist::kSparse,
                                      Dist::kSpecial,  Dist::kOffset,  Dist::kDenormal};
  return d;
}

inline std::string dist_name(Dist d) {
  switch (d) {
    case Dist::kGaussian: return "gaussian";
    case Dist::kUniform: return "uniform";
    case Dist::kHeavyTailed: return "heavy";
    case Dist::kConstant: return "constant";
    case Dist::kZero: return "zero";
    case Dist::kSparse: return "sparse";
    case Dist::kSpecial: return "special";
    case Dist::kOffset: return "offset";
    case Dist::kDenormal: return "denormal";
  }
  return "?";
}

inline std::vector<float> make_floats(Dist d, std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(d));
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::student_t_distribution<float> heavy(1.5f);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (d) {
      case Dist::kGaussian: v[i] = gauss(rng); break;
      case Dist::kUniform: v[i] = uni(rng); break;
      case Dist::kHeavyTailed: v[i] = heavy(rng); break;
      case Dist::kConstant: v[i] = 3.25f; break;
      case Dist::kZero: v[i] = 0.0f; break;
      case Dist::kSparse: v[i] = (rng() % 100 == 0) ? gauss(rng) : 0.0f; break;
      case Dist::kOffset: v[i] = 1000.0f + (uni(rng) + 1.0f) * 0.5f; break;
      case Dist::kDenormal:
        v[i] = uni(rng) * std::numeric_limits<float>::denorm_min() * 1e6f;
        break;
      case Dist::kSpecial: {
        static const float kSpecials[] = {std::numeric_limits<float>::quiet_NaN(),
                                          std::numeric_limits<float>::infinity(),
                                          -std::numeric_limits<float>::infinity(),
                                          -0.0f,
                                          std::numeric_limits<float>::denorm_min(),
                                          -std::numeric_limits<float>::denorm_min() * 77.0f,
                                          std::numeric_limits<float>::max(),
                                          -std::numeric_limits<float>::max(),
                                          compress::f32_from_bits(0x7fa00001u)};  // signaling NaN
        const uint64_t r = rng();
        v[i] = (r % 10 == 0) ? kSpecials[(r / 10) % 9] : gauss(rng);
        break;
      }
    }
  }
  return v;
}

// Bytes of the values in dtype d (bf16/fp16 rounded to nearest even).
inline std::vector<uint8_t> to_dtype(const std::vector<float>& v, Dtype d) {
  std::vector<uint8_t> out(v.size() * compress::dtype_size(d));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (d == Dtype::kFloat32) {
      std::memcpy(&out[4 * i], &v[i], 4);
    } else {
      const uint16_t h =
          d == Dtype::kBfloat16 ? compress::f32_to_bf16(v[i]) : compress::f32_to_f16(v[i]);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

// Element i of a float buffer in dtype d, widened to float.
inline float element(const uint8_t* data, Dtype d, std::size_t i) {
  return compress::float_element(data, d, i);
}

// Raw bits of element i (for exact NaN/Inf pass-through checks).
inline uint32_t element_bits(const uint8_t* data, Dtype d, std::size_t i) {
  uint32_t u = 0;
  std::memcpy(&u, data + i * compress::dtype_size(d), compress::dtype_size(d));
  return u;
}

// A destination with kGuard bytes of a known pattern on each side.
class Guarded {
 public:
  static constexpr std::size_t kGuard = 64;
  static constexpr uint8_t kPattern = 0xA5;
  explicit Guarded(std::size_t n) : buf_(n + 2 * kGuard, kPattern), n_(n) {}
  std::span<uint8_t> span() { return {buf_.data() + kGuard, n_}; }
  uint8_t* data() { return buf_.data() + kGuard; }
  bool guards_intact() const {
    for (std::size_t i = 0; i < kGuard; ++i) {
      if (buf_[i] != kPattern || buf_[kGuard + n_ + i] != kPattern) return false;
    }
    return true;
  }

 private:
  std::vector<uint8_t> buf_;
  std::size_t n_;
};

}  // namespace squeeze::testdata

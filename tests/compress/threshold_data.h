// Small deterministic data generators for the threshold and lossless codec tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "compress/codec.h"
#include "compress/float_element.h"
#include "compress/half.h"

namespace squeeze::compress::testgen {

// count gaussian floats (mean 0, stddev 1) from a fixed seed.
inline std::vector<float> gaussian(std::size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(count);
  for (float& f : v) f = dist(rng);
  return v;
}

// The floats as a byte buffer of dtype d (float32 as is, halves rounded to nearest even).
inline std::vector<uint8_t> as_dtype(const std::vector<float>& f, Dtype d) {
  std::vector<uint8_t> out(f.size() * dtype_size(d));
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (d == Dtype::kFloat32) {
      std::memcpy(&out[4 * i], &f[i], 4);
    } else {
      const uint16_t h = d == Dtype::kBfloat16 ? f32_to_bf16(f[i]) : f32_to_f16(f[i]);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

// Element i of a dtype-d buffer as float.
inline float element(const std::vector<uint8_t>& buf, Dtype d, std::size_t i) {
  return float_element(buf.data(), d, i);
}

inline std::vector<uint8_t> random_bytes(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Embedding-gradient-like float32 rows: row_len floats per row, a fraction of rows nonzero
// (gaussian), the rest exactly zero.
inline std::vector<float> sparse_rows(std::size_t rows, std::size_t row_len,
                                      double nonzero_fraction, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution pick(nonzero_fraction);
  std::normal_distribution<float> dist(0.0f, 1e-3f);
  std::vector<float> v(rows * row_len, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    if (!pick(rng)) continue;
    for (std::size_t j = 0; j < row_len; ++j) v[r * row_len + j] = dist(rng);
  }
  return v;
}

}  // namespace squeeze::compress::testgen

// The threshold codec's deterministic sample positions, shared by the CPU encoder and its
// CUDA twin so both pick the same tau (and so produce the same bytes).
//
// With n = min(sample_size, count): when count <= sample_size every element is sampled;
// otherwise stride = count / n and sample i is i * stride + splitmix64(i) % stride, one
// pseudo-random element in each stratum (no aliasing with row-structured data).
#pragma once

#include <cstdint>

#include "compress/half.h"  // SQUEEZE_HD

namespace squeeze::compress {

SQUEEZE_HD inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

SQUEEZE_HD inline uint64_t threshold_sample_count(uint64_t count, uint32_t sample_size) {
  return count < sample_size ? count : sample_size;
}

// Position of sample i (i < threshold_sample_count(count, sample_size)).
SQUEEZE_HD inline uint64_t threshold_sample_position(uint64_t i, uint64_t count,
                                                     uint32_t sample_size) {
  if (count <= sample_size) return i;
  const uint64_t stride = count / sample_size;
  return i * stride + splitmix64(i) % stride;
}

// Index into the ascending sorted finite sample magnitudes (n of them, n >= 1) of tau.
SQUEEZE_HD inline uint64_t threshold_quantile_index(uint64_t n, double keep) {
  double k = keep * static_cast<double>(n);
  uint64_t kept = static_cast<uint64_t>(k);
  if (static_cast<double>(kept) < k) ++kept;  // ceil
  if (kept < 1) kept = 1;
  if (kept > n) kept = n;
  return n - kept;
}

}  // namespace squeeze::compress

// Internal to the quantize codec: the "stream" of elements that gets quantized (all of
// them, or the distinct rows followed by the tail when rows are deduplicated), and typed
// loads from the caller's bytes at any alignment.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "compress/byte_io.h"
#include "compress/codec.h"
#include "compress/half.h"
#include "compress/half_simd.h"

namespace squeeze::compress::qstream {

template <Dtype D>
inline constexpr std::size_t kSize = D == Dtype::kFloat32 ? 4 : 2;

template <Dtype D>
inline float load(const uint8_t* p) {
  if constexpr (D == Dtype::kFloat32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  } else {
    const auto h = static_cast<uint16_t>(p[0] | (p[1] << 8));
    if constexpr (D == Dtype::kBfloat16) {
      return bf16_to_f32(h);
    } else {
      return f16_to_f32(h);
    }
  }
}

template <Dtype D>
inline void load_run(const uint8_t* src, std::size_t n, float* out) {
  if constexpr (D == Dtype::kFloat32) {
    std::memcpy(out, src, 4 * n);
  } else {
    hsimd::widen_run<D>(src, n, reinterpret_cast<uint8_t*>(out));
  }
}

struct Stream {
  const uint8_t* src = nullptr;
  std::size_t esize = 0;
  uint64_t row_length = 0;  // only used with `first`
  uint64_t n_unique = 0;
  uint64_t n_full_rows = 0;
  const uint32_t* first = nullptr;  // dedupe: source row of each distinct row; null = identity

  // Index in the source (or destination) buffer of stream element p.
  uint64_t element(uint64_t p) const {
    if (first == nullptr) return p;
    const uint64_t k = p / row_length;
    const uint64_t row = k < n_unique ? first[k] : n_full_rows;
    return row * row_length + (p - k * row_length);
  }

  // Calls fn(element index, stream offset within the range, run length) for maximal
  // contiguous runs covering stream elements [p, p + n).
  template <typename Fn>
  void runs(uint64_t p, std::size_t n, Fn&& fn) const {
    if (first == nullptr) {
      fn(p, std::size_t{0}, n);
      return;
    }
    std::size_t done = 0;
    while (done < n) {
      const uint64_t q = p + done;
      const uint64_t within = q % row_length;
      const std::size_t len =
          static_cast<std::size_t>(std::min<uint64_t>(n - done, row_length - within));
      fn(element(q), done, len);
      done += len;
    }
  }

  template <Dtype D>
  void gather(uint64_t p, std::size_t n, float* out) const {
    runs(p, n, [&](uint64_t e, std::size_t at, std::size_t len) {
      load_run<D>(src + e * esize, len, out + at);
    });
  }
};

}  // namespace squeeze::compress::qstream

#include "perf/collective/data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "compress/float_element.h"
#include "compress/half.h"
#include "perf/common/traffic_gen.h"

namespace squeeze::perf {
namespace {

void store(uint8_t* p, std::size_t i, float f, compress::Dtype d) {
  if (d == compress::Dtype::kFloat32) {
    std::memcpy(p + 4 * i, &f, 4);
    return;
  }
  uint16_t h = d == compress::Dtype::kBfloat16 ? compress::f32_to_bf16(f) : compress::f32_to_f16(f);
  std::memcpy(p + 2 * i, &h, 2);
}

}  // namespace

bool parse_collective_choice(const std::string& s, bool* allreduce, bool* alltoall) {
  if (s != "allreduce" && s != "alltoall" && s != "both") return false;
  *allreduce = s != "alltoall";
  *alltoall = s != "allreduce";
  return true;
}

uint64_t derive_seed(uint64_t base, uint64_t a, uint64_t b) {
  uint64_t z = base ^ (a * 0xD6E8FEB86659FD93ull) ^ (b * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<uint8_t> make_input(const std::string& name, std::size_t elems, uint64_t seed,
                                compress::Dtype d, uint64_t step) {
  std::vector<float> v;
  v.reserve(elems);
  for (uint64_t piece = 0; v.size() < elems; ++piece) {
    Traffic t;
    if (!make_traffic(name, (elems - v.size()) * sizeof(float), derive_seed(seed, piece, 0x5157),
                      &t, step))
      throw std::invalid_argument("--data '" + name + "': unknown data set");
    if (t.values.empty())
      throw std::runtime_error("--data '" + name + "': generator returned no values");
    std::size_t take = std::min(t.values.size(), elems - v.size());
    v.insert(v.end(), t.values.begin(), t.values.begin() + static_cast<std::ptrdiff_t>(take));
  }
  if (d == compress::Dtype::kFloat32) {
    std::vector<uint8_t> out(elems * sizeof(float));
    if (elems != 0) std::memcpy(out.data(), v.data(), out.size());
    return out;
  }
  return to_dtype(v, d);
}

void reduce(uint8_t* dst, const uint8_t* a, const uint8_t* b, std::size_t elems, compress::Dtype d,
            RedOp op) {
  if (d == compress::Dtype::kFloat32 && (op == RedOp::kSum || op == RedOp::kAvg)) {
    // Blocks through local arrays: no aliasing questions, and the loop vectorizes.
    constexpr std::size_t kBlock = 256;
    float x[kBlock], y[kBlock];
    for (std::size_t i = 0; i < elems; i += kBlock) {
      const std::size_t n = std::min(kBlock, elems - i);
      std::memcpy(x, a + 4 * i, 4 * n);
      std::memcpy(y, b + 4 * i, 4 * n);
      for (std::size_t k = 0; k < n; ++k) x[k] += y[k];
      std::memcpy(dst + 4 * i, x, 4 * n);
    }
    return;
  }
  for (std::size_t i = 0; i < elems; ++i)
    store(dst, i,
          apply_red_op(op, compress::float_element(a, d, i), compress::float_element(b, d, i)), d);
}

void premultiply(uint8_t* dst, const uint8_t* src, std::size_t elems, compress::Dtype d,
                 float scale) {
  for (std::size_t i = 0; i < elems; ++i)
    store(dst, i, compress::float_element(src, d, i) * scale, d);
}

namespace {

// One block of elements that differ somewhere: the per-element check, float32 without the
// generic load (the common case, and the one the compiler vectorizes).
void compare_block(const uint8_t* got, const uint8_t* want, std::size_t n, compress::Dtype d,
                   Comparison* c) {
  if (d == compress::Dtype::kFloat32) {
    constexpr std::size_t kLanes = 256;
    float g[kLanes], w[kLanes];
    for (std::size_t i = 0; i < n; i += kLanes) {
      const std::size_t k = std::min(kLanes, n - i);
      std::memcpy(g, got + 4 * i, 4 * k);
      std::memcpy(w, want + 4 * i, 4 * k);
      std::size_t differing = 0;
      bool any_nan = false;
      double worst = 0;
      for (std::size_t j = 0; j < k; ++j) {
        uint32_t gb, wb;
        std::memcpy(&gb, &g[j], 4);
        std::memcpy(&wb, &w[j], 4);
        differing += gb != wb ? 1u : 0u;
        any_nan |= (g[j] != g[j]) | (w[j] != w[j]);
        const double e = std::fabs(static_cast<double>(g[j]) - static_cast<double>(w[j]));
        worst = e > worst ? e : worst;
      }
      c->differing += differing;
      if (any_nan) {  // rare: NaN on both sides is equal, on one side is an error of NaN
        for (std::size_t j = 0; j < k; ++j)
          if (std::isnan(g[j]) != std::isnan(w[j])) c->max_abs_err = NAN;
      }
      if (!std::isnan(c->max_abs_err) && worst > c->max_abs_err) c->max_abs_err = worst;
    }
    return;
  }
  const std::size_t es = compress::dtype_size(d);
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(got + es * i, want + es * i, es) == 0) continue;
    ++c->differing;
    const float g = compress::float_element(got, d, i), w = compress::float_element(want, d, i);
    double e = std::isnan(g) || std::isnan(w)
                   ? (std::isnan(g) && std::isnan(w) ? 0.0 : NAN)
                   : std::fabs(static_cast<double>(g) - static_cast<double>(w));
    if (std::isnan(e) || e > c->max_abs_err)
      c->max_abs_err = std::isnan(c->max_abs_err) ? c->max_abs_err : e;
  }
}

}  // namespace

Comparison compare(const uint8_t* got, const uint8_t* want, std::size_t elems, compress::Dtype d) {
  // Identical blocks (every block of a raw or lossless run) cost one memcmp each.
  Comparison c;
  const std::size_t es = compress::dtype_size(d);
  constexpr std::size_t kBlockElems = 4096;
  for (std::size_t i = 0; i < elems; i += kBlockElems) {
    const std::size_t n = std::min(kBlockElems, elems - i);
    if (std::memcmp(got + es * i, want + es * i, es * n) == 0) continue;
    compare_block(got + es * i, want + es * i, n, d, &c);
  }
  return c;
}

uint64_t hash_bytes(const void* p, std::size_t n, uint64_t h) {
  // Four independent lanes over 32-byte strides (one multiply chain is latency-bound), then
  // folded together with the tail.
  const auto* b = static_cast<const uint8_t*>(p);
  uint64_t lane[4] = {h, h ^ 0xD6E8FEB86659FD93ull, h ^ 0xBF58476D1CE4E5B9ull,
                      h ^ 0x94D049BB133111EBull};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (std::size_t k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, b + i + 8 * k, 8);
      lane[k] = (lane[k] ^ (w * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
      lane[k] ^= lane[k] >> 29;
    }
  }
  for (std::size_t k = 0; k < 4; ++k)
    h = (h ^ (lane[k] * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
  for (; i < n; ++i) h = (h ^ b[i]) * 0x100000001B3ull;
  return h ^ (h >> 32) ^ n;
}

}  // namespace squeeze::perf

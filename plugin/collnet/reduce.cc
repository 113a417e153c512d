#include "plugin/collnet/reduce.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "compress/half.h"

namespace squeeze::collnet {

namespace {

using policy::DataType;
using policy::ReduceOp;

// Elements are read and written through memcpy: NCCL's buffers carry no
// alignment promise beyond the element size, and half types travel as their
// bits.
template <typename T>
T load(const void* base, uint64_t i) {
  T v;
  std::memcpy(&v, static_cast<const unsigned char*>(base) + i * sizeof(T), sizeof(T));
  return v;
}
template <typename T>
void store(void* base, uint64_t i, T v) {
  std::memcpy(static_cast<unsigned char*>(base) + i * sizeof(T), &v, sizeof(T));
}

// Integer sums wrap: add as unsigned, whatever the signedness.
template <typename T>
void sum_int(std::span<const void* const> in, void* out, uint64_t count) {
  using U = std::make_unsigned_t<T>;
  for (uint64_t i = 0; i < count; ++i) {
    U s = load<U>(in[0], i);
    for (std::size_t k = 1; k < in.size(); ++k) s = static_cast<U>(s + load<U>(in[k], i));
    store<U>(out, i, s);
  }
}

// Floats as float: float32 directly, halves through their exact widening.
struct F32 {
  using Bits = float;
  static float widen(float v) { return v; }
  static float narrow(double v) { return static_cast<float>(v); }
};
struct Bf16 {
  using Bits = uint16_t;
  static float widen(uint16_t v) { return compress::bf16_to_f32(v); }
  static uint16_t narrow(double v) { return compress::f32_to_bf16(static_cast<float>(v)); }
};
struct F16 {
  using Bits = uint16_t;
  static float widen(uint16_t v) { return compress::f16_to_f32(v); }
  static uint16_t narrow(double v) { return compress::f32_to_f16(static_cast<float>(v)); }
};

// Double holds the sum of a few float32 values exactly far more often than
// float would, and rounding once at the end is what a reader of the result
// expects. Halves: the double is first rounded to float, then to the half type;
// the double rounding can differ from one direct rounding only on exact ties of
// the float, and every rank gets the owner's bits anyway.
//
// The sum runs in blocks of kSumBlock elements, input after input, so the compiler can
// vectorise each pass (reduce.cc is built with -O3); every element still sees the same
// operations in the same order as one element at a time, so the bits are the same.
constexpr uint64_t kSumBlock = 256;

template <typename F>
void sum_float(std::span<const void* const> in, void* out, uint64_t count) {
  using B = typename F::Bits;
  auto at = [](const void* base, uint64_t i) {
    return static_cast<const unsigned char*>(base) + i * sizeof(B);
  };
  double acc[kSumBlock];
  uint64_t i0 = 0;
  for (; i0 + kSumBlock <= count; i0 += kSumBlock) {
    const unsigned char* first = at(in[0], i0);
    for (uint64_t j = 0; j < kSumBlock; ++j) acc[j] = F::widen(load<B>(first, j));
    for (std::size_t k = 1; k < in.size(); ++k) {
      const unsigned char* src = at(in[k], i0);
      for (uint64_t j = 0; j < kSumBlock; ++j) acc[j] += F::widen(load<B>(src, j));
    }
    auto* dst = static_cast<unsigned char*>(out) + i0 * sizeof(B);
    for (uint64_t j = 0; j < kSumBlock; ++j) store<B>(dst, j, F::narrow(acc[j]));
  }
  for (uint64_t i = i0; i < count; ++i) {
    double s = F::widen(load<B>(in[0], i));
    for (std::size_t k = 1; k < in.size(); ++k) s += F::widen(load<B>(in[k], i));
    store<B>(out, i, F::narrow(s));
  }
}

template <typename F>
void min_max_float(std::span<const void* const> in, void* out, uint64_t count, bool is_max) {
  using B = typename F::Bits;
  for (uint64_t i = 0; i < count; ++i) {
    B best = load<B>(in[0], i);
    float bv = F::widen(best);
    for (std::size_t k = 1; k < in.size() && !std::isnan(bv); ++k) {
      const B x = load<B>(in[k], i);
      const float xv = F::widen(x);
      if (std::isnan(xv) || (is_max ? xv > bv : xv < bv)) {
        best = x;
        bv = xv;
      }
    }
    store<B>(out, i, best);
  }
}

template <typename F>
void reduce_float(ReduceOp op, std::span<const void* const> in, void* out, uint64_t count) {
  if (op == ReduceOp::kSum) {
    sum_float<F>(in, out, count);
  } else {
    min_max_float<F>(in, out, count, op == ReduceOp::kMax);
  }
}

}  // namespace

bool can_reduce(DataType dtype, ReduceOp op) {
  if (op == ReduceOp::kUnknown) return false;
  switch (dtype) {
    case DataType::kFloat32:
    case DataType::kBfloat16:
    case DataType::kFloat16: return true;
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64: return op == ReduceOp::kSum;
    default: return false;
  }
}

bool reduce_in_order(DataType dtype, ReduceOp op, std::span<const void* const> inputs, void* out,
                     uint64_t count) {
  if (!can_reduce(dtype, op) || inputs.empty()) return false;
  switch (dtype) {
    case DataType::kFloat32: reduce_float<F32>(op, inputs, out, count); return true;
    case DataType::kBfloat16: reduce_float<Bf16>(op, inputs, out, count); return true;
    case DataType::kFloat16: reduce_float<F16>(op, inputs, out, count); return true;
    case DataType::kInt8:
    case DataType::kUint8: sum_int<uint8_t>(inputs, out, count); return true;
    case DataType::kInt32:
    case DataType::kUint32: sum_int<uint32_t>(inputs, out, count); return true;
    case DataType::kInt64:
    case DataType::kUint64: sum_int<uint64_t>(inputs, out, count); return true;
    default: return false;
  }
}

}  // namespace squeeze::collnet

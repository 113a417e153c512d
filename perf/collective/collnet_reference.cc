#include "perf/collective/collnet_reference.h"

#include <cmath>
#include <cstring>

#include "compress/float_element.h"
#include "compress/half.h"

namespace squeeze::perf {

namespace {

using compress::Dtype;

void store(uint8_t* out, std::size_t i, Dtype d, float v) {
  if (d == Dtype::kFloat32) {
    std::memcpy(out + 4 * i, &v, 4);
    return;
  }
  const uint16_t h = d == Dtype::kBfloat16 ? compress::f32_to_bf16(v) : compress::f32_to_f16(v);
  std::memcpy(out + 2 * i, &h, 2);
}

}  // namespace

bool collnet_reference(const std::vector<const uint8_t*>& inputs, uint8_t* out, std::size_t count,
                       Dtype d, RedOp op) {
  if (inputs.empty() || (op != RedOp::kSum && op != RedOp::kMin && op != RedOp::kMax)) return false;
  const std::size_t es = compress::dtype_size(d);
  for (std::size_t i = 0; i < count; ++i) {
    if (op == RedOp::kSum) {
      double s = compress::float_element(inputs[0], d, i);  // not 0 + x: -0 stays -0
      for (std::size_t k = 1; k < inputs.size(); ++k) s += compress::float_element(inputs[k], d, i);
      store(out, i, d, static_cast<float>(s));
      continue;
    }
    const uint8_t* best = inputs[0];
    float bv = compress::float_element(best, d, i);
    for (std::size_t k = 1; k < inputs.size() && !std::isnan(bv); ++k) {
      const float x = compress::float_element(inputs[k], d, i);
      if (std::isnan(x) || (op == RedOp::kMax ? x > bv : x < bv)) {
        best = inputs[k];
        bv = x;
      }
    }
    std::memcpy(out + es * i, best + es * i, es);
  }
  return true;
}

}  // namespace squeeze::perf

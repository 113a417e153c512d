// The threshold codec's entry in the body-codec table, and its small shared helpers.
#include "compress/threshold.h"

namespace squeeze::compress {

Dtype threshold_value_dtype(Dtype input, Dtype requested) {
  if (is_float(requested) && dtype_size(requested) != 0 &&
      dtype_size(requested) < dtype_size(input)) {
    return requested;
  }
  return input;
}

std::size_t threshold_body_bound(const EncodeRequest& req) {
  const Dtype vd = req.params != nullptr
                       ? threshold_value_dtype(req.dtype, req.params->threshold.value_dtype)
                       : req.dtype;
  const std::size_t vw = dtype_size(vd) == 0 ? 1 : dtype_size(vd);
  // The smaller position encoding never exceeds the bitmap; at most every element is kept.
  return kThresholdHeaderBytes + static_cast<std::size_t>((req.count + 7) / 8) +
         static_cast<std::size_t>(req.count) * vw;
}

namespace {

Status encode(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* written) {
  return threshold_encode_body(req, dst, written, /*allow_expansion=*/false);
}

}  // namespace

const BodyCodec kThresholdBody = {threshold_body_bound, encode, threshold_decode_body};

}  // namespace squeeze::compress

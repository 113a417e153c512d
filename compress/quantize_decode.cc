// The quantize body's decoder: validate everything, then unpack codes chunk by chunk,
// reconstruct into the dtype, patch escapes, and copy repeated rows. At the AVX-512 level
// (quantize_decode_avx512.h) the unpacking and the reconstruction run 16 codes per step, and
// float32 messages without per-row parameters go straight from the payload to the output
// without the codes buffer (with row dedupe, where rows are whole blocks).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compress/bitpack.h"
#include "compress/half_simd.h"
#include "compress/quantize.h"
#include "compress/quantize_decode_avx512.h"
#include "compress/quantize_math.h"
#include "compress/quantize_simd.h"
#include "compress/quantize_stream.h"

namespace squeeze::compress {
namespace {

constexpr std::size_t kChunk = 1024;

// Reconstructs n codes into dtype D at out (any alignment). Computed as float32 in a small
// buffer first, so both loops vectorize; the narrowing matches f32_to_bf16/f32_to_f16.
template <Dtype D>
inline __attribute__((always_inline)) void store_run_impl(const int32_t* codes, std::size_t n,
                                                          double offset, double step,
                                                          uint8_t* out) {
  if constexpr (D == Dtype::kFloat32) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto f = static_cast<float>(qmath::reconstruct(offset, step, codes[i]));
      std::memcpy(out + 4 * i, &f, 4);
    }
  } else {
    float f[kChunk];
    for (std::size_t i = 0; i < n; ++i)
      f[i] = static_cast<float>(qmath::reconstruct(offset, step, codes[i]));
    hsimd::narrow_run<D>(reinterpret_cast<const uint8_t*>(f), n, out);
  }
}

#if defined(__x86_64__)
#define SQUEEZE_AVX2 __attribute__((target("avx2")))
#else
#define SQUEEZE_AVX2
#endif

template <Dtype D>
SQUEEZE_AVX2 void store_run_avx2(const int32_t* codes, std::size_t n, double offset, double step,
                                 uint8_t* out) {
  store_run_impl<D>(codes, n, offset, step, out);
}

template <Dtype D>
void store_run(const int32_t* codes, std::size_t n, double offset, float step, uint8_t* out) {
  const qsimd::Level level = qsimd::level();
  if (level == qsimd::Level::kAvx512) {
    if constexpr (D == Dtype::kFloat32) {
      qavx512::reconstruct(codes, n, offset, step, out);
    } else {
      float f[kChunk];
      qavx512::reconstruct(codes, n, offset, step, reinterpret_cast<uint8_t*>(f));
      hsimd::narrow_run<D>(reinterpret_cast<const uint8_t*>(f), n, out);
    }
  } else if (level == qsimd::Level::kAvx2) {
    store_run_avx2<D>(codes, n, offset, static_cast<double>(step), out);
  } else {
    store_run_impl<D>(codes, n, offset, static_cast<double>(step), out);
  }
}

// rice_codes: the stream's codes, already decoded from a Rice-coded payload (else null).
template <Dtype D>
void decode_typed(const QuantizeLayout& q, const int32_t* rice_codes, std::span<uint8_t> dst) {
  constexpr std::size_t esize = qstream::kSize<D>;
  const uint64_t L = q.row_length;
  std::vector<uint32_t> first;
  if (q.dedupe) {
    first.resize(q.n_unique);
    uint32_t next = 0;
    for (uint64_t r = 0; r < q.n_full_rows; ++r) {
      if (bitpack::array_get(q.map.data(), r, q.map_bits) == next)
        first[next++] = static_cast<uint32_t>(r);
    }
  }
  qstream::Stream s;
  s.esize = esize;
  s.row_length = L;
  s.n_unique = q.n_unique;
  s.n_full_rows = q.n_full_rows;
  s.first = q.dedupe ? first.data() : nullptr;
  uint8_t* out = dst.data();

  const uint8_t* payload = q.payload.data();
  const bool avx512 = qsimd::level() == qsimd::Level::kAvx512;
  int32_t unpacked[kChunk];
  if (rice_codes == nullptr && D == Dtype::kFloat32 && avx512 && !q.dedupe &&
      q.mode != BoundMode::kRelRow) {
    // Stream element p is output element p: no codes buffer needed.
    qavx512::decode_f32(payload, q.widths.data(), static_cast<std::size_t>(q.n_stream), q.offset,
                        q.step, out);
  } else if (rice_codes == nullptr && D == Dtype::kFloat32 && avx512 && q.dedupe &&
             q.mode != BoundMode::kRelRow && L % kQuantizeBlock == 0) {
    // Deduplicated rows of whole blocks: each distinct row, then the tail, starts a block,
    // so each is decoded straight to where it goes, again without the codes buffer.
    const uint64_t row_blocks = L / kQuantizeBlock;
    const auto row_bytes = static_cast<std::size_t>(L * esize);
    const uint8_t* widths = q.widths.data();
    for (uint64_t k = 0; k < q.n_unique; ++k, widths += row_blocks) {
      payload = qavx512::decode_f32(payload, widths, static_cast<std::size_t>(L), q.offset, q.step,
                                    out + first[k] * row_bytes);
    }
    const uint64_t tail = q.n_stream - q.n_unique * L;
    if (tail != 0) {
      qavx512::decode_f32(payload, widths, static_cast<std::size_t>(tail), q.offset, q.step,
                          out + q.n_full_rows * row_bytes);
    }
  } else {
    for (uint64_t p0 = 0; p0 < q.n_stream; p0 += kChunk) {
      const auto n = static_cast<std::size_t>(std::min<uint64_t>(kChunk, q.n_stream - p0));
      const uint8_t* widths = q.widths.data() + p0 / kQuantizeBlock;
      const int32_t* codes = unpacked;
      if (rice_codes != nullptr) {
        codes = rice_codes + p0;
      } else if (avx512) {
        payload = qavx512::unpack_codes(payload, widths, (n + kQuantizeBlock - 1) / kQuantizeBlock,
                                        unpacked);
      } else {
        for (std::size_t b = 0; b < n; b += kQuantizeBlock) {
          const unsigned w = widths[b / kQuantizeBlock];
          bitpack::unpack64_unzigzag(payload, w, unpacked + b);
          payload += 8u * w;
        }
      }
      if (q.mode != BoundMode::kRelRow) {
        s.runs(p0, n, [&](uint64_t e, std::size_t at, std::size_t len) {
          store_run<D>(codes + at, len, q.offset, q.step, out + e * esize);
        });
        continue;
      }
      for (std::size_t i = 0; i < n;) {  // one parameter row at a time
        const uint64_t k = (p0 + i) / L;
        const auto len =
            static_cast<std::size_t>(std::min<uint64_t>(n - i, (k + 1) * L - (p0 + i)));
        const double off = f32_from_bits(load_le32(q.row_params.data() + 8 * k));
        const float step = f32_from_bits(load_le32(q.row_params.data() + 8 * k + 4));
        s.runs(p0 + i, len, [&](uint64_t e, std::size_t at, std::size_t l2) {
          store_run<D>(codes + i + at, l2, off, step, out + e * esize);
        });
        i += len;
      }
    }
  }
  for (uint32_t k = 0; k < q.n_escapes; ++k) {
    const uint64_t e = s.element(load_le32(q.escape_index.data() + 4ull * k));
    std::memcpy(out + e * esize, q.escape_values.data() + esize * k, esize);
  }
  if (q.dedupe) {
    const std::size_t row_bytes = static_cast<std::size_t>(L * esize);
    for (uint64_t r = 0; r < q.n_full_rows; ++r) {
      const uint32_t src_row = first[bitpack::array_get(q.map.data(), r, q.map_bits)];
      if (src_row != r) std::memcpy(out + r * row_bytes, out + src_row * row_bytes, row_bytes);
    }
  }
}

}  // namespace

Status quantize_body_decode(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                            std::span<uint8_t> dst) {
  QuantizeLayout q;
  Status st = parse_quantize_layout(body, dtype, count, &q);
  if (!st.ok()) return st;
  if (dst.size() / dtype_size(dtype) != count || dst.size() % dtype_size(dtype) != 0) {
    return {Status::Code::kInvalidArgument, "quantize: dst holds " + std::to_string(dst.size()) +
                                                " bytes, count " + std::to_string(count) + " of " +
                                                dtype_name(dtype) + " needs another size"};
  }
  // Decoded and checked in full before anything is written. Not value-initialised: every
  // code is written by rice_decode_codes (a zeroing pass cost as much as the reconstruction).
  std::unique_ptr<int32_t[]> rice_codes;
  if (q.rice) {
    rice_codes = std::make_unique_for_overwrite<int32_t[]>(static_cast<std::size_t>(q.n_stream));
    st = rice_decode_codes(q, rice_codes.get());
    if (!st.ok()) return st;
  }
  const int32_t* rc = rice_codes.get();
  switch (dtype) {
    case Dtype::kFloat32: decode_typed<Dtype::kFloat32>(q, rc, dst); break;
    case Dtype::kBfloat16: decode_typed<Dtype::kBfloat16>(q, rc, dst); break;
    case Dtype::kFloat16: decode_typed<Dtype::kFloat16>(q, rc, dst); break;
    case Dtype::kBytes: break;  // parse_quantize_body rejected it
  }
  return Status::Ok();
}

}  // namespace squeeze::compress

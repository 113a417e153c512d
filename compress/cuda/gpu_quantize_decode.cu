// The quantize body decoded on the GPU, mirroring compress/quantize_layout.cc (validation)
// and compress/quantize_decode.cc (reconstruction). Every check runs before any write to
// the destination; the decode kernels do nothing once a check has failed.
#include <cub/device/device_scan.cuh>

#include "compress/cuda/gpu_quantize.cuh"

namespace squeeze::compress::gpu {
namespace {

constexpr unsigned kThreads = 256;

__device__ inline bool is_quantize_ok(const DecodeState* d) {
  return d->codec == static_cast<uint32_t>(CodecId::kQuantize) && d->fs.err == kNoError;
}

__device__ inline uint32_t map_get(const uint8_t* map, uint64_t i, uint32_t bits) {
  uint64_t v = 0;
  const uint64_t bit = i * bits;
  for (uint32_t b = 0; b < bits;) {
    const uint64_t pos = bit + b;
    const uint32_t shift = static_cast<uint32_t>(pos & 7), take = min(8u - shift, bits - b);
    v |= static_cast<uint64_t>((map[pos >> 3] >> shift) & ((1u << take) - 1)) << b;
    b += take;
  }
  return static_cast<uint32_t>(v);
}

__device__ inline uint32_t code_bits(const uint8_t* block, unsigned i, unsigned w) {
  const unsigned bit = i * w, first = bit / 8, shift = bit % 8, nbytes = (shift + w + 7) / 8;
  uint64_t v = 0;
  for (unsigned k = 0; k < nbytes; ++k) v |= static_cast<uint64_t>(block[first + k]) << (8 * k);
  return static_cast<uint32_t>((v >> shift) & ((1ull << w) - 1));
}

// Header and the sections before the payload (one thread).
__global__ void head_kernel(const uint8_t* frame, DecodeState* d) {
  if (!is_quantize_ok(d)) return;
  const uint8_t* b = frame + kFrameHeaderBytes;
  const uint64_t size = d->body_bytes, count = d->count, es = dsize(d->dtype);
  auto fail = [&](uint64_t off, uint32_t field, uint64_t value) {
    report(&d->fs.err, kFrameHeaderBytes + off, field);
    d->fs.err_value = value;
  };
  QuantizeLayoutDev& q = d->q;
  if (es < 2) return fail(6 - kFrameHeaderBytes, kFieldDtype, d->dtype);  // frame offset 6
  if (count > 0xffffffffull) return fail(8 - kFrameHeaderBytes, kFieldOriginalBytes, count);
  if (size < kQuantizeHeaderBytes) return fail(0, kFieldQuantizeSection, kQuantizeHeaderBytes);
  q.mode = b[0];
  q.dedupe = b[1] & kQuantizeFlagDedupe;
  q.row_length = dget32(b + 4);
  const double eb = __longlong_as_double(static_cast<long long>(dget64(b + 8)));
  const double bound_abs = __longlong_as_double(static_cast<long long>(dget64(b + 16)));
  q.offset = __longlong_as_double(static_cast<long long>(dget64(b + 24)));
  q.step = f32_from_bits(dget32(b + 32));
  q.n_escapes = dget32(b + 36);
  q.n_unique = dget32(b + 40);
  if (q.mode > 2) return fail(0, kFieldQuantizeHeader, q.mode);
  if (b[1] & ~kQuantizeFlagDedupe) return fail(1, kFieldQuantizeHeader, b[1]);
  if (b[2] || b[3]) return fail(2, kFieldQuantizeHeader, b[2] | b[3] << 8);
  const bool rel_row = q.mode == static_cast<uint32_t>(BoundMode::kRelRow),
             rows = q.dedupe || rel_row;
  if (rows && q.row_length == 0) return fail(4, kFieldQuantizeHeader, 0);
  if (!(isfinite(eb) && eb > 0)) return fail(8, kFieldQuantizeHeader, 0);
  if (!(isfinite(bound_abs) && bound_abs >= 0)) return fail(16, kFieldQuantizeHeader, 0);
  if (!isfinite(q.offset)) return fail(24, kFieldQuantizeHeader, 0);
  if (!(isfinite(q.step) && q.step >= 0)) return fail(32, kFieldQuantizeHeader, 0);
  q.n_full_rows = rows ? count / q.row_length : 0;
  q.tail = rows ? count % q.row_length : count;
  uint64_t off = kQuantizeHeaderBytes;
  if (q.dedupe) {
    if (q.n_unique > q.n_full_rows || (q.n_unique == 0) != (q.n_full_rows == 0))
      return fail(40, kFieldQuantizeHeader, q.n_unique);
    q.map_bits = q.n_unique > 1 ? 32u - static_cast<unsigned>(__clz(q.n_unique - 1)) : 0u;
    q.n_stream = static_cast<uint64_t>(q.n_unique) * q.row_length + q.tail;
    q.off_map = off;
    off += (q.n_full_rows * q.map_bits + 7) / 8;
    if (off > size) return fail(q.off_map, kFieldQuantizeSection, off);
  } else {
    if (q.n_unique != 0) return fail(40, kFieldQuantizeHeader, q.n_unique);
    q.n_stream = count;
  }
  if (rel_row) {
    if (q.offset != 0 || q.step != 0 || bound_abs != 0) return fail(16, kFieldQuantizeHeader, 0);
    q.n_param_rows = (q.dedupe ? q.n_unique : q.n_full_rows) + (q.tail > 0 ? 1 : 0);
  }
  q.off_params = off;
  off += 8 * q.n_param_rows;
  if (off > size) return fail(q.off_params, kFieldQuantizeSection, off);
  q.n_blocks = (q.n_stream + kQuantizeBlock - 1) / kQuantizeBlock;
  q.off_widths = off;
  off += q.n_blocks;
  if (off > size) return fail(q.off_widths, kFieldQuantizeSection, off);
  q.off_payload = off;
  if (q.n_escapes > q.n_stream) return fail(36, kFieldQuantizeHeader, q.n_escapes);
}

__global__ void widths_kernel(const uint8_t* frame, DecodeState* d, uint64_t max_blocks,
                              uint64_t* width_bytes) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i >= max_blocks) return;
  width_bytes[i] = 0;
  if (!is_quantize_ok(d) || i >= d->q.n_blocks) return;
  const unsigned w = frame[kFrameHeaderBytes + d->q.off_widths + i];
  if (w > kQuantizeMaxWidth)
    report(&d->fs.err, kFrameHeaderBytes + d->q.off_widths + i, kFieldWidth);
  width_bytes[i] = 8ull * w;
}

__global__ void tail_kernel(const uint8_t* frame, DecodeState* d, const uint64_t* offsets,
                            const uint64_t* width_bytes) {
  if (!is_quantize_ok(d)) return;
  QuantizeLayoutDev& q = d->q;
  const uint64_t es = dsize(d->dtype), size = d->body_bytes;
  q.payload_bytes = q.n_blocks ? offsets[q.n_blocks - 1] + width_bytes[q.n_blocks - 1] : 0;
  q.off_esc_idx = q.off_payload + q.payload_bytes;
  q.off_esc_val = q.off_esc_idx + 4ull * q.n_escapes;
  const uint64_t end = q.off_esc_val + es * q.n_escapes;
  if (q.off_esc_idx > size || end > size) {
    report(&d->fs.err, kFrameHeaderBytes + (q.off_esc_idx > size ? q.off_payload : q.off_esc_idx),
           kFieldQuantizeSection);
  } else if (end < size) {
    report(&d->fs.err, kFrameHeaderBytes + end, kFieldTrailing);
  }
}

// Escape order, row parameters, map entries, padding: independent checks in one launch.
__global__ void checks_kernel(const uint8_t* frame, DecodeState* d, uint64_t max_items,
                              uint32_t* map_value) {
  if (!is_quantize_ok(d)) return;
  const QuantizeLayoutDev& q = d->q;
  const uint8_t* b = frame + kFrameHeaderBytes;
  const uint64_t tid = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  if (q.off_esc_val + dsize(d->dtype) * q.n_escapes > d->body_bytes) return;  // tail failed
  for (uint64_t e = tid; e < q.n_escapes && e < max_items; e += stride) {
    const uint32_t idx = dget32(b + q.off_esc_idx + 4 * e);
    if (idx >= q.n_stream || (e > 0 && idx <= dget32(b + q.off_esc_idx + 4 * (e - 1)))) {
      report(&d->fs.err, kFrameHeaderBytes + q.off_esc_idx + 4 * e, kFieldEscapeIndex);
    }
  }
  for (uint64_t k = tid; k < q.n_param_rows && k < max_items; k += stride) {
    const float o = f32_from_bits(dget32(b + q.off_params + 8 * k)),
                s = f32_from_bits(dget32(b + q.off_params + 8 * k + 4));
    if (!isfinite(o) || !(isfinite(s) && s >= 0))
      report(&d->fs.err, kFrameHeaderBytes + q.off_params + 8 * k, kFieldRowParams);
  }
  for (uint64_t r = tid; q.dedupe && r < q.n_full_rows && r < max_items; r += stride) {
    map_value[r] =
        map_get(b + q.off_map, r, q.map_bits) + 1;  // + 1: the max-scan below starts at 0
  }
  if (tid == 0 && q.dedupe) {  // padding bits of the map
    const uint64_t used = q.n_full_rows * q.map_bits;
    if (used % 8 && (b[q.off_map + used / 8] >> (used % 8)) != 0) {
      report(&d->fs.err, kFrameHeaderBytes + q.off_map + used / 8, kFieldRowMap);
    }
  }
  if (tid == 0 && q.n_stream % kQuantizeBlock &&
      q.n_blocks) {  // codes past the end of the last block
    const unsigned w = b[q.off_widths + q.n_blocks - 1];
    if (w > 0 && w <= kQuantizeMaxWidth) {
      const uint8_t* block = b + q.off_payload + q.payload_bytes - 8 * w;
      for (unsigned i = q.n_stream % kQuantizeBlock; i < kQuantizeBlock; ++i) {
        if (code_bits(block, i, w)) {
          report(&d->fs.err, kFrameHeaderBytes + q.off_widths + q.n_blocks - 1, kFieldPadding);
          break;
        }
      }
    }
  }
}

struct MaxU32 {
  __device__ uint32_t operator()(uint32_t a, uint32_t b) const { return a > b ? a : b; }
};

// Map canonical order (each entry at most one past the largest before it) and first rows.
__global__ void map_kernel(DecodeState* d, uint64_t max_items, const uint32_t* v,
                           const uint32_t* vmax, uint32_t* first_of_id) {
  if (!is_quantize_ok(d) || !d->q.dedupe) return;
  const QuantizeLayoutDev& q = d->q;
  const uint64_t r = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (r >= q.n_full_rows || r >= max_items) return;
  const uint32_t before = r ? vmax[r - 1] : 0;  // max id before r, plus one
  const uint32_t m = v[r] - 1;
  if (m > before)
    report(&d->fs.err, kFrameHeaderBytes + q.off_map + r * q.map_bits / 8, kFieldRowMap);
  else if (m == before && m < q.n_unique)
    first_of_id[m] = static_cast<uint32_t>(r);
  if (r == q.n_full_rows - 1 && vmax[r] != q.n_unique)
    report(&d->fs.err, kFrameHeaderBytes + 40, kFieldRowMap);
}

template <Dtype D>
__device__ inline void store(uint8_t* p, float f) {
  if constexpr (D == Dtype::kFloat32) {
    dput32(p, f32_bits(f));
  } else {
    const uint16_t h = D == Dtype::kBfloat16 ? f32_to_bf16(f) : f32_to_f16(f);
    p[0] = static_cast<uint8_t>(h);
    p[1] = static_cast<uint8_t>(h >> 8);
  }
}

// One warp per block: unpack, reconstruct, store at each element's place.
template <Dtype D>
__global__ void decode_kernel(const uint8_t* frame, const DecodeState* d, const uint64_t* offsets,
                              const uint32_t* first_of_id, uint64_t max_blocks, uint8_t* dst) {
  if (!is_quantize_ok(d) || d->dtype != static_cast<uint32_t>(D)) return;
  const QuantizeLayoutDev& q = d->q;
  const uint64_t b = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / 32;
  if (b >= q.n_blocks || b >= max_blocks) return;
  const uint8_t* body = frame + kFrameHeaderBytes;
  const unsigned w = body[q.off_widths + b];
  const uint8_t* block = body + q.off_payload + offsets[b];
  for (unsigned half = 0; half < 2; ++half) {
    const unsigned i = half * 32 + threadIdx.x % 32;
    const uint64_t p = b * kQuantizeBlock + i;
    if (p >= q.n_stream) continue;
    const uint32_t z = w ? code_bits(block, i, w) : 0u;
    const auto code = static_cast<int32_t>((z >> 1) ^ (0u - (z & 1u)));
    double off = q.offset, step = q.step;
    if (q.mode == static_cast<uint32_t>(BoundMode::kRelRow)) {
      const uint64_t k = p / q.row_length;
      off = f32_from_bits(dget32(body + q.off_params + 8 * k));
      step = f32_from_bits(dget32(body + q.off_params + 8 * k + 4));
    }
    const auto f = static_cast<float>(qmath::reconstruct(off, step, code));
    const uint64_t e =
        stream_element(p, q.dedupe, q.row_length, q.n_unique, q.n_full_rows, first_of_id);
    store<D>(dst + e * dsize(D), f);
  }
}

__global__ void escapes_kernel(const uint8_t* frame, const DecodeState* d,
                               const uint32_t* first_of_id, uint64_t max_items, uint8_t* dst) {
  if (!is_quantize_ok(d)) return;
  const QuantizeLayoutDev& q = d->q;
  const uint8_t* body = frame + kFrameHeaderBytes;
  const uint64_t es = dsize(d->dtype);
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
       k < q.n_escapes && k < max_items; k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t p = dget32(body + q.off_esc_idx + 4 * k);
    const uint64_t e =
        stream_element(p, q.dedupe, q.row_length, q.n_unique, q.n_full_rows, first_of_id);
    for (uint64_t c = 0; c < es; ++c) dst[e * es + c] = body[q.off_esc_val + es * k + c];
  }
}

__global__ void repeat_rows_kernel(const uint8_t* frame, const DecodeState* d,
                                   const uint32_t* first_of_id, uint64_t max_bytes, uint8_t* dst) {
  if (!is_quantize_ok(d) || !d->q.dedupe) return;
  const QuantizeLayoutDev& q = d->q;
  const uint64_t row_bytes = q.row_length * dsize(d->dtype);
  const uint64_t total = q.n_full_rows * row_bytes;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
       i < total && i < max_bytes; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = i / row_bytes;
    const uint32_t src_row =
        first_of_id[map_get(frame + kFrameHeaderBytes + q.off_map, r, q.map_bits)];
    if (src_row != r) dst[i] = dst[src_row * row_bytes + (i - r * row_bytes)];
  }
}

unsigned capped(uint64_t items) {
  const unsigned g = grid_for(items, kThreads);
  return g < 8192 ? g : 8192;
}

}  // namespace

Status enqueue_quantize_decode(const DecodeChunk& c, DecodeState* d, cudaStream_t s, Scratch* sc) {
  const auto* frame = static_cast<const uint8_t*>(c.frame);
  auto* dst = static_cast<uint8_t*>(c.dst);
  const uint64_t max_items =
      c.dst_capacity / 2 + 1;  // elements (and rows, escapes) of any float dtype
  const uint64_t max_blocks = (max_items + kQuantizeBlock - 1) / kQuantizeBlock;
  const Status oom{Status::Code::kNoSpace, "gpu: out of device memory (quantize decode)"};
  uint64_t *width_bytes = nullptr, *offsets = nullptr;
  uint32_t *v = nullptr, *vmax = nullptr, *first_of_id = nullptr;
  uint8_t* temp = nullptr;
  if (!sc->alloc(&width_bytes, max_blocks) || !sc->alloc(&offsets, max_blocks) ||
      !sc->alloc(&v, max_items) || !sc->alloc(&vmax, max_items) ||
      !sc->alloc(&first_of_id, max_items)) {
    return oom;
  }
  head_kernel<<<1, 1, 0, s>>>(frame, d);
  widths_kernel<<<grid_for(max_blocks, kThreads), kThreads, 0, s>>>(frame, d, max_blocks,
                                                                    width_bytes);
  std::size_t t1 = 0, t2 = 0;
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, t1, width_bytes, offsets, max_blocks, s));
  SQUEEZE_CUDA_TRY(cub::DeviceScan::InclusiveScan(nullptr, t2, v, vmax, MaxU32{}, max_items, s));
  if (!sc->alloc(&temp, t1 > t2 ? t1 : t2)) return oom;
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, t1, width_bytes, offsets, max_blocks, s));
  tail_kernel<<<1, 1, 0, s>>>(frame, d, offsets, width_bytes);
  SQUEEZE_CUDA_TRY(cudaMemsetAsync(v, 0, max_items * sizeof(uint32_t), s));
  checks_kernel<<<capped(max_items), kThreads, 0, s>>>(frame, d, max_items, v);
  SQUEEZE_CUDA_TRY(cub::DeviceScan::InclusiveScan(temp, t2, v, vmax, MaxU32{}, max_items, s));
  map_kernel<<<grid_for(max_items, kThreads), kThreads, 0, s>>>(d, max_items, v, vmax, first_of_id);
  decode_kernel<Dtype::kFloat32><<<grid_for(max_blocks * 32, kThreads), kThreads, 0, s>>>(
      frame, d, offsets, first_of_id, max_blocks, dst);
  decode_kernel<Dtype::kBfloat16><<<grid_for(max_blocks * 32, kThreads), kThreads, 0, s>>>(
      frame, d, offsets, first_of_id, max_blocks, dst);
  decode_kernel<Dtype::kFloat16><<<grid_for(max_blocks * 32, kThreads), kThreads, 0, s>>>(
      frame, d, offsets, first_of_id, max_blocks, dst);
  escapes_kernel<<<capped(max_items), kThreads, 0, s>>>(frame, d, first_of_id, max_items, dst);
  repeat_rows_kernel<<<capped(c.dst_capacity), kThreads, 0, s>>>(frame, d, first_of_id,
                                                                 c.dst_capacity, dst);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu

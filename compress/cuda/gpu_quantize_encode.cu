// The quantize body on the GPU, byte-identical to compress/quantize_encode.cc: (dedupe),
// range or per-row parameters through the shared qmath::choose, one warp per 64-code block
// for codes, widths and escape flags, prefix sums for block offsets and escape slots, then
// independent writes of every section. Sizes are known only on the device, so kernels are
// launched for host-side upper bounds and read the real sizes from EncLayout.
#include <cub/device/device_scan.cuh>

#include "compress/cuda/gpu_quantize.cuh"

namespace squeeze::compress::gpu {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarps = kThreads / 32;

struct Job {  // by-value kernel argument: what the host knows
  const uint8_t* src;
  uint8_t* body;  // dst + 40
  uint64_t count, n_full_rows, tail, L, original;
  double error_bound;
  uint32_t mode, dedupe, rel_row, es;
};

__global__ void init_kernel(EncLayout* lay, Job j) {
  *lay = EncLayout{};
  lay->mn_key = 0xffffffffu;
  lay->mx_key = 0;
  if (!j.dedupe) lay->n_unique = 0;
}

__global__ void plan_kernel(EncLayout* lay, Job j) {  // section offsets before the payload
  lay->n_stream = j.dedupe ? lay->n_unique * j.L + j.tail : j.count;
  lay->n_blocks = (lay->n_stream + kQuantizeBlock - 1) / kQuantizeBlock;
  lay->n_param_rows =
      j.rel_row ? (j.dedupe ? lay->n_unique : j.n_full_rows) + (j.tail > 0 ? 1 : 0) : 0;
  lay->map_bytes = j.dedupe ? (j.n_full_rows * lay->map_bits + 7) / 8 : 0;
  lay->off_params = kQuantizeHeaderBytes + lay->map_bytes;
  lay->off_widths = lay->off_params + 8 * lay->n_param_rows;
  lay->off_payload = lay->off_widths + lay->n_blocks;
}

template <Dtype D>
__global__ void range_kernel(EncLayout* lay, Job j, const uint32_t* first_of_id) {
  __shared__ uint32_t smn, smx;
  if (threadIdx.x == 0) {
    smn = 0xffffffffu;
    smx = 0;
  }
  __syncthreads();
  uint32_t mn = 0xffffffffu, mx = 0;
  const uint64_t n = lay->n_stream;
  for (uint64_t p = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; p < n;
       p += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const float x = load_elem<D>(
        j.src, stream_element(p, j.dedupe, j.L, lay->n_unique, j.n_full_rows, first_of_id));
    if (!isfinite(x)) continue;
    const uint32_t k = order_key(x);
    mn = k < mn ? k : mn;
    mx = k > mx ? k : mx;
  }
  atomicMin(&smn, mn);
  atomicMax(&smx, mx);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicMin(&lay->mn_key, smn);
    atomicMax(&lay->mx_key, smx);
  }
}

__device__ inline void keys_to_range(uint32_t mn_key, uint32_t mx_key, float* mn, float* mx) {
  const bool none = mn_key == 0xffffffffu && mx_key == 0;  // what the CPU's Range starts as
  *mn = none ? INFINITY : from_order_key(mn_key);
  *mx = none ? -INFINITY : from_order_key(mx_key);
}

template <Dtype D>
__global__ void message_params_kernel(EncLayout* lay, Job j) {
  float mn, mx;
  keys_to_range(lay->mn_key, lay->mx_key, &mn, &mx);
  const double range = mn <= mx ? static_cast<double>(mx) - static_cast<double>(mn) : 0.0;
  const double eb =
      j.mode == static_cast<uint32_t>(BoundMode::kAbs) ? j.error_bound : j.error_bound * range;
  lay->msg = qmath::choose<D>(mn, mx, eb, false);
  lay->bound_abs = lay->msg.bound;
}

// One warp per parameter row (rel-row mode).
template <Dtype D>
__global__ void row_params_kernel(EncLayout* lay, Job j, const uint32_t* first_of_id,
                                  qmath::Params* rowp, uint8_t* rowp_bytes) {
  const uint64_t k = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (k >= lay->n_param_rows) return;
  const uint64_t begin = k * j.L, end = begin + j.L < lay->n_stream ? begin + j.L : lay->n_stream;
  uint32_t mn = 0xffffffffu, mx = 0;
  for (uint64_t p = begin + lane; p < end; p += 32) {
    const float x = load_elem<D>(
        j.src, stream_element(p, j.dedupe, j.L, lay->n_unique, j.n_full_rows, first_of_id));
    if (!isfinite(x)) continue;
    const uint32_t key = order_key(x);
    mn = key < mn ? key : mn;
    mx = key > mx ? key : mx;
  }
  for (int o = 16; o > 0; o >>= 1) {
    const uint32_t a = __shfl_xor_sync(0xffffffffu, mn, o), b = __shfl_xor_sync(0xffffffffu, mx, o);
    mn = a < mn ? a : mn;
    mx = b > mx ? b : mx;
  }
  if (lane != 0) return;
  float fmn, fmx;
  keys_to_range(mn, mx, &fmn, &fmx);
  const double range = fmn <= fmx ? static_cast<double>(fmx) - static_cast<double>(fmn) : 0.0;
  const qmath::Params p = qmath::choose<D>(fmn, fmx, j.error_bound * range, true);
  rowp[k] = p;
  dput32(rowp_bytes + 8 * k, f32_bits(static_cast<float>(p.offset)));
  dput32(rowp_bytes + 8 * k + 4, f32_bits(p.step));
}

// One warp per block of 64 codes: zigzagged codes, escape flags and the block's width.
template <Dtype D>
__global__ void codes_kernel(const EncLayout* lay, Job j, const uint32_t* first_of_id,
                             const qmath::Params* rowp, uint64_t max_blocks, uint32_t* zz,
                             uint32_t* flags, uint64_t* width_bytes, uint8_t* widths) {
  const uint64_t b = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (b >= max_blocks) return;
  const uint64_t n = lay->n_stream;
  uint32_t any = 0;
  for (unsigned half = 0; half < 2; ++half) {
    const uint64_t p = b * kQuantizeBlock + half * 32 + lane;
    uint32_t z = 0, bad = 0;
    if (p < n) {
      const qmath::Params& prm = j.rel_row ? rowp[p / j.L] : lay->msg;
      const float x = load_elem<D>(
          j.src, stream_element(p, j.dedupe, j.L, lay->n_unique, j.n_full_rows, first_of_id));
      bool good;
      const int32_t c = qmath::quantize_one<D>(x, prm, &good);
      z = (static_cast<uint32_t>(c) << 1) ^ static_cast<uint32_t>(c >> 31);
      bad = good ? 0u : 1u;
    }
    if (p < j.count) flags[p] = bad;
    zz[b * kQuantizeBlock + half * 32 + lane] = z;
    any |= z;
  }
  any = __reduce_or_sync(0xffffffffu, any);
  if (lane == 0) {
    const unsigned w = any ? 32u - static_cast<unsigned>(__clz(any)) : 0u;
    widths[b] = static_cast<uint8_t>(w);
    width_bytes[b] = 8ull * w;
  }
}

__global__ void sizes_kernel(EncLayout* lay, Job j, const uint64_t* offsets,
                             const uint64_t* width_bytes, const uint64_t* esc_pos,
                             const uint32_t* flags, FrameState* st) {
  const uint64_t nb = lay->n_blocks, n = lay->n_stream;
  lay->payload = nb ? offsets[nb - 1] + width_bytes[nb - 1] : 0;
  lay->n_esc = n ? esc_pos[n - 1] + flags[n - 1] : 0;
  lay->off_esc_idx = lay->off_payload + lay->payload;
  lay->off_esc_val = lay->off_esc_idx + 4 * lay->n_esc;
  const uint64_t body = lay->off_esc_val + j.es * lay->n_esc;
  lay->stored = body >= j.original ? 1u : 0u;  // the CPU stores any body that is not smaller
  st->err = kNoError;
  st->body_bytes = lay->stored ? j.original : body;
  st->codec = static_cast<uint32_t>(lay->stored ? CodecId::kStored : CodecId::kQuantize);
  st->body_crc = 0;
  if (lay->stored) return;
  uint8_t* h = j.body;
  h[0] = static_cast<uint8_t>(j.mode);
  h[1] = j.dedupe ? kQuantizeFlagDedupe : 0;
  h[2] = h[3] = 0;
  dput32(h + 4, static_cast<uint32_t>(j.L));
  dput64(h + 8, __double_as_longlong(j.error_bound));
  dput64(h + 16, __double_as_longlong(lay->bound_abs));
  dput64(h + 24, __double_as_longlong(lay->msg.offset));
  dput32(h + 32, f32_bits(lay->msg.step));
  dput32(h + 36, static_cast<uint32_t>(lay->n_esc));
  dput32(h + 40, static_cast<uint32_t>(lay->n_unique));
}

// Everything but the payload: map, row parameters, widths, escapes; or the stored copy.
__global__ void sections_kernel(const EncLayout* lay, Job j, const uint32_t* first_of_id,
                                const uint32_t* map_words, const uint8_t* rowp_bytes,
                                const uint8_t* widths, const uint32_t* flags,
                                const uint64_t* esc_pos) {
  const uint64_t tid = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  if (lay->stored) {
    for (uint64_t i = tid; i < j.original; i += stride) j.body[i] = j.src[i];
    return;
  }
  uint8_t* b = j.body;
  for (uint64_t i = tid; i < lay->map_bytes; i += stride) {
    b[kQuantizeHeaderBytes + i] = static_cast<uint8_t>(map_words[i / 4] >> (8 * (i % 4)));
  }
  for (uint64_t i = tid; i < 8 * lay->n_param_rows; i += stride)
    b[lay->off_params + i] = rowp_bytes[i];
  for (uint64_t i = tid; i < lay->n_blocks; i += stride) b[lay->off_widths + i] = widths[i];
  for (uint64_t p = tid; p < lay->n_stream; p += stride) {
    if (!flags[p]) continue;
    const uint64_t k = esc_pos[p];
    dput32(b + lay->off_esc_idx + 4 * k, static_cast<uint32_t>(p));
    const uint64_t e = stream_element(p, j.dedupe, j.L, lay->n_unique, j.n_full_rows, first_of_id);
    for (uint32_t c = 0; c < j.es; ++c) b[lay->off_esc_val + j.es * k + c] = j.src[e * j.es + c];
  }
}

// One warp per block: lane i < width builds the block's 64-bit word i.
__global__ void pack_kernel(const EncLayout* lay, Job j, const uint32_t* zz, const uint8_t* widths,
                            const uint64_t* offsets) {
  __shared__ uint32_t codes[kWarps][kQuantizeBlock];
  const uint64_t b = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lay->stored || b >= lay->n_blocks) return;  // whole warps leave together
  const unsigned w = widths[b];
  codes[warp][lane] = zz[b * kQuantizeBlock + lane];
  codes[warp][lane + 32] = zz[b * kQuantizeBlock + lane + 32];
  __syncwarp();
  if (lane >= w) return;
  const int64_t lo = 64 * static_cast<int64_t>(lane);
  uint64_t word = 0;
  for (int64_t e = lo / w; e <= (lo + 63) / w && e < kQuantizeBlock; ++e) {
    const int64_t pos = e * w - lo;
    word |= pos >= 0 ? static_cast<uint64_t>(codes[warp][e]) << pos
                     : static_cast<uint64_t>(codes[warp][e]) >> -pos;
  }
  dput64(j.body + lay->off_payload + offsets[b] + 8 * lane, word);
}

template <Dtype D>
Status enqueue_typed(const EncodeChunk& c, FrameState* state, ChunkResult* result, cudaStream_t s,
                     Scratch* sc) {
  const QuantizeParams& qp = c.params->quantize;
  Job j{};
  j.src = static_cast<const uint8_t*>(c.src);
  j.body = static_cast<uint8_t*>(c.dst) + kFrameHeaderBytes;
  j.es = static_cast<uint32_t>(dtype_size(D));
  j.count = c.count;
  j.original = c.count * j.es;
  j.mode = static_cast<uint32_t>(qp.mode);
  j.rel_row = qp.mode == BoundMode::kRelRow;
  j.dedupe = qp.dedupe_rows;
  j.L = qp.row_length;
  j.error_bound = qp.error_bound;
  const bool rows = j.dedupe || j.rel_row;
  j.n_full_rows = rows ? c.count / j.L : 0;
  j.tail = rows ? c.count % j.L : c.count;
  const uint64_t max_blocks = (c.count + kQuantizeBlock - 1) / kQuantizeBlock;
  const uint64_t max_param_rows = j.rel_row ? j.n_full_rows + 1 : 0;
  const Status oom{Status::Code::kNoSpace, "gpu: out of device memory (quantize)"};
  EncLayout* lay = nullptr;
  uint32_t *first_of_id = nullptr, *map_words = nullptr, *zz = nullptr, *flags = nullptr;
  qmath::Params* rowp = nullptr;
  uint8_t *rowp_bytes = nullptr, *widths = nullptr, *temp = nullptr;
  uint64_t *width_bytes = nullptr, *offsets = nullptr, *esc_pos = nullptr;
  if (!sc->alloc(&lay, 1) || !sc->alloc(&first_of_id, j.n_full_rows) ||
      !sc->alloc(&map_words, j.n_full_rows + 2) || !sc->alloc(&rowp, max_param_rows) ||
      !sc->alloc(&rowp_bytes, 8 * max_param_rows) || !sc->alloc(&zz, max_blocks * kQuantizeBlock) ||
      !sc->alloc(&flags, c.count) || !sc->alloc(&widths, max_blocks) ||
      !sc->alloc(&width_bytes, max_blocks) || !sc->alloc(&offsets, max_blocks) ||
      !sc->alloc(&esc_pos, c.count)) {
    return oom;
  }
  init_kernel<<<1, 1, 0, s>>>(lay, j);
  if (j.dedupe) {
    Status st =
        enqueue_row_dedupe(j.src, j.n_full_rows, j.L * j.es, lay, first_of_id, map_words, s, sc);
    if (!st.ok()) return st;
  }
  plan_kernel<<<1, 1, 0, s>>>(lay, j);
  if (j.rel_row) {
    row_params_kernel<D><<<grid_for(max_param_rows * 32, kThreads), kThreads, 0, s>>>(
        lay, j, first_of_id, rowp, rowp_bytes);
  } else {
    range_kernel<D><<<grid_for(c.count, kThreads) < 4096 ? grid_for(c.count, kThreads) : 4096,
                      kThreads, 0, s>>>(lay, j, first_of_id);
    message_params_kernel<D><<<1, 1, 0, s>>>(lay, j);
  }
  codes_kernel<D><<<grid_for(max_blocks * 32, kThreads), kThreads, 0, s>>>(
      lay, j, first_of_id, rowp, max_blocks, zz, flags, width_bytes, widths);
  std::size_t t1 = 0, t2 = 0;
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, t1, width_bytes, offsets, max_blocks, s));
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, t2, flags, esc_pos, c.count, s));
  if (!sc->alloc(&temp, t1 > t2 ? t1 : t2)) return oom;
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, t1, width_bytes, offsets, max_blocks, s));
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, t2, flags, esc_pos, c.count, s));
  sizes_kernel<<<1, 1, 0, s>>>(lay, j, offsets, width_bytes, esc_pos, flags, state);
  sections_kernel<<<grid_for(c.count, kThreads) < 8192 ? grid_for(c.count, kThreads) : 8192,
                    kThreads, 0, s>>>(lay, j, first_of_id, map_words, rowp_bytes, widths, flags,
                                      esc_pos);
  pack_kernel<<<grid_for(max_blocks * 32, kThreads), kThreads, 0, s>>>(lay, j, zz, widths, offsets);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return enqueue_encode_finish(static_cast<uint8_t*>(c.dst), D, c.count, c.params->checksum,
                               j.original, state, result, s, sc);
}

}  // namespace

Status enqueue_quantize_encode(const EncodeChunk& c, FrameState* state, ChunkResult* result,
                               cudaStream_t s, Scratch* scratch) {
  if (c.count == 0) return enqueue_stored_encode(c, state, result, s, scratch);
  switch (c.dtype) {
    case Dtype::kFloat32: return enqueue_typed<Dtype::kFloat32>(c, state, result, s, scratch);
    case Dtype::kBfloat16: return enqueue_typed<Dtype::kBfloat16>(c, state, result, s, scratch);
    case Dtype::kFloat16: return enqueue_typed<Dtype::kFloat16>(c, state, result, s, scratch);
    case Dtype::kBytes: break;
  }
  return {Status::Code::kInvalidArgument, "gpu quantize: input must be a float dtype"};
}

}  // namespace squeeze::compress::gpu

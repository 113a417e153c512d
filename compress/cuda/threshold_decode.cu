// The threshold body decoded on the GPU (compress/FORMAT.md, "Threshold body"). Everything
// is validated before the destination is touched: the header, then the positions in
// parallel (bitmap: popcount and padding; varints: terminator bytes, lengths, minimality,
// ranges, and positions from a prefix sum of the deltas). Only a valid body is then
// written: zeros, then the kept values scattered.
#include <cub/device/device_scan.cuh>

#include "compress/cuda/gpu_bodies.h"
#include "compress/cuda/gpu_util.cuh"
#include "compress/half.h"
#include "compress/threshold.h"

namespace squeeze::compress::gpu {
namespace {

constexpr unsigned kThreads = 256;

struct Job {
  const uint8_t* body;
  uint8_t* dst;
  uint64_t body_bytes, count;
  uint32_t dtype, w;
};

struct Plan {
  unsigned long long err;  // (offset << 8) | Status::Code, or kNoError
  uint64_t kept, pos_bytes, values_at, ones, terminators;
  uint32_t mode, value_dtype, vw, pad;
};

unsigned grid_for(uint64_t n) {
  const uint64_t g = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(g == 0 ? 1 : (g > (1u << 20) ? (1u << 20) : g));
}

__device__ inline void fail(Plan* p, uint64_t offset, Status::Code code) {
  report(&p->err, offset, static_cast<uint32_t>(code));
}

__global__ void header_kernel(Job j, Plan* p) {
  *p = Plan{};
  p->err = kNoError;
  if (j.body_bytes < kThresholdHeaderBytes) return fail(p, 0, Status::Code::kTruncated);
  const uint8_t* b = j.body;
  const uint32_t mode = b[0], vd = b[1];
  if (mode != kThresholdBitmap && mode != kThresholdDeltaVarint)
    return fail(p, 0, Status::Code::kCorrupt);
  const bool allowed =
      j.dtype == static_cast<uint32_t>(Dtype::kFloat32) ? (vd >= 1 && vd <= 3) : vd == j.dtype;
  if (!allowed) return fail(p, 1, Status::Code::kCorrupt);
  if (b[2] != 0 || b[3] != 0) return fail(p, 2, Status::Code::kCorrupt);
  const uint64_t kept = dget64(b + 8);
  if (kept > j.count) return fail(p, 8, Status::Code::kCorrupt);
  const uint32_t vw = vd == static_cast<uint32_t>(Dtype::kFloat32) ? 4 : 2;
  const uint64_t values = kept * vw, after = j.body_bytes - kThresholdHeaderBytes;
  if (values > after) return fail(p, kThresholdHeaderBytes, Status::Code::kTruncated);
  const uint64_t pos_bytes = after - values;
  if (mode == kThresholdBitmap) {
    const uint64_t bitmap = (j.count + 7) / 8;
    if (pos_bytes < bitmap) return fail(p, kThresholdHeaderBytes, Status::Code::kTruncated);
    if (pos_bytes > bitmap)
      return fail(p, kThresholdHeaderBytes + bitmap + values, Status::Code::kCorrupt);
    if ((j.count & 7) != 0 && (b[kThresholdHeaderBytes + bitmap - 1] >> (j.count & 7)) != 0) {
      return fail(p, kThresholdHeaderBytes + bitmap - 1, Status::Code::kCorrupt);
    }
  } else if (kept > 0 &&
             (pos_bytes == 0 || (b[kThresholdHeaderBytes + pos_bytes - 1] & 0x80) != 0)) {
    return fail(p, kThresholdHeaderBytes + pos_bytes,
                Status::Code::kCorrupt);  // the last varint runs past
  } else if (kept == 0 && pos_bytes != 0) {
    return fail(p, kThresholdHeaderBytes, Status::Code::kCorrupt);
  }
  p->mode = mode;
  p->value_dtype = vd;
  p->vw = vw;
  p->kept = kept;
  p->pos_bytes = pos_bytes;
  p->values_at = kThresholdHeaderBytes + pos_bytes;
}

// Bitmap: per-byte popcounts (scanned into value ranks) and their total.
__global__ void bitmap_count_kernel(Job j, Plan* p, uint32_t* ones) {
  if (p->err != kNoError || p->mode != kThresholdBitmap) return;
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < p->pos_bytes;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    ones[i] = __popc(j.body[kThresholdHeaderBytes + i]);
    local += ones[i];
  }
  if (local) atomicAdd(reinterpret_cast<unsigned long long*>(&p->ones), local);
}

// Varints: flags the terminator bytes (high bit clear) and counts them.
__global__ void terminators_kernel(Job j, Plan* p, uint32_t* term) {
  if (p->err != kNoError || p->mode != kThresholdDeltaVarint) return;
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < p->pos_bytes;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    term[i] = (j.body[kThresholdHeaderBytes + i] & 0x80) == 0;
    local += term[i];
  }
  if (local) atomicAdd(reinterpret_cast<unsigned long long*>(&p->terminators), local);
}

__global__ void counts_kernel(Plan* p) {
  if (p->err != kNoError) return;
  if (p->mode == kThresholdBitmap && p->ones != p->kept) fail(p, 8, Status::Code::kCorrupt);
  if (p->mode == kThresholdDeltaVarint && p->terminators != p->kept)
    fail(p, 8, Status::Code::kCorrupt);
}

// Each terminator ends varint k = rank: decode it (reading back to the previous terminator)
// and check it as compress/threshold_decode.cc does.
__global__ void varints_kernel(Job j, Plan* p, const uint32_t* term, const uint32_t* rank,
                               uint64_t* step) {
  if (p->err != kNoError || p->mode != kThresholdDeltaVarint) return;
  const uint8_t* pos = j.body + kThresholdHeaderBytes;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < p->pos_bytes;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    if (!term[i]) continue;
    uint64_t start = i;
    while (start > 0 && !term[start - 1] && i - start < 10) --start;
    const uint64_t at = kThresholdHeaderBytes + start, len = i - start + 1;
    if (len > 10) {  // 11 or more bytes: overflows 64 bits
      fail(p, at, Status::Code::kCorrupt);
      continue;
    }
    if (len == 10 && pos[i] > 1) {
      fail(p, at, Status::Code::kCorrupt);  // overflows 64 bits
      continue;
    }
    if (len > 1 && pos[i] == 0) {
      fail(p, at, Status::Code::kCorrupt);  // non-minimal
      continue;
    }
    uint64_t d = 0;
    for (uint64_t q = 0; q < len; ++q) d |= static_cast<uint64_t>(pos[start + q] & 0x7f) << (7 * q);
    if (d >= j.count) {
      fail(p, at, Status::Code::kCorrupt);  // past the element count
      continue;
    }
    step[rank[i]] = d + 1;
  }
}

// After the inclusive scan, position k is sum[k] - 1; the last is the largest.
__global__ void last_position_kernel(Job j, Plan* p, const uint64_t* sum) {
  if (p->err != kNoError || p->mode != kThresholdDeltaVarint || p->kept == 0) return;
  if (sum[p->kept - 1] > j.count) fail(p, kThresholdHeaderBytes, Status::Code::kCorrupt);
}

__global__ void zero_kernel(Job j, const Plan* p) {
  if (p->err != kNoError) return;
  const uint64_t n = j.count * j.w;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    j.dst[i] = 0;
  }
}

__device__ inline void put_value(const Job& j, const Plan* p, uint64_t k, uint64_t i) {
  const uint8_t* v = j.body + p->values_at + k * p->vw;
  uint8_t* o = j.dst + i * j.w;
  if (p->value_dtype == j.dtype) {
    for (uint32_t b = 0; b < j.w; ++b) o[b] = v[b];
    return;
  }
  const auto h = static_cast<uint16_t>(v[0] | v[1] << 8);  // a half widened into float32
  dput32(o, f32_bits(p->value_dtype == static_cast<uint32_t>(Dtype::kBfloat16) ? bf16_to_f32(h)
                                                                               : f16_to_f32(h)));
}

__global__ void scatter_bitmap_kernel(Job j, const Plan* p, const uint32_t* rank) {
  if (p->err != kNoError || p->mode != kThresholdBitmap) return;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < p->pos_bytes;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t k = rank[i];
    for (uint32_t bits = j.body[kThresholdHeaderBytes + i]; bits != 0; bits &= bits - 1) {
      put_value(j, p, k++, 8 * i + (__ffs(bits) - 1));
    }
  }
}

__global__ void scatter_varint_kernel(Job j, const Plan* p, const uint64_t* sum,
                                      uint64_t max_kept) {
  if (p->err != kNoError || p->mode != kThresholdDeltaVarint) return;
  const uint64_t kept = p->kept < max_kept ? p->kept : max_kept;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < kept;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    put_value(j, p, k, sum[k] - 1);
  }
}

__global__ void result_kernel(const Plan* p, uint64_t bytes, BodyResult* r) {
  *r = BodyResult{};
  if (p->err == kNoError) {
    r->bytes = bytes;
  } else {
    r->code = static_cast<uint32_t>(p->err & 0xff);
    r->offset = p->err >> 8;
  }
}

}  // namespace

Status enqueue_threshold_body_decode(const void* body, std::size_t body_bytes, Dtype dtype,
                                     uint64_t count, void* dst, std::size_t dst_capacity,
                                     BodyResult* result, cudaStream_t stream) {
  if (!is_float(dtype) || dtype_size(dtype) == 0)
    return {Status::Code::kUnsupported, "gpu threshold: dtype is not float"};
  const std::size_t w = dtype_size(dtype);
  if (count > dst_capacity / w) {
    return {Status::Code::kInvalidArgument, "gpu threshold: destination holds " +
                                                std::to_string(dst_capacity) + " bytes, " +
                                                std::to_string(count) + " elements need more"};
  }
  if (count >= (1ull << 31))
    return {Status::Code::kInvalidArgument, "gpu threshold: count must be < 2^31"};
  if ((body == nullptr && body_bytes > 0) || result == nullptr || (dst == nullptr && count > 0)) {
    return {Status::Code::kInvalidArgument, "gpu threshold: null body, destination or result"};
  }
  Job j{static_cast<const uint8_t*>(body), static_cast<uint8_t*>(dst), body_bytes, count,
        static_cast<uint32_t>(dtype),      static_cast<uint32_t>(w)};
  // Host-side bounds for the launches: positions take at most the body, kept values at most count.
  const uint64_t max_pos = body_bytes;
  const uint64_t max_kept = count < body_bytes ? count : body_bytes;
  Scratch sc(stream);
  const Status oom{Status::Code::kNoSpace, "gpu threshold: out of device memory"};
  Plan* plan = nullptr;
  uint32_t *flags = nullptr, *rank = nullptr;
  uint64_t *step = nullptr, *sum = nullptr;
  if (!sc.alloc(&plan, 1) || !sc.alloc(&flags, max_pos) || !sc.alloc(&rank, max_pos) ||
      !sc.alloc(&step, max_kept) || !sc.alloc(&sum, max_kept)) {
    return oom;
  }
  std::size_t t1 = 0, t2 = 0;
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, t1, flags, rank,
                                                 static_cast<int64_t>(max_pos), stream));
  SQUEEZE_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, t2, step, sum,
                                                 static_cast<int64_t>(max_kept), stream));
  uint8_t* temp = nullptr;
  if (!sc.alloc(&temp, t1 > t2 ? t1 : t2)) return oom;
  header_kernel<<<1, 1, 0, stream>>>(j, plan);
  SQUEEZE_CUDA_TRY(
      cudaMemsetAsync(flags, 0, max_pos * sizeof(uint32_t) + (max_pos == 0 ? 4 : 0), stream));
  SQUEEZE_CUDA_TRY(
      cudaMemsetAsync(step, 0, (max_kept == 0 ? 1 : max_kept) * sizeof(uint64_t), stream));
  bitmap_count_kernel<<<grid_for(max_pos), kThreads, 0, stream>>>(j, plan, flags);
  terminators_kernel<<<grid_for(max_pos), kThreads, 0, stream>>>(j, plan, flags);
  counts_kernel<<<1, 1, 0, stream>>>(plan);
  if (max_pos > 0) {
    SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, t1, flags, rank,
                                                   static_cast<int64_t>(max_pos), stream));
  }
  varints_kernel<<<grid_for(max_pos), kThreads, 0, stream>>>(j, plan, flags, rank, step);
  if (max_kept > 0) {
    SQUEEZE_CUDA_TRY(
        cub::DeviceScan::InclusiveSum(temp, t2, step, sum, static_cast<int64_t>(max_kept), stream));
  }
  last_position_kernel<<<1, 1, 0, stream>>>(j, plan, sum);
  zero_kernel<<<grid_for(count * w), kThreads, 0, stream>>>(j, plan);
  scatter_bitmap_kernel<<<grid_for(max_pos), kThreads, 0, stream>>>(j, plan, rank);
  scatter_varint_kernel<<<grid_for(max_kept), kThreads, 0, stream>>>(j, plan, sum, max_kept);
  result_kernel<<<1, 1, 0, stream>>>(plan, count * w, result);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu

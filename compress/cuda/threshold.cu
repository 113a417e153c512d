// The threshold body on the GPU, byte-identical to compress/threshold_encode.cc (without
// error feedback): tau from the same deterministic sample (radix-sorted instead of
// nth_element: the same order statistic), keep flags, a prefix sum that lists the kept
// positions, varint sizes and their prefix sum, then independent writes of the header,
// the positions (delta varints or bitmap, whichever is smaller) and the values.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "compress/cuda/gpu_bodies.h"
#include "compress/cuda/gpu_util.cuh"
#include "compress/half.h"
#include "compress/threshold.h"
#include "compress/threshold_sample.h"

namespace squeeze::compress::gpu {
namespace {

constexpr unsigned kThreads = 256;

struct Job {
  const uint8_t* src;
  uint8_t* body;
  uint64_t count, limit, kept_cap;  // limit: largest body allowed; kept_cap: positions room
  double keep;
  uint32_t sample_size, dtype, value_dtype, w, vw;
};

struct Plan {
  uint32_t tau_bits;  // float32 bits of tau
  uint32_t tau_dom;   // threshold on the input's magnitude bits
  uint64_t finite, kept, varint_bytes, pos_bytes, body;
  uint32_t mode, fits;
};

unsigned grid_for(uint64_t n) {
  const uint64_t g = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(g == 0 ? 1 : (g > (1u << 20) ? (1u << 20) : g));
}

__device__ inline uint32_t load_bits(const Job& j, uint64_t i) {
  return j.w == 4 ? dget32(j.src + 4 * i)
                  : static_cast<uint32_t>(j.src[2 * i] | j.src[2 * i + 1] << 8);
}

__device__ inline float bits_to_float(uint32_t dtype, uint32_t u) {
  if (dtype == static_cast<uint32_t>(Dtype::kFloat32)) return f32_from_bits(u);
  const auto h = static_cast<uint16_t>(u);
  return dtype == static_cast<uint32_t>(Dtype::kBfloat16) ? bf16_to_f32(h) : f16_to_f32(h);
}

// Keep test on the input's own bits (compress/threshold_scan.h).
__device__ inline bool kept(const Job& j, const Plan* plan, uint64_t i) {
  const uint32_t mask = j.w == 4 ? 0x7fffffffu : 0x7fffu;
  return (load_bits(j, i) & mask) >= plan->tau_dom;
}

__global__ void sample_kernel(Job j, uint64_t n, uint32_t* keys, uint32_t* finite) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const float y =
        bits_to_float(j.dtype, load_bits(j, threshold_sample_position(i, j.count, j.sample_size)));
    const bool ok = isfinite(y);
    keys[i] = ok ? f32_bits(y) & 0x7fffffffu : 0xffffffffu;  // non-finite sort last
    finite[i] = ok;
  }
}

__device__ inline uint32_t half_tau_bits(uint32_t dtype, float tau) {
  const bool bf = dtype == static_cast<uint32_t>(Dtype::kBfloat16);
  uint32_t h = (bf ? f32_to_bf16(tau) : f32_to_f16(tau)) & 0x7fffu;
  const float back =
      bf ? bf16_to_f32(static_cast<uint16_t>(h)) : f16_to_f32(static_cast<uint16_t>(h));
  if (back < tau) ++h;
  return h;
}

// tau from the sorted sample (or the caller's), and its form in the input domain.
__global__ void tau_kernel(Job j, Plan* plan, const uint32_t* sorted, const uint32_t* finite_sum,
                           bool given, uint32_t given_bits) {
  uint32_t tau = given_bits;
  if (!given) {
    const uint64_t f = *finite_sum;
    if (f == 0) {
      tau = 0x7f800000u;
    } else {
      tau = sorted[threshold_quantile_index(f, j.keep)];
      tau = tau < 1u ? 1u : tau;  // at least the smallest positive float
    }
  }
  plan->tau_bits = tau;
  plan->tau_dom = j.w == 4 ? tau : half_tau_bits(j.dtype, f32_from_bits(tau));
}

__global__ void flags_kernel(Job j, const Plan* plan, uint32_t* flags) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < j.count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    flags[i] = kept(j, plan, i);
  }
}

__global__ void list_kernel(Job j, const uint32_t* flags, const uint32_t* idx, uint32_t* positions,
                            Plan* plan) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < j.count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    if (flags[i] && idx[i] < j.kept_cap) positions[idx[i]] = static_cast<uint32_t>(i);
    if (i == j.count - 1) plan->kept = static_cast<uint64_t>(idx[i]) + flags[i];
  }
}

__global__ void zero_kept_kernel(Plan* plan) { plan->kept = 0; }

__device__ inline uint64_t gap(const uint32_t* positions, uint64_t k) {
  return k == 0 ? positions[0] : static_cast<uint64_t>(positions[k]) - positions[k - 1] - 1;
}

__global__ void varint_len_kernel(Job j, const Plan* plan, const uint32_t* positions,
                                  uint32_t* len) {
  const uint64_t kept = plan->kept < j.kept_cap ? plan->kept : j.kept_cap;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < j.kept_cap;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t d = k < kept ? gap(positions, k) : 0;
    len[k] = k < kept ? 1 + (d == 0 ? 0 : (63 - __clzll(static_cast<long long>(d))) / 7) : 0;
  }
}

__global__ void plan_kernel(Job j, Plan* plan, const uint32_t* len, const uint32_t* off,
                            BodyResult* result) {
  const uint64_t kept = plan->kept;
  plan->varint_bytes = kept == 0 ? 0 : (kept <= j.kept_cap ? off[kept - 1] + len[kept - 1] : ~0ull);
  const uint64_t bitmap = (j.count + 7) / 8;
  plan->mode = plan->varint_bytes < bitmap ? kThresholdDeltaVarint : kThresholdBitmap;
  plan->pos_bytes = plan->mode == kThresholdDeltaVarint ? plan->varint_bytes : bitmap;
  plan->body = kThresholdHeaderBytes + plan->pos_bytes + kept * j.vw;
  plan->fits = kept <= j.kept_cap && j.limit >= kThresholdHeaderBytes && plan->body <= j.limit;
  *result = BodyResult{};
  result->tau = f32_from_bits(plan->tau_bits);
  if (plan->fits) {
    result->bytes = plan->body;
  } else {
    result->code = static_cast<uint32_t>(Status::Code::kNoSpace);
  }
  if (!plan->fits) return;
  uint8_t* h = j.body;
  h[0] = static_cast<uint8_t>(plan->mode);
  h[1] = static_cast<uint8_t>(j.value_dtype);
  h[2] = h[3] = 0;
  dput32(h + 4, plan->tau_bits);
  dput64(h + 8, kept);
}

__global__ void varints_kernel(Job j, const Plan* plan, const uint32_t* positions,
                               const uint32_t* off) {
  if (!plan->fits || plan->mode != kThresholdDeltaVarint) return;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < plan->kept;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t d = gap(positions, k);
    uint8_t* p = j.body + kThresholdHeaderBytes + off[k];
    while (d >= 0x80) {
      *p++ = static_cast<uint8_t>(d | 0x80);
      d >>= 7;
    }
    *p = static_cast<uint8_t>(d);
  }
}

__global__ void bitmap_kernel(Job j, const Plan* plan) {
  if (!plan->fits || plan->mode != kThresholdBitmap) return;
  const uint64_t bytes = (j.count + 7) / 8;
  for (uint64_t b = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; b < bytes;
       b += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t v = 0;
    for (uint32_t e = 0; e < 8 && 8 * b + e < j.count; ++e)
      v |= static_cast<uint32_t>(kept(j, plan, 8 * b + e)) << e;
    j.body[kThresholdHeaderBytes + b] = static_cast<uint8_t>(v);
  }
}

__device__ inline uint16_t f32_to_f16_saturating(float f) {  // as compress/threshold_values.h
  const uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) < 0x7f800000u && (u & 0x7fffffffu) > 0x477fe000u) {
    return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7bffu);
  }
  return f32_to_f16(f);
}

__global__ void values_kernel(Job j, const Plan* plan, const uint32_t* positions) {
  if (!plan->fits) return;
  uint8_t* values = j.body + kThresholdHeaderBytes + plan->pos_bytes;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < plan->kept;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint32_t u = load_bits(j, positions[k]);
    uint8_t* o = values + k * j.vw;
    if (j.value_dtype == j.dtype) {
      for (uint32_t b = 0; b < j.vw; ++b) o[b] = static_cast<uint8_t>(u >> (8 * b));
    } else {  // float32 input narrowed
      const float y = f32_from_bits(u);
      const uint16_t h = j.value_dtype == static_cast<uint32_t>(Dtype::kBfloat16)
                             ? f32_to_bf16(y)
                             : f32_to_f16_saturating(y);
      o[0] = static_cast<uint8_t>(h);
      o[1] = static_cast<uint8_t>(h >> 8);
    }
  }
}

}  // namespace

Status enqueue_threshold_body_encode(Dtype dtype, const void* src, uint64_t count,
                                     const ThresholdParams& p, const float* tau,
                                     bool allow_expansion, void* dst, std::size_t dst_capacity,
                                     BodyResult* result, cudaStream_t stream) {
  if (!is_float(dtype) || dtype_size(dtype) == 0)
    return {Status::Code::kInvalidArgument, "gpu threshold: needs a float dtype"};
  if (!(p.keep > 0.0 && p.keep <= 1.0))
    return {Status::Code::kInvalidArgument, "gpu threshold: keep must be in (0, 1]"};
  if (p.sample_size == 0)
    return {Status::Code::kInvalidArgument, "gpu threshold: sample_size must be at least 1"};
  if (!is_float(p.value_dtype) || dtype_size(p.value_dtype) == 0) {
    return {Status::Code::kInvalidArgument, "gpu threshold: value dtype must be a float dtype"};
  }
  // Positions and varint offsets are 32-bit: with count < 2^31 the varints total < 2^32.
  if (count >= (1ull << 31))
    return {Status::Code::kInvalidArgument, "gpu threshold: count must be < 2^31"};
  if ((src == nullptr && count > 0) || dst == nullptr || result == nullptr) {
    return {Status::Code::kInvalidArgument, "gpu threshold: null source, destination or result"};
  }
  const Dtype vd = threshold_value_dtype(dtype, p.value_dtype);
  Job j{};
  j.src = static_cast<const uint8_t*>(src);
  j.body = static_cast<uint8_t*>(dst);
  j.count = count;
  j.keep = p.keep;
  j.sample_size = p.sample_size;
  j.dtype = static_cast<uint32_t>(dtype);
  j.value_dtype = static_cast<uint32_t>(vd);
  j.w = static_cast<uint32_t>(dtype_size(dtype));
  j.vw = static_cast<uint32_t>(dtype_size(vd));
  const uint64_t input = count * j.w;
  j.limit =
      allow_expansion ? dst_capacity : std::min<uint64_t>(dst_capacity, input == 0 ? 0 : input - 1);
  j.kept_cap = j.limit >= kThresholdHeaderBytes
                   ? std::min<uint64_t>(count, (j.limit - kThresholdHeaderBytes) / j.vw)
                   : 0;

  Scratch sc(stream);
  const Status oom{Status::Code::kNoSpace, "gpu threshold: out of device memory"};
  Plan* plan = nullptr;
  uint32_t *flags = nullptr, *idx = nullptr, *positions = nullptr, *len = nullptr, *off = nullptr;
  uint32_t *keys = nullptr, *sorted = nullptr, *finite = nullptr, *finite_sum = nullptr;
  const uint64_t ns = threshold_sample_count(count, p.sample_size);
  const bool search = tau == nullptr;
  if (!sc.alloc(&plan, 1) || !sc.alloc(&flags, count) || !sc.alloc(&idx, count) ||
      !sc.alloc(&positions, j.kept_cap) || !sc.alloc(&len, j.kept_cap) ||
      !sc.alloc(&off, j.kept_cap) || !sc.alloc(&finite_sum, 1)) {
    return oom;
  }
  uint8_t* temp = nullptr;
  std::size_t temp_bytes = 0, t = 0;
  if (search && ns > 0) {
    if (!sc.alloc(&keys, ns) || !sc.alloc(&sorted, ns) || !sc.alloc(&finite, ns)) return oom;
    SQUEEZE_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, t, keys, sorted,
                                                    static_cast<int64_t>(ns), 0, 32, stream));
    temp_bytes = std::max(temp_bytes, t);
    SQUEEZE_CUDA_TRY(
        cub::DeviceReduce::Sum(nullptr, t, finite, finite_sum, static_cast<int64_t>(ns), stream));
    temp_bytes = std::max(temp_bytes, t);
  }
  SQUEEZE_CUDA_TRY(
      cub::DeviceScan::ExclusiveSum(nullptr, t, flags, idx, static_cast<int64_t>(count), stream));
  temp_bytes = std::max(temp_bytes, t);
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, t, len, off,
                                                 static_cast<int64_t>(j.kept_cap), stream));
  temp_bytes = std::max(temp_bytes, t);
  if (!sc.alloc(&temp, temp_bytes)) return oom;

  if (search && ns > 0) {
    sample_kernel<<<grid_for(ns), kThreads, 0, stream>>>(j, ns, keys, finite);
    t = temp_bytes;
    SQUEEZE_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp, t, keys, sorted, static_cast<int64_t>(ns),
                                                    0, 32, stream));
    t = temp_bytes;
    SQUEEZE_CUDA_TRY(
        cub::DeviceReduce::Sum(temp, t, finite, finite_sum, static_cast<int64_t>(ns), stream));
  } else {
    SQUEEZE_CUDA_TRY(cudaMemsetAsync(finite_sum, 0, sizeof(uint32_t), stream));
  }
  const uint32_t given = search ? 0 : f32_bits(*tau);
  tau_kernel<<<1, 1, 0, stream>>>(j, plan, sorted, finite_sum, !search, given);
  if (count > 0) {
    flags_kernel<<<grid_for(count), kThreads, 0, stream>>>(j, plan, flags);
    t = temp_bytes;
    SQUEEZE_CUDA_TRY(
        cub::DeviceScan::ExclusiveSum(temp, t, flags, idx, static_cast<int64_t>(count), stream));
    list_kernel<<<grid_for(count), kThreads, 0, stream>>>(j, flags, idx, positions, plan);
  } else {
    zero_kept_kernel<<<1, 1, 0, stream>>>(plan);
  }
  if (j.kept_cap > 0) {
    varint_len_kernel<<<grid_for(j.kept_cap), kThreads, 0, stream>>>(j, plan, positions, len);
    t = temp_bytes;
    SQUEEZE_CUDA_TRY(
        cub::DeviceScan::ExclusiveSum(temp, t, len, off, static_cast<int64_t>(j.kept_cap), stream));
  }
  plan_kernel<<<1, 1, 0, stream>>>(j, plan, len, off, result);
  varints_kernel<<<grid_for(j.kept_cap), kThreads, 0, stream>>>(j, plan, positions, off);
  bitmap_kernel<<<grid_for((count + 7) / 8), kThreads, 0, stream>>>(j, plan);
  values_kernel<<<grid_for(j.kept_cap), kThreads, 0, stream>>>(j, plan, positions);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu

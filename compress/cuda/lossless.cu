// The lossless body on the GPU, byte-identical to compress/lossless_encode.cc: one thread
// block per 4096-byte block encodes it into a staging slot (zero / raw / packed by the same
// rules), a prefix sum of the block sizes places every block, then one copy pass builds the
// body. See compress/FORMAT.md, "Lossless body".
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include "compress/cuda/gpu_bodies.h"
#include "compress/cuda/gpu_util.cuh"
#include "compress/cuda/lossless_gpu.cuh"
#include "compress/lossless.h"

namespace squeeze::compress::gpu {
namespace {

constexpr unsigned kThreads = 256;
constexpr uint32_t kBlock = kLosslessBlockBytes;

__global__ void widen_sizes_kernel(const uint32_t* sizes, uint64_t n, uint64_t* out) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = sizes[i];
}

struct EncShared {
  uint8_t data[kBlock];
  uint8_t nz[kBlock];  // 1 per nonzero element
  uint8_t gathered[kBlock];
  uint8_t planes[kBlock];
  uint8_t l0[kBlock / 8];
  uint8_t group_any[kBlock / kLosslessGroupBytes];
  uint32_t seg_k[16], seg_base[16], seg_size[16], seg_off[16];
  uint32_t nonzero_elems, zero_groups, zero_group_bytes, header, total;
};

__global__ void __launch_bounds__(kThreads)
    encode_blocks_kernel(const uint8_t* src, uint64_t bytes, uint32_t w, uint8_t* stage,
                         uint32_t* sizes) {
  __shared__ EncShared sh;
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  __shared__ typename Scan::TempStorage scan_tmp;
  const uint64_t b = blockIdx.x;
  const uint32_t len =
      static_cast<uint32_t>(bytes - b * kBlock < kBlock ? bytes - b * kBlock : kBlock);
  const uint8_t* in = src + b * kBlock;
  uint8_t* out = stage + b * kBlock;
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  const uint32_t elems = len / w;
  if (t == 0) {
    sh.nonzero_elems = sh.zero_groups = sh.zero_group_bytes = 0;
  }
  for (uint32_t i = t; i < len; i += kThreads) sh.data[i] = in[i];
  __syncthreads();
  uint32_t local = 0;
  for (uint32_t e = t; e < elems; e += kThreads) {
    uint8_t any = 0;
    for (uint32_t q = 0; q < w; ++q) any |= sh.data[e * w + q];
    sh.nz[e] = any != 0;
    local += sh.nz[e];
  }
  atomicAdd(&sh.nonzero_elems, local);
  __syncthreads();
  const uint32_t nonzero_elems = sh.nonzero_elems;
  if (nonzero_elems == 0) {
    if (t == 0) sizes[b] = 0;
    return;
  }

  // Map granularity, exactly as the CPU decides it.
  const uint32_t per_group = kLosslessGroupBytes / w;
  const uint32_t groups16 = (elems + per_group - 1) / per_group;
  for (uint32_t g = t; g < groups16; g += kThreads) {
    const uint32_t e0 = g * per_group, e1 = e0 + per_group < elems ? e0 + per_group : elems;
    uint8_t any = 0;
    for (uint32_t e = e0; e < e1; ++e) any |= sh.nz[e];
    sh.group_any[g] = any;
    if (any == 0) {
      atomicAdd(&sh.zero_groups, 1u);
      atomicAdd(&sh.zero_group_bytes, (e1 - e0) * w);
    }
  }
  __syncthreads();
  const int64_t gain_elem =
      static_cast<int64_t>(8ull * w * (elems - nonzero_elems)) - static_cast<int64_t>(elems);
  const int64_t gain_group =
      static_cast<int64_t>(8ull * sh.zero_group_bytes) - static_cast<int64_t>(groups16);
  const bool by_element = gain_elem > gain_group;
  const uint32_t ge = by_element ? 1 : per_group;
  const uint32_t groups = by_element ? elems : groups16;
  const uint8_t* bit = by_element ? sh.nz : sh.group_any;
  const uint32_t nonzero_groups = by_element ? nonzero_elems : groups16 - sh.zero_groups;
  const uint32_t l0_bytes = (groups + 7) / 8, l1_bytes = (l0_bytes + 7) / 8;
  for (uint32_t j = t; j < l0_bytes; j += kThreads) {
    uint32_t byte = 0;
    for (uint32_t i = 0; i < 8 && 8 * j + i < groups; ++i)
      byte |= static_cast<uint32_t>(bit[8 * j + i]) << i;
    sh.l0[j] = static_cast<uint8_t>(byte);
  }
  __syncthreads();
  if (t == 0) {  // granularity, L1, the nonzero L0 bytes (at most 1 + 64 + 512 bytes)
    out[0] = by_element ? kLosslessMapElements : kLosslessMapGroups;
    for (uint32_t i = 0; i < l1_bytes; ++i) out[1 + i] = 0;
    uint32_t k = 1 + l1_bytes;
    for (uint32_t j = 0; j < l0_bytes; ++j) {
      if (sh.l0[j] == 0) continue;
      out[1 + (j >> 3)] = static_cast<uint8_t>(out[1 + (j >> 3)] | (1u << (j & 7)));
      out[k++] = sh.l0[j];
    }
    sh.header = k;
  }

  // Gather the nonzero groups (16 map bits per thread cover the 4096 possible groups).
  constexpr unsigned kPer = kBlock / kThreads;
  uint32_t before[kPer];
  for (unsigned i = 0; i < kPer; ++i) {
    const uint32_t g = t * kPer + i;
    before[i] = g < groups ? bit[g] : 0;
  }
  Scan(scan_tmp).ExclusiveSum(before, before);
  const bool gather = nonzero_groups < groups;
  const uint32_t gbytes = ge * w;
  if (gather) {
    for (unsigned i = 0; i < kPer; ++i) {
      const uint32_t g = t * kPer + i;
      if (g >= groups || bit[g] == 0) continue;
      const uint32_t off = g * gbytes, n = gbytes < len - off ? gbytes : len - off;
      for (uint32_t q = 0; q < n; ++q) sh.gathered[before[i] * gbytes + q] = sh.data[off + q];
    }
  }
  __syncthreads();
  const uint32_t last = groups - 1;
  const uint32_t bytes_kept = nonzero_groups * gbytes - (bit[last] ? groups * gbytes - len : 0);
  const uint8_t* data = gather ? sh.gathered : sh.data;
  const uint32_t m = bytes_kept / w;
  for (uint32_t i = t; i < m; i += kThreads) split_element(data, i, m, w, sh.planes);
  __syncthreads();

  // Segments: one warp each for the width, then in-order offsets, then the writes.
  const uint32_t per_plane = (m + kLosslessSegment - 1) / kLosslessSegment;
  const uint32_t nseg = w * per_plane;
  for (uint32_t sg = warp; sg < nseg; sg += kThreads / 32) {
    const uint32_t p = sg / per_plane, s0 = (sg % per_plane) * kLosslessSegment;
    const uint32_t s = m - s0 < kLosslessSegment ? m - s0 : kLosslessSegment;
    const uint8_t* v = sh.planes + p * m + s0;
    uint32_t lo = 255, hi = 0;
    for (uint32_t i = lane; i < s; i += 32) {
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const uint32_t a = __shfl_xor_sync(0xffffffffu, lo, o),
                     c = __shfl_xor_sync(0xffffffffu, hi, o);
      lo = a < lo ? a : lo;
      hi = c > hi ? c : hi;
    }
    if (lane == 0) {
      const uint32_t k = hi == lo ? 0 : 32 - __clz(hi - lo);
      const uint32_t packed = 2 + (s * k + 7) / 8;
      const bool pack = packed < 1 + s;
      sh.seg_k[sg] = pack ? k : kLosslessSegmentRaw;
      sh.seg_base[sg] = lo;
      sh.seg_size[sg] = pack ? packed : 1 + s;
    }
  }
  __syncthreads();
  if (t == 0) {
    uint32_t off = sh.header;
    for (uint32_t sg = 0; sg < nseg; ++sg) {
      sh.seg_off[sg] = off;
      off += sh.seg_size[sg];
    }
    sh.total = off;
  }
  __syncthreads();
  if (sh.total >= len) {  // raw: the place pass copies the input itself
    if (t == 0) sizes[b] = len;
    return;
  }
  for (uint32_t sg = warp; sg < nseg; sg += kThreads / 32) {
    const uint32_t p = sg / per_plane, s0 = (sg % per_plane) * kLosslessSegment;
    const uint32_t s = m - s0 < kLosslessSegment ? m - s0 : kLosslessSegment;
    const uint8_t* v = sh.planes + p * m + s0;
    uint8_t* o = out + sh.seg_off[sg];
    const uint32_t k = sh.seg_k[sg];
    const auto base = static_cast<uint8_t>(sh.seg_base[sg]);
    if (lane == 0) {
      o[0] = static_cast<uint8_t>(k);
      if (k < kLosslessSegmentRaw) o[1] = base;
    }
    if (k == kLosslessSegmentRaw) {
      for (uint32_t i = lane; i < s; i += 32) o[1 + i] = v[i];
    } else if (k > 0) {
      for (uint32_t gi = lane; gi * 8 < s; gi += 32) {  // 8 values -> k bytes
        uint64_t acc = 0;
        for (uint32_t j = 0; j < 8 && gi * 8 + j < s; ++j) {
          acc |= static_cast<uint64_t>(static_cast<uint8_t>(v[gi * 8 + j] - base)) << (j * k);
        }
        const uint32_t nb = gi * 8 + 8 <= s ? k : ((s - gi * 8) * k + 7) / 8;
        for (uint32_t q = 0; q < nb; ++q) o[2 + gi * k + q] = static_cast<uint8_t>(acc >> (8 * q));
      }
    }
  }
  if (t == 0) sizes[b] = sh.total;
}

struct PlaceJob {
  const uint8_t* src;
  const uint8_t* stage;
  uint8_t* body;
  uint64_t bytes, blocks;
  uint32_t w;
};

__global__ void place_kernel(PlaceJob j, const uint32_t* sizes, const uint64_t* offsets,
                             BodyResult* result) {
  const uint64_t b = blockIdx.x;
  const uint64_t len = j.bytes - b * kBlock < kBlock ? j.bytes - b * kBlock : kBlock;
  const uint32_t size = sizes[b];
  uint8_t* o = j.body + kLosslessHeaderBytes + 2 * j.blocks + offsets[b];
  const uint8_t* from = size == len ? j.src + b * kBlock : j.stage + b * kBlock;
  for (uint32_t i = threadIdx.x; i < size; i += blockDim.x) o[i] = from[i];
  if (threadIdx.x == 0) {
    j.body[kLosslessHeaderBytes + 2 * b] = static_cast<uint8_t>(size);
    j.body[kLosslessHeaderBytes + 2 * b + 1] = static_cast<uint8_t>(size >> 8);
  }
  if (b == 0 && threadIdx.x == 0) {
    j.body[0] = static_cast<uint8_t>(kLosslessBlockShift);
    j.body[1] = static_cast<uint8_t>(kLosslessGroupShift);
    j.body[2] = j.w > 1 ? kLosslessFlagRotate : 0;
    j.body[3] = 0;
  }
  if (b == j.blocks - 1 && threadIdx.x == 0) {
    *result = BodyResult{};
    result->bytes = kLosslessHeaderBytes + 2 * j.blocks + offsets[b] + size;
  }
}

__global__ void empty_body_kernel(uint8_t* body, uint32_t w, BodyResult* result) {
  body[0] = static_cast<uint8_t>(kLosslessBlockShift);
  body[1] = static_cast<uint8_t>(kLosslessGroupShift);
  body[2] = w > 1 ? kLosslessFlagRotate : 0;
  body[3] = 0;
  *result = BodyResult{};
  result->bytes = kLosslessHeaderBytes;
}

}  // namespace

Status enqueue_lossless_body_encode(Dtype dtype, const void* src, uint64_t count, void* dst,
                                    std::size_t dst_capacity, BodyResult* result,
                                    cudaStream_t stream) {
  const std::size_t w = dtype_size(dtype);
  if (w == 0) return {Status::Code::kInvalidArgument, "gpu lossless: unknown dtype"};
  if (count > (~0ull >> 4) / w)
    return {Status::Code::kInvalidArgument, "gpu lossless: count too large"};
  const uint64_t bytes = count * w;
  if (bytes > 0 && src == nullptr)
    return {Status::Code::kInvalidArgument, "gpu lossless: null source"};
  if (dst == nullptr || result == nullptr || dst_capacity < lossless_body_bound_bytes(bytes)) {
    return {Status::Code::kNoSpace, "gpu lossless: dst holds " + std::to_string(dst_capacity) +
                                        " bytes, needs " +
                                        std::to_string(lossless_body_bound_bytes(bytes))};
  }
  auto* body = static_cast<uint8_t*>(dst);
  const uint64_t blocks = (bytes + kBlock - 1) / kBlock;
  if (blocks == 0) {
    empty_body_kernel<<<1, 1, 0, stream>>>(body, static_cast<uint32_t>(w), result);
    SQUEEZE_CUDA_TRY(cudaGetLastError());
    return Status::Ok();
  }
  if (blocks > 0x7fffffffull)
    return {Status::Code::kInvalidArgument, "gpu lossless: too many blocks"};
  Scratch scratch(stream);
  uint8_t* stage = nullptr;
  uint32_t* sizes = nullptr;
  uint64_t* sizes64 = nullptr;
  uint64_t* offsets = nullptr;
  const Status oom{Status::Code::kNoSpace, "gpu lossless: out of device memory"};
  if (!scratch.alloc(&stage, blocks * kBlock) || !scratch.alloc(&sizes, blocks) ||
      !scratch.alloc(&sizes64, blocks) || !scratch.alloc(&offsets, blocks)) {
    return oom;
  }
  const auto grid = static_cast<unsigned>(blocks);
  encode_blocks_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const uint8_t*>(src), bytes,
                                                      static_cast<uint32_t>(w), stage, sizes);
  widen_sizes_kernel<<<static_cast<unsigned>((blocks + 255) / 256), 256, 0, stream>>>(sizes, blocks,
                                                                                      sizes64);
  std::size_t temp_bytes = 0;
  SQUEEZE_CUDA_TRY(
      cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, sizes64, offsets, blocks, stream));
  uint8_t* temp = nullptr;
  if (!scratch.alloc(&temp, temp_bytes)) return oom;
  SQUEEZE_CUDA_TRY(
      cub::DeviceScan::ExclusiveSum(temp, temp_bytes, sizes64, offsets, blocks, stream));
  PlaceJob j{static_cast<const uint8_t*>(src), stage, body, bytes, blocks,
             static_cast<uint32_t>(w)};
  place_kernel<<<grid, 256, 0, stream>>>(j, sizes, offsets, result);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu

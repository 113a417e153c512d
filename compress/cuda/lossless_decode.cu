// The lossless body decoded on the GPU: the header, the size table and every packed
// block's structure are validated first (one thread per block, failures meet in an
// atomicMin so the report is the smallest offset); only a body with no failure is then
// decoded, one thread block per 4096-byte block. See compress/FORMAT.md, "Lossless body".
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

struct Job {
  const uint8_t* body;
  uint8_t* dst;
  uint64_t body_bytes, bytes, blocks;
  uint32_t w;
};

struct State {
  unsigned long long err;  // (offset << 8) | code, or kNoError
};

__device__ inline uint32_t block_len(const Job& j, uint64_t b) {
  return static_cast<uint32_t>(j.bytes - b * kBlock < kBlock ? j.bytes - b * kBlock : kBlock);
}

__device__ inline void fail(State* st, uint64_t offset, Status::Code code) {
  report(&st->err, offset, static_cast<uint32_t>(code));
}

__global__ void header_kernel(Job j, State* st) {
  st->err = kNoError;
  if (j.body_bytes < kLosslessHeaderBytes) return fail(st, 0, Status::Code::kTruncated);
  if (j.body[0] != kLosslessBlockShift || j.body[1] != kLosslessGroupShift ||
      j.body[2] != (j.w > 1 ? kLosslessFlagRotate : 0) || j.body[3] != 0) {
    return fail(st, 0, Status::Code::kCorrupt);
  }
  if ((j.body_bytes - kLosslessHeaderBytes) / 2 < j.blocks)
    return fail(st, 4, Status::Code::kTruncated);
}

__global__ void sizes_kernel(Job j, State* st, uint64_t* sizes) {
  const uint64_t b = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (b >= j.blocks) return;
  if (st->err != kNoError) {  // the table may lie past the body
    sizes[b] = 0;
    return;
  }
  const uint32_t size =
      j.body[kLosslessHeaderBytes + 2 * b] | j.body[kLosslessHeaderBytes + 2 * b + 1] << 8;
  if (size > block_len(j, b)) fail(st, kLosslessHeaderBytes + 2 * b, Status::Code::kCorrupt);
  sizes[b] = size;
}

__global__ void total_kernel(Job j, State* st, const uint64_t* sizes, const uint64_t* offsets) {
  if (st->err != kNoError) return;
  const uint64_t total =
      kLosslessHeaderBytes + 2 * j.blocks + offsets[j.blocks - 1] + sizes[j.blocks - 1];
  if (total > j.body_bytes) fail(st, j.body_bytes, Status::Code::kTruncated);
  if (total < j.body_bytes) fail(st, total, Status::Code::kCorrupt);
}

__global__ void total_empty_kernel(Job j, State* st) {  // no blocks: the body is the header
  if (st->err == kNoError && j.body_bytes != kLosslessHeaderBytes)
    fail(st, kLosslessHeaderBytes, Status::Code::kCorrupt);
}

// The structure of one packed block, as compress/lossless_decode.cc's check_packed.
__device__ void check_block(const Job& j, State* st, uint64_t at, uint32_t size, uint32_t len) {
  const uint8_t* p = j.body + at;
  const uint32_t n = size;
  if (p[0] != kLosslessMapGroups && p[0] != kLosslessMapElements)
    return fail(st, at, Status::Code::kCorrupt);
  const uint32_t gb = p[0] == kLosslessMapElements ? j.w : kLosslessGroupBytes;
  const uint32_t groups = (len + gb - 1) / gb, l0_bytes = (groups + 7) / 8,
                 l1_bytes = (l0_bytes + 7) / 8;
  if (n - 1 < l1_bytes) return fail(st, at + 1, Status::Code::kCorrupt);
  uint32_t k = 1 + l1_bytes, nonzero = 0, last_byte = 0;
  for (uint32_t j8 = 0; j8 < l1_bytes; ++j8) {
    for (uint32_t bits = p[1 + j8]; bits != 0; bits &= bits - 1) {
      const uint32_t jj = j8 * 8 + (__ffs(bits) - 1);
      if (jj >= l0_bytes) return fail(st, at + 1 + j8, Status::Code::kCorrupt);
      if (k == n || p[k] == 0) return fail(st, at + k, Status::Code::kCorrupt);
      if (jj == l0_bytes - 1) last_byte = p[k];
      nonzero += __popc(p[k++]);
    }
  }
  if ((groups & 7) != 0 && (last_byte >> (groups & 7)) != 0)
    return fail(st, at, Status::Code::kCorrupt);
  const bool last_set = (last_byte >> ((groups - 1) & 7)) & 1u;
  const uint32_t kept = nonzero * gb - (last_set ? groups * gb - len : 0);
  const uint32_t m = kept / j.w;
  for (uint32_t plane = 0; plane < j.w; ++plane) {
    for (uint32_t s0 = 0; s0 < m; s0 += kLosslessSegment) {
      const uint32_t s = m - s0 < kLosslessSegment ? m - s0 : kLosslessSegment;
      if (k == n) return fail(st, at + k, Status::Code::kCorrupt);
      const uint32_t kind = p[k];
      if (kind > kLosslessSegmentRaw) return fail(st, at + k, Status::Code::kCorrupt);
      const uint32_t need = kind == kLosslessSegmentRaw ? 1 + s : 2 + (s * kind + 7) / 8;
      if (n - k < need) return fail(st, at + k, Status::Code::kCorrupt);
      if (kind > 0 && kind < kLosslessSegmentRaw && ((s * kind) & 7) != 0 &&
          (p[k + need - 1] >> ((s * kind) & 7)) != 0) {
        return fail(st, at + k + need - 1, Status::Code::kCorrupt);
      }
      k += need;
    }
  }
  if (k != n) fail(st, at + k, Status::Code::kCorrupt);
}

__global__ void check_blocks_kernel(Job j, State* st, const uint64_t* sizes,
                                    const uint64_t* offsets) {
  const uint64_t b = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (b >= j.blocks) return;
  const uint32_t len = block_len(j, b), size = static_cast<uint32_t>(sizes[b]);
  const uint64_t at = kLosslessHeaderBytes + 2 * j.blocks + offsets[b];
  if (size == 0 || size == len || at + size > j.body_bytes)
    return;  // a bad table is reported already
  check_block(j, st, at, size, len);
}

struct DecShared {
  uint8_t l0[kBlock / 8];
  uint8_t planes[kBlock];
  uint8_t gathered[kBlock];
  uint32_t seg_off[16], seg_k[16], seg_base[16];
  uint32_t gb, groups, m, nseg, per_plane, all;
};

__global__ void __launch_bounds__(kThreads)
    decode_blocks_kernel(Job j, const State* st, const uint64_t* sizes, const uint64_t* offsets) {
  if (st->err != kNoError) return;
  __shared__ DecShared sh;
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  __shared__ typename Scan::TempStorage scan_tmp;
  const uint64_t b = blockIdx.x;
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  const uint32_t len = block_len(j, b), size = static_cast<uint32_t>(sizes[b]);
  const uint8_t* p = j.body + kLosslessHeaderBytes + 2 * j.blocks + offsets[b];
  uint8_t* o = j.dst + b * kBlock;
  if (size == 0 || size == len) {
    for (uint32_t i = t; i < len; i += kThreads) o[i] = size == 0 ? 0 : p[i];
    return;
  }
  for (uint32_t i = t; i < kBlock / 8; i += kThreads) sh.l0[i] = 0;
  __syncthreads();
  if (t == 0) {  // the map and the segment table (validated already)
    const uint32_t gb = p[0] == kLosslessMapElements ? j.w : kLosslessGroupBytes;
    const uint32_t groups = (len + gb - 1) / gb, l0_bytes = (groups + 7) / 8,
                   l1_bytes = (l0_bytes + 7) / 8;
    uint32_t k = 1 + l1_bytes, nonzero = 0;
    for (uint32_t j8 = 0; j8 < l1_bytes; ++j8) {
      for (uint32_t bits = p[1 + j8]; bits != 0; bits &= bits - 1) {
        const uint32_t jj = j8 * 8 + (__ffs(bits) - 1);
        sh.l0[jj] = p[k];
        nonzero += __popc(p[k++]);
      }
    }
    const bool last_set = (sh.l0[(groups - 1) >> 3] >> ((groups - 1) & 7)) & 1u;
    const uint32_t m = (nonzero * gb - (last_set ? groups * gb - len : 0)) / j.w;
    const uint32_t per_plane = (m + kLosslessSegment - 1) / kLosslessSegment;
    for (uint32_t sg = 0; sg < j.w * per_plane; ++sg) {
      const uint32_t s0 = (sg % per_plane) * kLosslessSegment;
      const uint32_t s = m - s0 < kLosslessSegment ? m - s0 : kLosslessSegment;
      sh.seg_off[sg] = k;
      sh.seg_k[sg] = p[k];
      sh.seg_base[sg] = p[k] < kLosslessSegmentRaw ? p[k + 1] : 0;
      k += p[k] == kLosslessSegmentRaw ? 1 + s : 2 + (s * p[k] + 7) / 8;
    }
    sh.gb = gb;
    sh.groups = groups;
    sh.m = m;
    sh.per_plane = per_plane;
    sh.nseg = j.w * per_plane;
    sh.all = nonzero == groups;
  }
  __syncthreads();
  const uint32_t m = sh.m, per_plane = sh.per_plane;
  for (uint32_t sg = warp; sg < sh.nseg; sg += kThreads / 32) {
    const uint32_t plane = sg / per_plane, s0 = (sg % per_plane) * kLosslessSegment;
    const uint32_t s = m - s0 < kLosslessSegment ? m - s0 : kLosslessSegment;
    uint8_t* v = sh.planes + plane * m + s0;
    const uint8_t* q = p + sh.seg_off[sg];
    const uint32_t k = sh.seg_k[sg], base = sh.seg_base[sg];
    if (k == kLosslessSegmentRaw) {
      for (uint32_t i = lane; i < s; i += 32) v[i] = q[1 + i];
    } else if (k == 0) {
      for (uint32_t i = lane; i < s; i += 32) v[i] = static_cast<uint8_t>(base);
    } else {
      for (uint32_t gi = lane; gi * 8 < s; gi += 32) {
        const uint32_t nb = gi * 8 + 8 <= s ? k : ((s - gi * 8) * k + 7) / 8;
        uint64_t acc = 0;
        for (uint32_t c = 0; c < nb; ++c)
          acc |= static_cast<uint64_t>(q[2 + gi * k + c]) << (8 * c);
        for (uint32_t e = 0; e < 8 && gi * 8 + e < s; ++e) {
          v[gi * 8 + e] = static_cast<uint8_t>(base + ((acc >> (e * k)) & ((1u << k) - 1)));
        }
      }
    }
  }
  __syncthreads();
  uint8_t* merged = sh.all ? o : sh.gathered;
  for (uint32_t i = t; i < m; i += kThreads) merge_element(sh.planes, i, m, j.w, merged);
  if (sh.all) return;
  __syncthreads();
  constexpr unsigned kPer = kBlock / kThreads;
  uint32_t before[kPer];
  const uint32_t groups = sh.groups, gb = sh.gb;
  for (unsigned i = 0; i < kPer; ++i) {
    const uint32_t g = t * kPer + i;
    before[i] = g < groups ? (sh.l0[g >> 3] >> (g & 7)) & 1u : 0;
  }
  Scan(scan_tmp).ExclusiveSum(before, before);
  for (unsigned i = 0; i < kPer; ++i) {
    const uint32_t g = t * kPer + i;
    if (g >= groups) break;
    const uint32_t off = g * gb, n = gb < len - off ? gb : len - off;
    const bool set = (sh.l0[g >> 3] >> (g & 7)) & 1u;
    for (uint32_t c = 0; c < n; ++c) o[off + c] = set ? sh.gathered[before[i] * gb + c] : 0;
  }
}

__global__ void result_kernel(const State* st, uint64_t bytes, BodyResult* result) {
  *result = BodyResult{};
  if (st->err == kNoError) {
    result->bytes = bytes;
  } else {
    result->code = static_cast<uint32_t>(st->err & 0xff);
    result->offset = st->err >> 8;
  }
}

}  // namespace

Status enqueue_lossless_body_decode(const void* body, std::size_t body_bytes, Dtype dtype,
                                    uint64_t count, void* dst, std::size_t dst_capacity,
                                    BodyResult* result, cudaStream_t stream) {
  const std::size_t w = dtype_size(dtype);
  if (w == 0) return {Status::Code::kUnsupported, "gpu lossless: unknown dtype"};
  if (count > dst_capacity / w) {
    return {Status::Code::kInvalidArgument, "gpu lossless: destination holds " +
                                                std::to_string(dst_capacity) + " bytes, " +
                                                std::to_string(count) + " elements need more"};
  }
  if ((body == nullptr && body_bytes > 0) || result == nullptr || (dst == nullptr && count > 0)) {
    return {Status::Code::kInvalidArgument, "gpu lossless: null body, destination or result"};
  }
  const uint64_t bytes = count * w;
  const uint64_t blocks = (bytes + kBlock - 1) / kBlock;
  if (blocks > 0x7fffffffull)
    return {Status::Code::kInvalidArgument, "gpu lossless: too many blocks"};
  Scratch scratch(stream);
  State* st = nullptr;
  uint64_t *sizes = nullptr, *offsets = nullptr;
  const Status oom{Status::Code::kNoSpace, "gpu lossless: out of device memory"};
  if (!scratch.alloc(&st, 1) || !scratch.alloc(&sizes, blocks) || !scratch.alloc(&offsets, blocks))
    return oom;
  Job j{static_cast<const uint8_t*>(body), static_cast<uint8_t*>(dst), body_bytes, bytes, blocks,
        static_cast<uint32_t>(w)};
  header_kernel<<<1, 1, 0, stream>>>(j, st);
  if (blocks > 0) {
    const auto grid = static_cast<unsigned>((blocks + 255) / 256);
    sizes_kernel<<<grid, 256, 0, stream>>>(j, st, sizes);
    std::size_t temp_bytes = 0;
    SQUEEZE_CUDA_TRY(
        cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, sizes, offsets, blocks, stream));
    uint8_t* temp = nullptr;
    if (!scratch.alloc(&temp, temp_bytes)) return oom;
    SQUEEZE_CUDA_TRY(
        cub::DeviceScan::ExclusiveSum(temp, temp_bytes, sizes, offsets, blocks, stream));
    total_kernel<<<1, 1, 0, stream>>>(j, st, sizes, offsets);
    check_blocks_kernel<<<grid, 256, 0, stream>>>(j, st, sizes, offsets);
    decode_blocks_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(j, st, sizes,
                                                                                 offsets);
  } else {
    total_empty_kernel<<<1, 1, 0, stream>>>(j, st);
  }
  result_kernel<<<1, 1, 0, stream>>>(st, bytes, result);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu

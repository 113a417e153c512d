// Row dedupe on the GPU, numbered exactly like the CPU (compress/row_dedupe.cc): rows are
// hashed, sorted by hash (stable, so equal hashes keep row order), and each row finds the
// earliest row of its hash run with the same bytes; a row is new when that is itself, and
// new rows are numbered by an exclusive scan, i.e. in order of first appearance.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "compress/cuda/gpu_quantize.cuh"

namespace squeeze::compress::gpu {
namespace {

constexpr unsigned kThreads = 256;

__device__ inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One warp per row; the hash depends on every byte and its position.
__global__ void hash_rows_kernel(const uint8_t* src, uint64_t n_rows, std::size_t row_bytes,
                                 uint64_t* hashes, uint32_t* idx) {
  const uint64_t r = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (r >= n_rows) return;
  const uint8_t* row = src + r * row_bytes;
  uint64_t h = 0;
  for (std::size_t i = lane; i < row_bytes; i += 32)
    h ^= mix64((static_cast<uint64_t>(i) << 8) | row[i]);
  for (int o = 16; o > 0; o >>= 1) h ^= __shfl_xor_sync(0xffffffffu, h, o);
  if (lane == 0) {
    hashes[r] = mix64(h ^ row_bytes);
    idx[r] = static_cast<uint32_t>(r);
  }
}

__global__ void run_heads_kernel(const uint64_t* sorted_hash, uint64_t n, uint32_t* head) {
  const uint64_t s = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (s >= n) return;
  head[s] = (s == 0 || sorted_hash[s] != sorted_hash[s - 1]) ? static_cast<uint32_t>(s) : 0u;
}

struct MaxU32 {
  __device__ uint32_t operator()(uint32_t a, uint32_t b) const { return a > b ? a : b; }
};

__device__ inline bool rows_equal(const uint8_t* a, const uint8_t* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

__global__ void first_kernel(const uint8_t* src, std::size_t row_bytes, const uint32_t* sorted_idx,
                             const uint32_t* run_start, uint64_t n, uint32_t* first,
                             uint32_t* is_new) {
  const uint64_t s = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (s >= n) return;
  const uint32_t r = sorted_idx[s];
  uint32_t f = r;
  for (uint64_t t = run_start[s]; t < s; ++t) {  // earlier rows with this hash, in row order
    const uint32_t cand = sorted_idx[t];
    if (rows_equal(src + static_cast<uint64_t>(cand) * row_bytes,
                   src + static_cast<uint64_t>(r) * row_bytes, row_bytes)) {
      f = cand;
      break;
    }
  }
  first[r] = f;
  is_new[r] = f == r ? 1u : 0u;
}

__global__ void ids_kernel(const uint32_t* first, const uint32_t* is_new, const uint32_t* newid,
                           uint64_t n, uint32_t* first_of_id, uint32_t* map_value, EncLayout* lay) {
  const uint64_t r = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (r >= n) return;
  if (is_new[r]) first_of_id[newid[r]] = static_cast<uint32_t>(r);
  map_value[r] = newid[first[r]];
  if (r == n - 1) {
    const uint64_t u = static_cast<uint64_t>(newid[r]) + is_new[r];
    lay->n_unique = u;
    lay->map_bits = u > 1 ? 32u - static_cast<unsigned>(__clz(static_cast<unsigned>(u - 1))) : 0u;
  }
}

__global__ void pack_map_kernel(const uint32_t* map_value, uint64_t n, const EncLayout* lay,
                                uint32_t* words) {
  const uint64_t r = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t bits = lay->map_bits;
  if (r >= n || bits == 0) return;
  const uint64_t v = map_value[r];
  const uint64_t pos = r * bits;
  const uint64_t w = pos / 32;
  const unsigned sh = static_cast<unsigned>(pos % 32);
  atomicOr(&words[w], static_cast<uint32_t>(v << sh));
  if (sh + bits > 32) atomicOr(&words[w + 1], static_cast<uint32_t>(v >> (32 - sh)));
}

}  // namespace

Status enqueue_row_dedupe(const uint8_t* src, uint64_t n_rows, std::size_t row_bytes,
                          EncLayout* lay, uint32_t* first_of_id, uint32_t* map_words,
                          cudaStream_t s, Scratch* scratch) {
  const Status oom{Status::Code::kNoSpace, "gpu: out of device memory (row dedupe)"};
  SQUEEZE_CUDA_TRY(cudaMemsetAsync(map_words, 0, (n_rows + 2) * sizeof(uint32_t), s));
  if (n_rows == 0) return Status::Ok();  // lay->n_unique and map_bits stay 0
  if (n_rows > 0x7fffffffu)
    return {Status::Code::kUnsupported, "gpu: row dedupe of 2^31 rows or more"};
  const int n = static_cast<int>(n_rows);
  uint64_t *hash = nullptr, *hash_sorted = nullptr;
  uint32_t *idx = nullptr, *idx_sorted = nullptr, *run = nullptr, *first = nullptr,
           *is_new = nullptr, *newid = nullptr, *map_value = nullptr;
  if (!scratch->alloc(&hash, n_rows) || !scratch->alloc(&hash_sorted, n_rows) ||
      !scratch->alloc(&idx, n_rows) || !scratch->alloc(&idx_sorted, n_rows) ||
      !scratch->alloc(&run, n_rows) || !scratch->alloc(&first, n_rows) ||
      !scratch->alloc(&is_new, n_rows) || !scratch->alloc(&newid, n_rows) ||
      !scratch->alloc(&map_value, n_rows)) {
    return oom;
  }
  hash_rows_kernel<<<grid_for(n_rows * 32, kThreads), kThreads, 0, s>>>(src, n_rows, row_bytes,
                                                                        hash, idx);
  std::size_t sort_bytes = 0, scan_bytes = 0, max_bytes = 0;
  SQUEEZE_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, hash, hash_sorted, idx,
                                                   idx_sorted, n, 0, 64, s));
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, is_new, newid, n, s));
  SQUEEZE_CUDA_TRY(cub::DeviceScan::InclusiveScan(nullptr, max_bytes, is_new, run, MaxU32{}, n, s));
  std::size_t temp_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
  temp_bytes = temp_bytes > max_bytes ? temp_bytes : max_bytes;
  uint8_t* temp = nullptr;
  if (!scratch->alloc(&temp, temp_bytes)) return oom;
  SQUEEZE_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp, sort_bytes, hash, hash_sorted, idx,
                                                   idx_sorted, n, 0, 64, s));
  run_heads_kernel<<<grid_for(n_rows, kThreads), kThreads, 0, s>>>(hash_sorted, n_rows,
                                                                   is_new);  // heads, for now
  SQUEEZE_CUDA_TRY(cub::DeviceScan::InclusiveScan(temp, max_bytes, is_new, run, MaxU32{}, n, s));
  first_kernel<<<grid_for(n_rows, kThreads), kThreads, 0, s>>>(src, row_bytes, idx_sorted, run,
                                                               n_rows, first, is_new);
  SQUEEZE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, scan_bytes, is_new, newid, n, s));
  ids_kernel<<<grid_for(n_rows, kThreads), kThreads, 0, s>>>(first, is_new, newid, n_rows,
                                                             first_of_id, map_value, lay);
  pack_map_kernel<<<grid_for(n_rows, kThreads), kThreads, 0, s>>>(map_value, n_rows, lay,
                                                                  map_words);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu

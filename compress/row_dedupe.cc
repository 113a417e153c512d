// Row dedupe with an open-addressing hash table of row indices.
//
// The row hash is a multiply-accumulate over 64-byte stripes in eight independent 64-bit
// lanes (the accumulate step of XXH3): each lane adds the 32x32->64-bit product of the two
// halves of (data ^ key) and the neighbouring lane's raw data, and the keys change with the
// stripe, so moving data between stripes changes the hash. Lanes do not depend on each
// other, so it runs at the vector units' throughput instead of a multiplier's latency. The
// AVX2 version computes exactly the scalar version's value. The result of
// dedupe_rows does not depend on the hash at all (memcmp confirms every match); the hash
// only decides how many comparisons it takes.
#include "compress/row_dedupe.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "compress/quantize_simd.h"

namespace squeeze::compress {
namespace {

constexpr std::size_t kLanes = 8;
constexpr std::size_t kStripe = 8 * kLanes;  // bytes
constexpr uint64_t kInit[kLanes] = {
    0xC2B2AE3D27D4EB4Full, 0x9E3779B185EBCA87ull, 0x165667B19E3779F9ull, 0x85EBCA77C2B2AE63ull,
    0x27D4EB2F165667C5ull, 0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull};
constexpr uint64_t kKey[kLanes] = {
    0xbe4ba423396cfeb8ull, 0x1cad21f72c81017cull, 0xdb979083e96dd4deull, 0x1f67b3b7a4a44072ull,
    0x78e5c0cc4ee679cbull, 0x2172ffcc7dd05a82ull, 0x8e2443f7744608b8ull, 0x4c263a81e69035e0ull};
constexpr uint64_t kKeyStep[kLanes] = {
    0xcb00c391bb52283cull, 0xa32e531b8b65d088ull, 0x4ef90da297486471ull, 0xd8acdea946ef1938ull,
    0x3f349ce33f76faa8ull, 0x1d4f0bc7c7bbdcf9ull, 0x3159b4cd4be0518aull, 0x647378d9c97e9fc8ull};

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t fold128(uint64_t a, uint64_t b) {
  __extension__ using u128 = unsigned __int128;
  const u128 m = static_cast<u128>(a) * b;
  return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
}

// Mixes the lanes after the stripes (whole_bytes of them), the leftover bytes and n.
uint64_t finish(const uint64_t* acc, const uint8_t* p, std::size_t n, std::size_t whole_bytes) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t t = 0x243F6A8885A308D3ull ^ n;
  std::size_t i = whole_bytes;
  for (; i + 8 <= n; i += 8) {
    t = (t ^ load64(p + i)) * kMul;
    t ^= t >> 29;
  }
  for (; i < n; ++i) t = (t ^ p[i]) * kMul;
  uint64_t h = t;
  for (std::size_t l = 0; l < kLanes; l += 2) h += fold128(acc[l] ^ kKey[l], acc[l + 1] ^ kInit[l]);
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

uint64_t hash_row_scalar(const uint8_t* p, std::size_t n) {
  uint64_t acc[kLanes], key[kLanes];
  std::memcpy(acc, kInit, sizeof acc);
  std::memcpy(key, kKey, sizeof key);
  std::size_t i = 0;
  for (; i + kStripe <= n; i += kStripe) {
    for (std::size_t l = 0; l < kLanes; ++l) {
      const uint64_t d = load64(p + i + 8 * l);
      const uint64_t k = d ^ key[l];
      acc[l] += (k & 0xffffffffu) * (k >> 32);
      acc[l ^ 1] += d;
      key[l] += kKeyStep[l];
    }
  }
  return finish(acc, p, n, i);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) uint64_t hash_row_avx2(const uint8_t* p, std::size_t n) {
  __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kInit));
  __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kInit + 4));
  __m256i k0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kKey));
  __m256i k1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kKey + 4));
  const __m256i s0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kKeyStep));
  const __m256i s1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kKeyStep + 4));
  std::size_t i = 0;
  for (; i + kStripe <= n; i += kStripe) {
    const __m256i d0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const __m256i d1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32));
    const __m256i x0 = _mm256_xor_si256(d0, k0), x1 = _mm256_xor_si256(d1, k1);
    a0 = _mm256_add_epi64(a0, _mm256_mul_epu32(x0, _mm256_srli_epi64(x0, 32)));
    a1 = _mm256_add_epi64(a1, _mm256_mul_epu32(x1, _mm256_srli_epi64(x1, 32)));
    a0 = _mm256_add_epi64(a0, _mm256_shuffle_epi32(d0, _MM_SHUFFLE(1, 0, 3, 2)));
    a1 = _mm256_add_epi64(a1, _mm256_shuffle_epi32(d1, _MM_SHUFFLE(1, 0, 3, 2)));
    k0 = _mm256_add_epi64(k0, s0);
    k1 = _mm256_add_epi64(k1, s1);
  }
  uint64_t acc[kLanes];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc), a0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 4), a1);
  return finish(acc, p, n, i);
}
#endif

using HashFn = uint64_t (*)(const uint8_t*, std::size_t);

HashFn pick_hash() {
#if defined(__x86_64__)
  switch (qsimd::level()) {
    case qsimd::Level::kAvx512:  // a 512-bit version measured no faster on Zen 4
    case qsimd::Level::kAvx2: return hash_row_avx2;
    case qsimd::Level::kScalar: break;
  }
#endif
  return hash_row_scalar;
}

}  // namespace

uint64_t row_hash(const uint8_t* row, std::size_t n) { return pick_hash()(row, n); }

void dedupe_rows(const uint8_t* data, uint64_t n_rows, std::size_t row_bytes, RowDedupe* out) {
  out->map.assign(static_cast<std::size_t>(n_rows), 0);
  out->first.clear();
  if (n_rows == 0) return;
  const HashFn hash_row = pick_hash();
  std::size_t cap = 16;
  while (cap < 2 * n_rows) cap <<= 1;
  std::vector<uint32_t> slots(cap, 0);  // row + 1 of the first row with this content; 0 = empty
  std::vector<uint64_t> hashes(static_cast<std::size_t>(n_rows));
  const std::size_t mask = cap - 1;
  for (uint64_t r = 0; r < n_rows; ++r) {
    const uint8_t* row = data + r * row_bytes;
    const uint64_t h = hash_row(row, row_bytes);
    hashes[r] = h;
    std::size_t s = static_cast<std::size_t>(h) & mask;
    for (;;) {
      const uint32_t e = slots[s];
      if (e == 0) {
        slots[s] = static_cast<uint32_t>(r + 1);
        out->map[r] = static_cast<uint32_t>(out->first.size());
        out->first.push_back(static_cast<uint32_t>(r));
        break;
      }
      const uint32_t other = e - 1;
      if (hashes[other] == h &&
          std::memcmp(data + static_cast<std::size_t>(other) * row_bytes, row, row_bytes) == 0) {
        out->map[r] = out->map[other];
        break;
      }
      s = (s + 1) & mask;
    }
  }
}

}  // namespace squeeze::compress

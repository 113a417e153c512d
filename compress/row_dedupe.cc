// Row dedupe with an open-addressing hash table of row indices.
#include "compress/row_dedupe.h"

#include <cstring>

namespace squeeze::compress {
namespace {

uint64_t hash_row(const uint8_t* p, std::size_t n) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h0 = 0x243F6A8885A308D3ull ^ n;
  uint64_t h1 = 0x13198A2E03707344ull;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {  // two independent lanes keep the multiplier busy
    uint64_t a, b;
    std::memcpy(&a, p + i, 8);
    std::memcpy(&b, p + i + 8, 8);
    h0 = (h0 ^ a) * kMul;
    h1 = (h1 ^ b) * kMul;
    h0 ^= h0 >> 29;
    h1 ^= h1 >> 31;
  }
  for (; i < n; ++i) h0 = (h0 ^ p[i]) * kMul;
  uint64_t h = h0 ^ (h1 * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return h;
}

}  // namespace

void dedupe_rows(const uint8_t* data, uint64_t n_rows, std::size_t row_bytes, RowDedupe* out) {
  out->map.assign(static_cast<std::size_t>(n_rows), 0);
  out->first.clear();
  if (n_rows == 0) return;
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
      if (hashes[other] == h && std::memcmp(data + static_cast<std::size_t>(other) * row_bytes, row, row_bytes) == 0) {
        out->map[r] = out->map[other];
        break;
      }
      s = (s + 1) & mask;
    }
  }
}

}  // namespace squeeze::compress

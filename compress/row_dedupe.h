// Finds bitwise-identical rows in a buffer, for the quantize codec's row dedupe (embedding
// lookups repeat popular rows within a batch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace squeeze::compress {

struct RowDedupe {
  // map[r]: id of row r's content; ids are numbered in order of first appearance, so
  // map[r] <= max(map[0..r-1]) + 1 and map[0] == 0.
  std::vector<uint32_t> map;
  // first[id]: the row where content `id` first appears (increasing).
  std::vector<uint32_t> first;
};

// n_rows rows of row_bytes bytes each, contiguous from data. Rows are hashed, and equal
// hashes are confirmed with memcmp, so the result is exact. n_rows must be < 2^32.
void dedupe_rows(const uint8_t* data, uint64_t n_rows, std::size_t row_bytes, RowDedupe* out);

// The hash dedupe_rows uses for a row of n bytes (at the level qsimd::level() picks; every
// level gives the same value). Exposed for tests.
uint64_t row_hash(const uint8_t* row, std::size_t n);

}  // namespace squeeze::compress

// Deterministic generators of the traffic Squeeze compresses, for benchmarks and tools.
// Each data set is a float32 message (convert with to_dtype for bf16/fp16) plus the row
// length a policy would give for it (0 when the data has no rows).
//
//   embeddings    DLRM all-to-all of embedding lookups: for each sample of a batch, one
//                 row of dim 64 from each of 8 tables. Tables differ in size (10^3..10^6
//                 rows) and in scale (std 0.025..0.1), item popularity is Zipf(1.05), so
//                 popular rows repeat within a batch. Row contents derive from
//                 (table, item), so a repeated lookup is bitwise identical.
//   embeddings128 the same with dim 128.
//   gradients     dense data-parallel gradients: Student-t(3) noise (heavy tails) with a
//                 per-layer scale between 1e-4 and 1e-2, layers of 4096..65536 elements.
//   sparse_grads  embedding-gradient rows of dim 64 where 95% of rows are zero (items not
//                 touched by the batch) and the rest N(0, 1e-3).
//   activations   ReLU outputs: max(0, N(0.1, 1)), about half exact zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compress/codec.h"

namespace squeeze::perf {

struct Traffic {
  std::string name;
  std::vector<float> values;  // float32 message
  uint32_t row_length = 0;    // elements per row, 0 = no rows
};

// Names accepted by make_traffic, in the order benchmarks print them.
const std::vector<std::string>& traffic_names();

// Builds `name` with about `bytes` bytes of float32 (rounded down to whole rows/samples,
// at least one). Returns false for an unknown name. Same (name, bytes, seed, step), same data.
// `step` > 0 is a later training step of the same stream: gradients keep their layers and
// per-layer scales and draw new noise; the other data sets are drawn anew.
bool make_traffic(const std::string& name, std::size_t bytes, uint64_t seed, Traffic* out,
                  uint64_t step = 0);

// The message in dtype d (bf16/fp16 rounded to nearest even), as bytes.
std::vector<uint8_t> to_dtype(const std::vector<float>& v, compress::Dtype d);

}  // namespace squeeze::perf

// The emulator's host-side data: deterministic per-rank inputs from perf/common's traffic
// generators, converted to the run's dtype; the element-wise reduction NCCL's kernel would do
// (in float, rounded to the dtype); comparison against an expected result; a fast hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "perf/common/reduce_op.h"

namespace squeeze::perf {

// --collective of both benchmarks: "allreduce", "alltoall" or "both"; false for anything else.
bool parse_collective_choice(const std::string& s, bool* allreduce, bool* alltoall);

// `elems` elements of data set `name` (see perf/common/traffic_gen.h) in dtype d. Pieces
// from successive seeds are concatenated until `elems` are filled, so any count works.
// Throws std::invalid_argument for an unknown name.
// `step`: see make_traffic (a later training step of the same data).
std::vector<uint8_t> make_input(const std::string& name, std::size_t elems, uint64_t seed,
                                compress::Dtype d, uint64_t step = 0);

// A seed that differs for every (base, a, b).
uint64_t derive_seed(uint64_t base, uint64_t a, uint64_t b);

// dst[i] = a[i] op b[i], computed in float and rounded to d (dst may alias a or b); kAvg adds
// (see premultiply).
void reduce(uint8_t* dst, const uint8_t* a, const uint8_t* b, std::size_t elems, compress::Dtype d,
            RedOp op = RedOp::kSum);
// dst[i] = src[i] * scale in float, rounded to d: how NCCL's avg starts, each rank's input
// times 1/nranks, then summed.
void premultiply(uint8_t* dst, const uint8_t* src, std::size_t elems, compress::Dtype d,
                 float scale);

struct Comparison {
  double max_abs_err = 0;     // over elements, in float; NaN where exactly one side is NaN
  std::size_t differing = 0;  // elements whose bits differ
};
Comparison compare(const uint8_t* got, const uint8_t* want, std::size_t elems, compress::Dtype d);

// 64-bit hash of the bytes (not cryptographic; for telling ranks' outputs apart).
uint64_t hash_bytes(const void* p, std::size_t n, uint64_t h = 0x9E3779B97F4A7C15ull);

}  // namespace squeeze::perf

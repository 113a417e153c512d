// What squeeze-codec-bench measures, shared by its CPU and GPU modes: the codec
// configurations, which of them apply to a data set, and the error checks of a decoded
// message (largest error, the bound the codec promised).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "perf/common/traffic_gen.h"

namespace squeeze::perf::codec_bench {

struct Config {
  std::string name;
  compress::CodecParams params;
  bool needs_rows = false;
  bool cpu_only = false;  // a CPU-only variant (Rice-coded quantize): --gpu leaves it out
};

// Every configuration, in the order the bench prints them.
std::vector<Config> configs();

// Whether `c` runs on data set `t` in `dtype`: row modes need rows, cast needs float32.
bool applies(const Config& c, const Traffic& t, compress::Dtype dtype);

// Largest |x - x'| over n elements; a non-finite element that does not come back bit-exact
// counts as an infinite error.
double max_abs_err(const uint8_t* in, const uint8_t* out, compress::Dtype d, std::size_t n);

// The bound promised for these n elements, or NaN for codecs that promise none.
double promised_bound(const Config& c, const uint8_t* in, compress::Dtype d, std::size_t n);

inline bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace squeeze::perf::codec_bench

// squeeze-codec-bench: every codec on every traffic data set, on one CPU core, through the
// public frame API (encode_frame / decode_frame). Prints a table and JSON lines:
//   codec, dtype, data, elements, bytes_in, bytes_out, ratio, max_abs_err, bound,
//   encode_GBps, decode_GBps, device
// plus a memcpy reference line. GB/s are input (decoded) bytes per second, 10^9 bytes,
// the median of --iters runs after one warm-up run, by wall clock (or, with --cpu-time,
// by the thread's CPU time, which a busy shared machine disturbs less).
//
//   squeeze-codec-bench [--size BYTES] [--iters N] [--json] [--codec NAME] [--data NAME]
//                       [--dtype float32|bfloat16|float16] [--cpu-time]
// --codec and --data select entries whose name starts with the given text.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/half.h"
#include "compress/quantize.h"
#include "perf/common/traffic_gen.h"

namespace {

using namespace squeeze::compress;
using squeeze::perf::Traffic;

struct Config {
  std::string name;
  CodecParams params;
  bool needs_rows = false;
};

std::vector<Config> configs() {
  std::vector<Config> c;
  auto add = [&](std::string name, CodecId id, const std::function<void(CodecParams&)>& set, bool rows = false) {
    CodecParams p;
    p.codec = id;
    set(p);
    c.push_back({std::move(name), p, rows});
  };
  add("stored", CodecId::kStored, [](CodecParams&) {});
  add("cast:bf16", CodecId::kCast, [](CodecParams& p) { p.cast.to = Dtype::kBfloat16; });
  add("cast:fp16", CodecId::kCast, [](CodecParams& p) { p.cast.to = Dtype::kFloat16; });
  auto q = [&](std::string name, BoundMode m, double eb, bool rows = false, bool dedupe = false) {
    add(std::move(name), CodecId::kQuantize, [=](CodecParams& p) {
      p.quantize.mode = m;
      p.quantize.error_bound = eb;
      p.quantize.dedupe_rows = dedupe;
    }, rows);
  };
  q("quantize:abs=1e-4", BoundMode::kAbs, 1e-4);
  q("quantize:rel=1e-2", BoundMode::kRel, 1e-2);
  q("quantize:rel=1e-3", BoundMode::kRel, 1e-3);
  q("quantize:rowrel=1e-2", BoundMode::kRelRow, 1e-2, true);
  q("quantize:rel=1e-2+dedupe", BoundMode::kRel, 1e-2, true, true);
  auto t = [&](std::string name, double keep, Dtype values) {
    add(std::move(name), CodecId::kThreshold, [=](CodecParams& p) {
      p.threshold.keep = keep;
      p.threshold.value_dtype = values;
    });
  };
  t("threshold:keep=0.01", 0.01, Dtype::kFloat32);
  t("threshold:keep=0.01/bf16", 0.01, Dtype::kBfloat16);
  t("threshold:keep=0.001", 0.001, Dtype::kFloat32);
  t("threshold:keep=0.001/bf16", 0.001, Dtype::kBfloat16);
  add("lossless", CodecId::kLossless, [](CodecParams&) {});
  return c;
}

bool g_cpu_time = false;

double now_seconds() {
  if (g_cpu_time) {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median seconds of `iters` runs of fn after one warm-up; false if fn fails.
template <typename Fn>
bool time_median(int iters, Fn&& fn, double* seconds) {
  if (!fn()) return false;
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    const double a = now_seconds();
    if (!fn()) return false;
    t.push_back(now_seconds() - a);
  }
  std::sort(t.begin(), t.end());
  *seconds = t[t.size() / 2];
  return true;
}

float element(const std::vector<uint8_t>& b, Dtype d, std::size_t i) {
  if (d == Dtype::kFloat32) {
    float f;
    std::memcpy(&f, &b[4 * i], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &b[2 * i], 2);
  return d == Dtype::kBfloat16 ? bf16_to_f32(h) : f16_to_f32(h);
}

// Largest |x - x'| over the message; a non-finite element that does not come back
// bit-exact counts as an infinite error.
double max_abs_err(const std::vector<uint8_t>& in, const std::vector<uint8_t>& out, Dtype d, std::size_t n) {
  double m = 0;
  const std::size_t es = dtype_size(d);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = element(in, d, i), y = element(out, d, i);
    if (!std::isfinite(x)) {
      if (std::memcmp(&in[es * i], &out[es * i], es) != 0) return INFINITY;
      continue;
    }
    m = std::max(m, std::fabs(static_cast<double>(x) - static_cast<double>(y)));
  }
  return m;
}

// The promised bound, or NaN (printed as null) for codecs that promise none.
double promised_bound(const Config& c, const std::vector<uint8_t>& in, Dtype d, std::size_t n) {
  switch (c.params.codec) {
    case CodecId::kStored:
    case CodecId::kLossless: return 0.0;
    case CodecId::kQuantize: {
      const QuantizeParams& q = c.params.quantize;
      if (q.mode != BoundMode::kRelRow) return quantize_message_bound(q, d, in.data(), n);
      double worst = 0;  // rows have their own bounds; report the loosest
      const std::size_t es = dtype_size(d);
      for (std::size_t r = 0; r * q.row_length < n; ++r) {
        const std::size_t len = std::min<std::size_t>(q.row_length, n - r * q.row_length);
        worst = std::max(worst, quantize_row_bound(q, d, in.data() + r * q.row_length * es, len));
      }
      return worst;
    }
    default: return NAN;
  }
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

int main(int argc, char** argv) {
  std::size_t size = 16u << 20;
  int iters = 5;
  bool json_only = false;
  std::string codec_filter, data_filter;
  Dtype dtype = Dtype::kFloat32;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "codec-bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--size") {
      size = std::stoull(value());
    } else if (a == "--iters") {
      iters = std::max(1, std::stoi(value()));
    } else if (a == "--cpu-time") {
      g_cpu_time = true;
    } else if (a == "--json") {
      json_only = true;
    } else if (a == "--codec") {
      codec_filter = value();
    } else if (a == "--data") {
      data_filter = value();
    } else if (a == "--dtype") {
      const std::string v = value();
      if (!parse_dtype(v, &dtype) || !is_float(dtype)) {
        std::fprintf(stderr, "codec-bench: --dtype must be float32, bfloat16 or float16, got '%s'\n", v.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: squeeze-codec-bench [--size BYTES] [--iters N] [--json] [--codec NAME] [--data NAME] "
                   "[--dtype float32|bfloat16|float16] [--cpu-time]\n");
      return a == "--help" ? 0 : 2;
    }
  }

  std::vector<std::string> json_lines;
  auto emit = [&](const std::string& codec, const std::string& data, std::size_t elements, std::size_t in_bytes,
                  std::size_t out_bytes, double err, double bound, double enc, double dec, const char* dt) {
    nlohmann::ordered_json j;
    j["codec"] = codec;
    j["dtype"] = dt;
    j["data"] = data;
    j["elements"] = elements;
    j["bytes_in"] = in_bytes;
    j["bytes_out"] = out_bytes;
    j["ratio"] = static_cast<double>(in_bytes) / static_cast<double>(std::max<std::size_t>(out_bytes, 1));
    j["max_abs_err"] = err;
    j["bound"] = std::isnan(bound) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(bound);
    j["encode_GBps"] = enc;
    j["decode_GBps"] = dec;
    j["device"] = "cpu";
    json_lines.push_back(j.dump());
    if (!json_only) {
      char b[64];
      std::snprintf(b, sizeof b, "%.3g", bound);
      std::printf("%-26s %-8s %-13s %10zu %8.2f %10.3g %10s %8.2f %8.2f\n", codec.c_str(), dt, data.c_str(), in_bytes,
                  static_cast<double>(in_bytes) / static_cast<double>(std::max<std::size_t>(out_bytes, 1)), err,
                  std::isnan(bound) ? "-" : b, enc, dec);
    }
    std::fflush(stdout);
  };

  if (!json_only) {
    std::printf("%-26s %-8s %-13s %10s %8s %10s %10s %8s %8s\n", "codec", "dtype", "data", "bytes_in", "ratio",
                "max_err", "bound", "enc_GB/s", "dec_GB/s");
  }
  {  // memcpy reference
    std::vector<uint8_t> a(size, 1), b(size);
    double s = 0;
    time_median(iters, [&] { std::memcpy(b.data(), a.data(), size); return b[size / 2] == 1; }, &s);
    const double gbps = static_cast<double>(size) / s / 1e9;
    emit("memcpy", "-", size, size, size, 0.0, 0.0, gbps, gbps, "bytes");
  }

  const auto all = configs();
  for (const std::string& data : squeeze::perf::traffic_names()) {
    if (!starts_with(data, data_filter)) continue;
    Traffic t;
    squeeze::perf::make_traffic(data, size / dtype_size(dtype) * 4, 42, &t);  // size bytes in `dtype`
    const std::vector<uint8_t> in = squeeze::perf::to_dtype(t.values, dtype);
    const std::size_t n = t.values.size();
    for (Config c : all) {
      if (!starts_with(c.name, codec_filter)) continue;
      if (c.needs_rows && t.row_length == 0) continue;
      if (c.params.codec == CodecId::kCast && dtype != Dtype::kFloat32) continue;
      c.params.quantize.row_length = t.row_length;
      EncodeRequest req{dtype, in.data(), n, &c.params, nullptr};
      std::vector<uint8_t> frame(max_frame_bytes(req)), out(in.size());
      std::size_t frame_bytes = 0, written = 0;
      Status st;
      double enc = 0, dec = 0;
      const bool ok_enc = time_median(iters, [&] { return (st = encode_frame(req, frame, &frame_bytes)).ok(); }, &enc);
      const bool ok_dec = ok_enc && time_median(iters, [&] {
        return (st = decode_frame(std::span(frame.data(), frame_bytes), out, &written)).ok();
      }, &dec);
      if (!ok_dec) {
        std::fprintf(stderr, "codec-bench: %s on %s failed: %s\n", c.name.c_str(), data.c_str(), st.message().c_str());
        continue;
      }
      const double bytes = static_cast<double>(in.size());
      emit(c.name, data, n, in.size(), frame_bytes, max_abs_err(in, out, dtype, n), promised_bound(c, in, dtype, n),
           bytes / enc / 1e9, bytes / dec / 1e9, dtype_name(dtype));
    }
  }
  if (!json_only) std::printf("\n");
  for (const std::string& l : json_lines) std::printf("%s\n", l.c_str());
  return 0;
}

// squeeze-codec-bench: every codec on every traffic data set, on one CPU core, through the
// public frame API (encode_frame / decode_frame). Prints a table, or with --json JSON lines:
//   codec, dtype, data, elements, bytes_in, bytes_out, ratio, max_abs_err, bound,
//   encode_GBps, decode_GBps, device
// plus a memcpy reference line. GB/s are input (decoded) bytes per second, 10^9 bytes, the median
// of --iters runs after one warm-up run, by wall clock (or, with --cpu-time, by the thread's CPU
// time, which a busy shared machine disturbs less). With --gpu (CUDA builds), the same cases on the
// GPU instead (perf/codec_bench_gpu.cc), each message as one chunk and as a batch of --chunk-byte
// chunks, checked against the CPU.
// --codec and --data select entries whose name starts with the given text; `--help` lists
// every option, codec and data set.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/quantize_simd.h"
#include "perf/codec_bench_cases.h"
#include "perf/codec_bench_gpu.h"
#include "perf/common/cli_args.h"
#include "perf/common/dtype_names.h"
#include "perf/common/traffic_gen.h"
#include "plugin/params/params.h"

namespace {

using namespace squeeze::compress;
using namespace squeeze::perf::codec_bench;
using squeeze::perf::Traffic;

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

// "0,128K" -> {0, 131072}; false on anything else.
bool parse_sizes(const std::string& s, std::vector<std::size_t>* out) {
  out->clear();
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    std::size_t b = 0;
    if (!squeeze::perf::parse_bytes(s.substr(at, comma - at), &b)) return false;
    out->push_back(b);
    at = comma + 1;
  }
  return !out->empty();
}

std::string joined(const std::vector<std::string>& names) {
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  return all;
}

// --codec / --data: *into = prefix when it starts one of `names`; else what is accepted.
std::string select_prefix(const std::string& prefix, const std::vector<std::string>& names,
                          std::string* into) {
  for (const std::string& n : names) {
    if (starts_with(n, prefix)) {
      *into = prefix;
      return "";
    }
  }
  return "a name or the start of one of: " + joined(names);
}

std::vector<std::string> codec_names() {
  std::vector<std::string> v;
  for (const Config& c : configs()) v.push_back(c.name);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t size = 16u << 20;
  int iters = 5;
  bool json_only = false;
  std::string codec_filter, data_filter;
  std::string dtype_arg = "float";
  Dtype dtype = Dtype::kFloat32;
  bool gpu = false;
  std::vector<std::size_t> chunks;
  const std::vector<std::string> codecs = codec_names(), data_sets = squeeze::perf::traffic_names();
  squeeze::perf::CliParser cli(
      "squeeze-codec-bench",
      "Every codec on every traffic data set through the public frame API (encode_frame /\n"
      "decode_frame), one CPU core, against memcpy: a table, or JSON lines with --json. GB/s are\n"
      "input bytes per second (10^9), the median of --iters runs after one warm-up run.");
  cli.section("Work")
      .bytes("-s,--size", &size, "message bytes per data set")
      .integer("-n,--iters", &iters, 1, 100000, "timed runs; the median is reported")
      .custom("--codec", "NAME", "a codec name or its start",
              "only codecs whose name starts with NAME: " + joined(codecs) +
                  " (memcpy, the reference, always runs)",
              [&](const std::string& v) { return select_prefix(v, codecs, &codec_filter); })
      .default_text("all")
      .custom("--data", "NAME", "a data set name or its start",
              "only data sets whose name starts with NAME: " + joined(data_sets),
              [&](const std::string& v) { return select_prefix(v, data_sets, &data_filter); })
      .default_text("all")
      .choice("-d,--dtype", &dtype_arg, squeeze::perf::float_dtype_names(),
              "element type of the messages")
      .flag("--cpu-time", &g_cpu_time,
            "time by the thread's CPU time instead of the wall clock (a busy shared machine "
            "disturbs it less)")
      .section("GPU (CUDA builds)")
      .flag("--gpu", &gpu,
            "the CUDA codecs instead of the CPU ones: each batch timed with cudaEvents, every GPU "
            "frame compared byte for byte with the CPU's and the GPU decode with the CPU's (exit 1 "
            "on a difference; SKIP and exit 77 without a CUDA device or CUDA build)")
      .custom("--chunk", "BYTES[,BYTES...]", "sizes in bytes separated by commas (K/M/G suffixes)",
              "with --gpu: cut each message into chunks of BYTES (whole rows), one batch; 0 = the "
              "whole message as one chunk",
              [&](const std::string& v) {
                return parse_sizes(v, &chunks)
                           ? std::string()
                           : "sizes in bytes separated by commas, such as 0,128K";
              })
      .default_text("0,128K: NCCL's 128 KiB all-to-all chunks")
      .section("Output")
      .flag("--json", &json_only,
            "JSON lines instead of the table: codec, dtype, data, elements, bytes_in, bytes_out, "
            "ratio, max_abs_err, bound, encode_GBps, decode_GBps, device");
  cli.parse_or_exit(argc, argv);
  squeeze::perf::parse_float_dtype(dtype_arg, &dtype);
  // SQUEEZE_QUANTIZE_SIMD caps the CPU quantize codec's instruction set here as in the plugin.
  std::string simd_problem;
  const squeeze::params::Value simd =
      squeeze::params::Settings::read_env(squeeze::params::Id::kQuantizeSimd, &simd_problem);
  if (!simd_problem.empty()) cli.fail(simd_problem);
  if (squeeze::compress::qsimd::Level l{};
      simd.set && squeeze::compress::qsimd::parse_level(simd.text, &l))
    squeeze::compress::qsimd::set_level(l);
  if (size == 0) cli.fail("--size 0: expected at least one byte");
  if (!chunks.empty() && !gpu) cli.fail("--chunk applies to --gpu only");
  if (gpu) {
#ifdef SQUEEZE_HAVE_CUDA
    GpuOptions o;
    o.size = size;
    o.iters = iters;
    o.json_only = json_only;
    o.codec_filter = codec_filter;
    o.data_filter = data_filter;
    o.dtype = dtype;
    if (!chunks.empty()) o.chunks = chunks;
    return run_gpu_bench(o);
#else
    std::printf(
        "SKIP: squeeze-codec-bench --gpu: built without CUDA (configure with "
        "-DSQUEEZE_ENABLE_CUDA=ON "
        "where nvcc is found)\n");
    return 77;
#endif
  }

  auto emit = [&](const std::string& codec, const std::string& data, std::size_t elements,
                  std::size_t in_bytes, std::size_t out_bytes, double err, double bound, double enc,
                  double dec, const char* dt) {
    nlohmann::ordered_json j;
    j["codec"] = codec;
    j["dtype"] = dt;
    j["data"] = data;
    j["elements"] = elements;
    j["bytes_in"] = in_bytes;
    j["bytes_out"] = out_bytes;
    j["ratio"] =
        static_cast<double>(in_bytes) / static_cast<double>(std::max<std::size_t>(out_bytes, 1));
    j["max_abs_err"] = err;
    j["bound"] =
        std::isnan(bound) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(bound);
    j["encode_GBps"] = enc;
    j["decode_GBps"] = dec;
    j["device"] = "cpu";
    if (json_only) {
      std::printf("%s\n", j.dump().c_str());
    } else {
      char b[64];
      std::snprintf(b, sizeof b, "%.3g", bound);
      std::printf(
          "%-26s %-8s %-13s %10zu %8.2f %10.3g %10s %8.2f %8.2f\n", codec.c_str(), dt, data.c_str(),
          in_bytes,
          static_cast<double>(in_bytes) / static_cast<double>(std::max<std::size_t>(out_bytes, 1)),
          err, std::isnan(bound) ? "-" : b, enc, dec);
    }
    std::fflush(stdout);
  };

  if (!json_only) {
    std::printf("%-26s %-8s %-13s %10s %8s %10s %10s %8s %8s\n", "codec", "dtype", "data",
                "bytes_in", "ratio", "max_err", "bound", "enc_GB/s", "dec_GB/s");
  }
  {  // memcpy reference
    std::vector<uint8_t> a(size, 1), b(size);
    double s = 0;
    time_median(
        iters,
        [&] {
          std::memcpy(b.data(), a.data(), size);
          return b[size / 2] == 1;
        },
        &s);
    const double gbps = static_cast<double>(size) / s / 1e9;
    emit("memcpy", "-", size, size, size, 0.0, 0.0, gbps, gbps, "bytes");
  }

  const auto all = configs();
  for (const std::string& data : squeeze::perf::traffic_names()) {
    if (!starts_with(data, data_filter)) continue;
    Traffic t;
    squeeze::perf::make_traffic(data, size / dtype_size(dtype) * 4, 42,
                                &t);  // size bytes in `dtype`
    const std::vector<uint8_t> in = squeeze::perf::to_dtype(t.values, dtype);
    const std::size_t n = t.values.size();
    for (Config c : all) {
      if (!starts_with(c.name, codec_filter)) continue;
      if (!applies(c, t, dtype)) continue;
      c.params.quantize.row_length = t.row_length;
      EncodeRequest req{dtype, in.data(), n, &c.params, nullptr};
      std::vector<uint8_t> frame(max_frame_bytes(req)), out(in.size());
      std::size_t frame_bytes = 0, written = 0;
      Status st;
      double enc = 0, dec = 0;
      const bool ok_enc = time_median(
          iters, [&] { return (st = encode_frame(req, frame, &frame_bytes)).ok(); }, &enc);
      const bool ok_dec =
          ok_enc &&
          time_median(
              iters,
              [&] {
                return (st = decode_frame(std::span(frame.data(), frame_bytes), out, &written))
                    .ok();
              },
              &dec);
      if (!ok_dec) {
        std::fprintf(stderr, "squeeze-codec-bench: %s on %s failed: %s\n", c.name.c_str(),
                     data.c_str(), st.message().c_str());
        continue;
      }
      const double bytes = static_cast<double>(in.size());
      emit(c.name, data, n, in.size(), frame_bytes, max_abs_err(in.data(), out.data(), dtype, n),
           promised_bound(c, in.data(), dtype, n), bytes / enc / 1e9, bytes / dec / 1e9,
           dtype_name(dtype));
    }
  }
  return 0;
}

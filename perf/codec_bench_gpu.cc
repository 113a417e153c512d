// squeeze-codec-bench --gpu. For each data set (uploaded once per chunking) and each codec
// configuration of the CPU mode, one batch of chunks is encoded and decoded through
// gpu::Codec on one stream. Times are cudaEvents recorded on that stream around the call,
// so they include the host's launch work for the batch, as a caller would wait; GB/s are
// input bytes / the median of --iters batches. Checks: every GPU frame is byte-identical to
// encode_frame()'s for the same chunk (same_as_cpu), and the GPU decode of the batch equals
// decode_frame()'s (decode_same_as_cpu); any difference or device failure exits 1.
#include "perf/codec_bench_gpu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "perf/codec_bench_gpu_case.h"
#include "perf/common/traffic_gen.h"

namespace squeeze::perf::codec_bench {

using namespace squeeze::compress;

namespace {

struct Row {
  std::string codec, data;
  const char* dtype = "bytes";
  std::size_t elements = 0, bytes_in = 0, bytes_out = 0, chunk_bytes = 0, chunks = 0;
  double err = 0, bound = 0, enc_gbps = 0, dec_gbps = 0;
  bool checked = false;  // false for the memcpy reference: nothing to compare
  std::size_t mismatched_chunks = 0;
  bool decode_same = true;
};

class Printer {
 public:
  Printer(bool json_only, std::string device_name)
      : json_only_(json_only), device_(std::move(device_name)) {}

  void header(int iters) const {
    if (json_only_) return;
    std::printf(
        "# GPU: %s; median of %d batches; GB/s = input bytes / cudaEvent time of one batch\n",
        device_.c_str(), iters);
    std::printf("%-26s %-8s %-13s %8s %6s %10s %8s %10s %10s %8s %8s %-11s %-8s\n", "codec",
                "dtype", "data", "chunk", "chunks", "bytes_in", "ratio", "max_err", "bound",
                "enc_GB/s", "dec_GB/s", "same_as_cpu", "dec_same");
  }

  void row(const Row& r) {
    const double ratio = static_cast<double>(r.bytes_in) /
                         static_cast<double>(std::max<std::size_t>(r.bytes_out, 1));
    nlohmann::ordered_json j;
    j["codec"] = r.codec;
    j["dtype"] = r.dtype;
    j["data"] = r.data;
    j["elements"] = r.elements;
    j["bytes_in"] = r.bytes_in;
    j["bytes_out"] = r.bytes_out;
    j["ratio"] = ratio;
    j["max_abs_err"] = r.err;
    j["bound"] =
        std::isnan(r.bound) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.bound);
    j["encode_GBps"] = r.enc_gbps;
    j["decode_GBps"] = r.dec_gbps;
    j["device"] = "gpu";
    j["device_name"] = device_;
    j["chunk_bytes"] = r.chunk_bytes;
    j["chunks"] = r.chunks;
    j["same_as_cpu"] = r.checked ? nlohmann::ordered_json(r.mismatched_chunks == 0)
                                 : nlohmann::ordered_json(nullptr);
    j["mismatched_chunks"] = r.mismatched_chunks;
    j["decode_same_as_cpu"] =
        r.checked ? nlohmann::ordered_json(r.decode_same) : nlohmann::ordered_json(nullptr);
    lines_.push_back(j.dump());
    if (!json_only_) {
      char bound[32], same[48];
      std::snprintf(bound, sizeof bound, "%.3g", r.bound);
      if (!r.checked) {
        std::snprintf(same, sizeof same, "-");
      } else if (r.mismatched_chunks == 0) {
        std::snprintf(same, sizeof same, "yes");
      } else {
        std::snprintf(same, sizeof same, "no(%zu/%zu)", r.mismatched_chunks, r.chunks);
      }
      std::printf("%-26s %-8s %-13s %8zu %6zu %10zu %8.2f %10.3g %10s %8.2f %8.2f %-11s %-8s\n",
                  r.codec.c_str(), r.dtype, r.data.c_str(), r.chunk_bytes, r.chunks, r.bytes_in,
                  ratio, r.err, std::isnan(r.bound) ? "-" : bound, r.enc_gbps, r.dec_gbps, same,
                  !r.checked      ? "-"
                  : r.decode_same ? "yes"
                                  : "no");
      std::fflush(stdout);
    }
  }

  void finish() const {
    if (!json_only_) std::printf("\n");
    for (const std::string& l : lines_) std::printf("%s\n", l.c_str());
  }

 private:
  bool json_only_;
  std::string device_;
  std::vector<std::string> lines_;
};

std::string describe_device() {
  int dev = 0;
  SQUEEZE_BENCH_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  SQUEEZE_BENCH_CUDA(cudaGetDeviceProperties(&p, dev));
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs)";
}

// Device-to-device cudaMemcpyAsync of `size` bytes: the ceiling the codecs compare with.
Row memcpy_reference(std::size_t size, int iters, const Stream& stream) {
  DeviceBuffer a(size), b(size);
  SQUEEZE_BENCH_CUDA(cudaMemsetAsync(a.get(), 1, size, stream.get()));
  Event start, stop;
  std::vector<double> t;
  for (int it = -1; it < iters; ++it) {  // -1: warm-up
    start.record(stream);
    SQUEEZE_BENCH_CUDA(
        cudaMemcpyAsync(b.get(), a.get(), size, cudaMemcpyDeviceToDevice, stream.get()));
    stop.record(stream);
    stop.synchronize();
    if (it >= 0) t.push_back(stop.seconds_since(start));
  }
  std::sort(t.begin(), t.end());
  const double gbps = static_cast<double>(size) / t[t.size() / 2] / 1e9;
  Row r{.codec = "memcpy", .data = "-"};
  r.elements = r.bytes_in = r.bytes_out = r.chunk_bytes = size;
  r.chunks = 1;
  r.enc_gbps = r.dec_gbps = gbps;
  return r;
}

int run(const GpuOptions& o) {
  const Stream stream;
  gpu::Codec codec;
  Printer out(o.json_only, describe_device());
  out.header(o.iters);
  out.row(memcpy_reference(o.size, o.iters, stream));

  std::size_t cases = 0, frame_mismatch_cases = 0, decode_mismatch_cases = 0, failures = 0;
  const auto all = configs();
  for (const std::string& data : traffic_names()) {
    if (!starts_with(data, o.data_filter)) continue;
    Traffic t;
    make_traffic(data, o.size / dtype_size(o.dtype) * 4, 42,
                 &t);  // size bytes in `dtype`, as in CPU mode
    const std::vector<uint8_t> in = to_dtype(t.values, o.dtype);
    for (const std::size_t chunk : o.chunks) {
      const Batch batch(o.dtype, in, chunk, t.row_length);
      for (Config c : all) {
        if (c.cpu_only || !starts_with(c.name, o.codec_filter) || !applies(c, t, o.dtype)) continue;
        c.params.quantize.row_length = t.row_length;
        const CaseResult r = run_case(c, batch, o.iters, stream, codec);
        const std::string where = c.name + " on " + data + " in chunks of " +
                                  std::to_string(batch.chunk_elements * dtype_size(o.dtype)) +
                                  " bytes";
        if (!r.cpu_error.empty()) {  // as in CPU mode: not a GPU result, reported and skipped
          std::fprintf(stderr, "codec-bench: %s failed on the CPU: %s\n", where.c_str(),
                       r.cpu_error.c_str());
          continue;
        }
        ++cases;
        if (!r.gpu_error.empty()) {
          ++failures;
          std::fprintf(stderr, "codec-bench --gpu: %s failed on the GPU: %s\n", where.c_str(),
                       r.gpu_error.c_str());
          continue;
        }
        if (r.mismatched_chunks > 0) {
          ++frame_mismatch_cases;
          std::fprintf(stderr,
                       "codec-bench --gpu: %s: %zu of %zu GPU frames differ from the CPU's\n",
                       where.c_str(), r.mismatched_chunks, batch.chunks());
        }
        if (!r.decode_same) {
          ++decode_mismatch_cases;
          std::fprintf(stderr,
                       "codec-bench --gpu: %s: the GPU decode differs from the CPU decode\n",
                       where.c_str());
        }
        const double bytes = static_cast<double>(in.size());
        Row row;
        row.codec = c.name;
        row.data = data;
        row.dtype = dtype_name(o.dtype);
        row.elements = t.values.size();
        row.bytes_in = in.size();
        row.bytes_out = r.bytes_out;
        row.chunk_bytes = batch.chunk_elements * dtype_size(o.dtype);
        row.chunks = batch.chunks();
        row.err = r.max_abs_err;
        row.bound = r.bound;
        row.enc_gbps = bytes / r.encode_s / 1e9;
        row.dec_gbps = bytes / r.decode_s / 1e9;
        row.checked = true;
        row.mismatched_chunks = r.mismatched_chunks;
        row.decode_same = r.decode_same;
        out.row(row);
      }
    }
  }
  out.finish();
  std::fprintf(
      stderr,
      "codec-bench --gpu: %zu cases; frames differ from the CPU's in %zu, decodes differ in %zu, "
      "%zu failed on the GPU\n",
      cases, frame_mismatch_cases, decode_mismatch_cases, failures);
  return frame_mismatch_cases + decode_mismatch_cases + failures == 0 ? 0 : 1;
}

}  // namespace

int run_gpu_bench(const GpuOptions& o) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0 devices");
    return 77;
  }
  try {
    return run(o);
  } catch (const CudaError& err) {
    std::fprintf(stderr, "codec-bench --gpu: %s\n", err.what());
    return 1;
  }
}

}  // namespace squeeze::perf::codec_bench

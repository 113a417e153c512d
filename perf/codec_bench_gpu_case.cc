#include "perf/codec_bench_gpu_case.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>

namespace squeeze::perf::codec_bench {

using namespace squeeze::compress;

namespace {

std::size_t chunk_elements_for(std::size_t n, std::size_t chunk_bytes, std::size_t es,
                               uint32_t row_length) {
  if (chunk_bytes == 0 || n == 0) return std::max<std::size_t>(n, 1);
  std::size_t ce = std::max<std::size_t>(chunk_bytes / es, 1);
  if (row_length > 0) ce = std::max<std::size_t>(ce / row_length, 1) * row_length;  // whole rows
  return std::min(ce, n);
}

std::size_t total_slots(std::size_t message_bytes, std::size_t chunks) {
  return message_bytes + chunks * kFrameHeaderBytes;
}

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The first failing chunk of a batch, or an empty string.
std::string first_failure(const char* what, const PinnedArray<gpu::ChunkResult>& r) {
  for (std::size_t i = 0; i < r.size(); ++i) {
    const Status st = gpu::result_status(r[i]);
    if (!st.ok()) return std::string(what) + " chunk " + std::to_string(i) + ": " + st.message();
  }
  return {};
}

}  // namespace

Batch::Batch(Dtype d, const std::vector<uint8_t>& message, std::size_t chunk_bytes,
             uint32_t row_length)
    : dtype(d),
      host(message),
      chunk_elements(chunk_elements_for(message.size() / dtype_size(d), chunk_bytes, dtype_size(d),
                                        row_length)),
      input(message.size()),
      frames(total_slots(message.size(),
                         (message.size() / dtype_size(d) + chunk_elements - 1) / chunk_elements)),
      output(message.size()) {
  const std::size_t n = message.size() / dtype_size(d);
  std::size_t at = 0;
  for (uint64_t f = 0; f < n; f += chunk_elements) {
    first.push_back(f);
    count.push_back(std::min<uint64_t>(chunk_elements, n - f));
    slot.push_back(at);
    at += kFrameHeaderBytes + bytes(count.size() - 1);
  }
  SQUEEZE_BENCH_CUDA(
      cudaMemcpy(input.get(), message.data(), message.size(), cudaMemcpyHostToDevice));
  // From pageable memory cudaMemcpy may return before the DMA lands, and the bench's stream
  // does not wait for the legacy default stream.
  SQUEEZE_BENCH_CUDA(cudaDeviceSynchronize());
}

CaseResult run_case(const Config& c, const Batch& b, int iters, const Stream& stream,
                    gpu::Codec& codec) {
  CaseResult res;
  const std::size_t k = b.chunks(), es = dtype_size(b.dtype);
  if (k == 0) {
    res.cpu_error = "the message is empty";
    return res;
  }

  // The CPU reference: each chunk's frame, and the decode of those frames.
  std::vector<std::vector<uint8_t>> cpu_frames(k);
  std::vector<uint8_t> cpu_decoded(b.host.size());
  res.bound = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const uint8_t* src = b.host.data() + b.offset(i);
    const EncodeRequest req{b.dtype, src, b.count[i], &c.params, nullptr};
    cpu_frames[i].resize(max_frame_bytes(req));
    std::size_t frame_bytes = 0, written = 0;
    Status st = encode_frame(req, cpu_frames[i], &frame_bytes);
    if (st.ok()) {
      cpu_frames[i].resize(frame_bytes);
      st = decode_frame(cpu_frames[i], std::span(cpu_decoded.data() + b.offset(i), b.bytes(i)),
                        &written);
    }
    if (!st.ok()) {
      res.cpu_error = "chunk " + std::to_string(i) + ": " + st.message();
      return res;
    }
    const double bound = promised_bound(c, src, b.dtype, b.count[i]);  // NaN: none promised
    res.bound = std::isnan(bound) || std::isnan(res.bound) ? NAN : std::max(res.bound, bound);
  }

  // Encode on the device: one checked warm-up batch, then the timed ones.
  std::vector<gpu::EncodeChunk> enc(k);
  for (std::size_t i = 0; i < k; ++i) {
    enc[i] = {b.dtype,   b.input.get() + b.offset(i), b.count[i],
              &c.params, b.frames.get() + b.slot[i],  kFrameHeaderBytes + b.bytes(i)};
  }
  PinnedArray<gpu::ChunkResult> er(k), dr(k);
  Event start, stop;
  auto encode = [&]() -> bool {
    start.record(stream);
    const Status st = codec.encode(enc, stream.get(), er.data());
    stop.record(stream);
    stop.synchronize();
    res.gpu_error = st.ok() ? first_failure("encode", er) : "encode: " + st.message();
    return res.gpu_error.empty();
  };
  if (!encode()) return res;
  std::vector<uint8_t> gpu_frames(b.frames.size());
  SQUEEZE_BENCH_CUDA(
      cudaMemcpy(gpu_frames.data(), b.frames.get(), gpu_frames.size(), cudaMemcpyDeviceToHost));
  std::vector<std::size_t> frame_bytes(k);
  for (std::size_t i = 0; i < k; ++i) {
    frame_bytes[i] = er[i].bytes;
    res.bytes_out += er[i].bytes;
    const bool same =
        er[i].bytes == cpu_frames[i].size() &&
        std::memcmp(gpu_frames.data() + b.slot[i], cpu_frames[i].data(), cpu_frames[i].size()) == 0;
    if (!same) ++res.mismatched_chunks;
  }
  std::vector<double> t;
  for (int it = 0; it < iters; ++it) {
    if (!encode()) return res;
    for (std::size_t i = 0; i < k; ++i) {
      if (er[i].bytes != frame_bytes[i]) {
        res.gpu_error = "encode chunk " + std::to_string(i) + ": frame size changed between runs";
        return res;
      }
    }
    t.push_back(stop.seconds_since(start));
  }
  res.encode_s = median(t);

  // Decode the device's frames on the device (threshold and lossless frames want the header
  // on the host: the downloaded copy). The output is poisoned first, so that a decoder that
  // wrote nothing cannot pass on the previous case's output.
  std::vector<gpu::DecodeChunk> dec(k);
  for (std::size_t i = 0; i < k; ++i) {
    const bool has_header = frame_bytes[i] >= kFrameHeaderBytes;
    dec[i] = {b.frames.get() + b.slot[i], frame_bytes[i], b.output.get() + b.offset(i), b.bytes(i),
              has_header ? gpu_frames.data() + b.slot[i] : nullptr};
  }
  auto decode = [&]() -> bool {
    start.record(stream);
    const Status st = codec.decode(dec, stream.get(), dr.data());
    stop.record(stream);
    stop.synchronize();
    res.gpu_error = st.ok() ? first_failure("decode", dr) : "decode: " + st.message();
    for (std::size_t i = 0; i < k && res.gpu_error.empty(); ++i) {
      if (dr[i].bytes != b.bytes(i)) {
        res.gpu_error = "decode chunk " + std::to_string(i) + ": wrote " +
                        std::to_string(dr[i].bytes) + " bytes, expected " +
                        std::to_string(b.bytes(i));
      }
    }
    return res.gpu_error.empty();
  };
  SQUEEZE_BENCH_CUDA(cudaMemsetAsync(b.output.get(), 0xA5, b.output.size(), stream.get()));
  if (!decode()) return res;
  std::vector<uint8_t> gpu_decoded(b.host.size());
  SQUEEZE_BENCH_CUDA(
      cudaMemcpy(gpu_decoded.data(), b.output.get(), gpu_decoded.size(), cudaMemcpyDeviceToHost));
  res.decode_same = gpu_decoded == cpu_decoded;
  res.max_abs_err = max_abs_err(b.host.data(), gpu_decoded.data(), b.dtype, b.host.size() / es);
  t.clear();
  for (int it = 0; it < iters; ++it) {
    if (!decode()) return res;
    t.push_back(stop.seconds_since(start));
  }
  res.decode_s = median(t);
  return res;
}

}  // namespace squeeze::perf::codec_bench

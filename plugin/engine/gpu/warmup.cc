// Warms up the GPU codecs once per device, on NCCL's service thread (first GPU regMr),
// before any message needs them. CUDA loads kernels lazily by default (CUDA_MODULE_LOADING=
// LAZY), and loading one may synchronise the context: on the progress thread that could wait
// for an NCCL kernel that itself waits for the progress thread. Encoding and decoding a small
// message with every codec and dtype loads their kernels here instead, and checks that the
// codecs work on this device (lossless and stored must come back bit-exact).
#include "plugin/engine/gpu/staging.h"

#if SQUEEZE_HAVE_CUDA

#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "plugin/engine/gpu/staging_impl.h"

namespace squeeze::plugin {

namespace {

using compress::CodecId;
using compress::Dtype;

constexpr uint64_t kCount = 4096;  // elements
constexpr uint32_t kRow = 64;      // rows of 64; rows 16..31 repeat rows 0..15 (dedupe)

// Finite values of each float dtype with zeros, a zero block, repeated rows, NaN and Inf.
std::vector<uint8_t> sample(Dtype d) {
  std::vector<float> f(kCount);
  uint32_t x = 12345;
  for (uint64_t i = 0; i < kCount; ++i) {
    x = x * 1664525u + 1013904223u;
    f[i] = i % 7 == 0 ? 0.0f
                      : static_cast<float>(static_cast<int32_t>(x >> 8) % 20001 - 10000) * 1e-4f;
  }
  for (uint64_t i = 1024; i < 1536; ++i) f[i] = 0.0f;
  std::memcpy(&f[16 * kRow], &f[0], 16 * kRow * sizeof(float));
  f[3000] = __builtin_nanf("");
  f[3001] = __builtin_inff();
  std::vector<uint8_t> out(kCount * compress::dtype_size(d));
  for (uint64_t i = 0; i < kCount; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &f[i], 4);
    if (d == Dtype::kFloat32) {
      std::memcpy(&out[4 * i], &bits, 4);
    } else {
      uint16_t h = static_cast<uint16_t>(bits >> 16);  // bfloat16: the upper half
      if (d == Dtype::kFloat16)  // a finite half with the same sign; special values kept special
        h = static_cast<uint16_t>((bits >> 16 & 0x8000u) |
                                  ((bits & 0x7f800000u) == 0x7f800000u
                                       ? 0x7c00u | (bits & 0x007fffffu ? 1u : 0u)
                                       : (bits >> 13 & 0x3fffu)));
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

std::vector<compress::CodecParams> params_for(Dtype d) {
  std::vector<compress::CodecParams> v;
  compress::CodecParams p;
  p.checksum = true;
  v.push_back(p);  // stored
  p.codec = CodecId::kLossless;
  v.push_back(p);
  p.checksum = false;
  p.codec = CodecId::kQuantize;
  p.quantize.mode = compress::BoundMode::kAbs;
  p.quantize.error_bound = 1e-2;
  v.push_back(p);
  p.quantize.mode = compress::BoundMode::kRelRow;
  p.quantize.row_length = kRow;
  p.quantize.dedupe_rows = true;
  v.push_back(p);
  p.quantize = compress::QuantizeParams{};
  p.codec = CodecId::kThreshold;
  p.threshold.keep = 0.1;
  v.push_back(p);
  p.threshold.value_dtype = Dtype::kBfloat16;
  v.push_back(p);
  if (d == Dtype::kFloat32) {
    p = compress::CodecParams{};
    p.codec = CodecId::kCast;
    v.push_back(p);
    p.cast.to = Dtype::kFloat16;
    v.push_back(p);
  }
  return v;
}

struct Scratch {
  void* src = nullptr;
  void* frame = nullptr;
  void* out = nullptr;
};

transport::Status check(const compress::gpu::ChunkResult& r, const char* what, Dtype d, CodecId c) {
  compress::Status s = compress::gpu::result_status(r);
  if (s.ok()) return transport::Status::Ok();
  return transport::Status::System(
      std::string("GPU staging: the GPU codecs failed their warm-up (") + what + " " +
      compress::codec_name(c) + " " + compress::dtype_name(d) + "): " + s.message());
}

transport::Status warm_up(GpuStaging::Impl& g) {
  cudaStream_t s = g.stream.get();
  const std::size_t max_bytes = kCount * 4;
  gpu::PinnedMemory host;
  SQ_CUDA_TRY(host.allocate(2 * max_bytes + compress::kFrameHeaderBytes +
                            2 * sizeof(compress::gpu::ChunkResult)));
  auto* res = reinterpret_cast<compress::gpu::ChunkResult*>(host.data());
  uint8_t* frame_host = host.data() + 2 * sizeof(compress::gpu::ChunkResult);
  uint8_t* out_host = frame_host + max_bytes + compress::kFrameHeaderBytes;
  Scratch m;
  SQ_CUDA_TRY(cudaMallocFromPoolAsync(&m.src, max_bytes, g.pool.get(), s));
  SQ_CUDA_TRY(
      cudaMallocFromPoolAsync(&m.frame, max_bytes + compress::kFrameHeaderBytes, g.pool.get(), s));
  SQ_CUDA_TRY(cudaMallocFromPoolAsync(&m.out, max_bytes, g.pool.get(), s));
  transport::Status st;
  for (Dtype d : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16, Dtype::kBytes}) {
    const std::vector<uint8_t> in = d == Dtype::kBytes ? sample(Dtype::kFloat32) : sample(d);
    const uint64_t count = in.size() / compress::dtype_size(d);
    if (cudaError_t e = cudaMemcpyAsync(m.src, in.data(), in.size(), cudaMemcpyHostToDevice, s);
        e != cudaSuccess) {
      st = gpu::cuda_status(e, "cudaMemcpyAsync (warm-up input)");
      break;
    }
    std::vector<compress::CodecParams> ps = params_for(d);
    if (d == Dtype::kBytes) ps.resize(2);  // stored and lossless: the others need floats
    for (const compress::CodecParams& p : ps) {
      compress::gpu::EncodeChunk ec{d,  m.src,   count,
                                    &p, m.frame, in.size() + compress::kFrameHeaderBytes};
      compress::Status cs = g.codec.encode({&ec, 1}, s, &res[0]);
      if (cs.ok() && cudaStreamSynchronize(s) != cudaSuccess)
        cs = compress::Status(compress::Status::Code::kInvalidArgument,
                              "the encode failed on the device");
      if (cs.ok() && !(st = check(res[0], "encode", d, p.codec)).ok()) break;
      if (!cs.ok()) {
        st = transport::Status::System("GPU staging: the GPU codecs failed their warm-up (encode " +
                                       std::string(compress::codec_name(p.codec)) +
                                       "): " + cs.message());
        break;
      }
      const auto fbytes = static_cast<std::size_t>(res[0].bytes);
      SQ_CUDA_TRY(cudaMemcpyAsync(frame_host, m.frame, fbytes, cudaMemcpyDeviceToHost, s));
      SQ_CUDA_TRY(cudaStreamSynchronize(s));
      compress::gpu::DecodeChunk dc{m.frame, fbytes, m.out, in.size(), frame_host};
      cs = g.codec.decode({&dc, 1}, s, &res[1]);
      if (cs.ok())
        SQ_CUDA_TRY(cudaMemcpyAsync(out_host, m.out, in.size(), cudaMemcpyDeviceToHost, s));
      if (cs.ok() && cudaStreamSynchronize(s) != cudaSuccess)
        cs = compress::Status(compress::Status::Code::kInvalidArgument,
                              "the decode failed on the device");
      if (!cs.ok()) {
        st = transport::Status::System("GPU staging: the GPU codecs failed their warm-up (decode " +
                                       std::string(compress::codec_name(p.codec)) +
                                       "): " + cs.message());
        break;
      }
      if (!(st = check(res[1], "decode", d, p.codec)).ok()) break;
      const bool exact = p.codec == CodecId::kStored || p.codec == CodecId::kLossless;
      if (res[1].bytes != in.size() ||
          (exact && std::memcmp(out_host, in.data(), in.size()) != 0)) {
        st = transport::Status::System(
            std::string("GPU staging: the GPU codecs failed their warm-up: ") +
            compress::codec_name(p.codec) + " " + compress::dtype_name(d) + " did not round-trip");
        break;
      }
    }
    if (!st.ok()) break;
  }
  (void)cudaFreeAsync(m.src, s);
  (void)cudaFreeAsync(m.frame, s);
  (void)cudaFreeAsync(m.out, s);
  (void)cudaStreamSynchronize(s);
  (void)cudaGetLastError();
  return st;
}

}  // namespace

transport::Status gpu_warm_up_once(GpuStaging::Impl& g) {
  static std::mutex mu;
  static std::set<int> warm;  // devices whose codecs are loaded and checked
  std::lock_guard<std::mutex> lock(mu);
  if (warm.count(g.device) != 0) return transport::Status::Ok();
  gpu::DeviceGuard dev(g.device);
  if (dev.error() != cudaSuccess) return gpu::cuda_status(dev.error(), "cudaSetDevice");
  transport::Status st = warm_up(g);
  if (st.ok()) warm.insert(g.device);
  return st;
}

}  // namespace squeeze::plugin

#endif  // SQUEEZE_HAVE_CUDA

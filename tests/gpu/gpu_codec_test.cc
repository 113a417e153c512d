// The CUDA codecs against the CPU reference: for the same input and parameters the GPU
// writes the same frame bytes; frames cross between CPU and GPU decoders; malformed frames
// are rejected on the device without touching the destination. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/cuda/gpu_codec.h"
#include "tests/compress/test_data.h"

namespace squeeze::compress {
namespace {

using testdata::Dist;

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    EXPECT_EQ(cudaMalloc(&p_, n ? n : 1), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint8_t* get() { return static_cast<uint8_t*>(p_); }
  void upload(const void* src, std::size_t n) {
    ASSERT_EQ(cudaMemcpy(p_, src, n, cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<uint8_t> download(std::size_t n) {
    std::vector<uint8_t> out(n);
    EXPECT_EQ(cudaMemcpy(out.data(), p_, n, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  void* p_ = nullptr;
  std::size_t n_;
};

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu::device_available(&why)) GTEST_SKIP() << "no usable CUDA device: " << why;
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }

  // Encodes on the GPU; returns the frame bytes.
  std::vector<uint8_t> gpu_encode(Dtype d, const std::vector<uint8_t>& in, uint64_t count,
                                  const CodecParams& p) {
    DeviceBuffer src(in.size()), dst(kFrameHeaderBytes + in.size());
    src.upload(in.data(), in.size());
    gpu::EncodeChunk c{d, src.get(), count, &p, dst.get(), kFrameHeaderBytes + in.size()};
    gpu::ChunkResult r;
    Status st = codec_.encode(std::span(&c, 1), stream_, &r);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_TRUE(gpu::result_status(r).ok()) << gpu::result_status(r).message();
    return dst.download(r.bytes);
  }

  // Decodes on the GPU into a buffer with guard bytes around it.
  Status gpu_decode(const std::vector<uint8_t>& frame, std::size_t cap, std::vector<uint8_t>* out,
                    bool host_header = true) {
    const std::size_t guard = 64;
    DeviceBuffer f(frame.size()), dst(cap + 2 * guard);
    f.upload(frame.data(), frame.size());
    std::vector<uint8_t> pattern(cap + 2 * guard, 0xA5);
    dst.upload(pattern.data(), pattern.size());
    gpu::DecodeChunk c{f.get(), frame.size(), dst.get() + guard, cap,
                       host_header && frame.size() >= kFrameHeaderBytes ? frame.data() : nullptr};
    gpu::ChunkResult r;
    Status st = codec_.decode(std::span(&c, 1), stream_, &r);
    if (!st.ok()) return st;
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    const auto all = dst.download(pattern.size());
    for (std::size_t i = 0; i < guard; ++i) {
      EXPECT_EQ(all[i], 0xA5);
      EXPECT_EQ(all[guard + cap + i], 0xA5);
    }
    st = gpu::result_status(r);
    if (st.ok()) {
      out->assign(all.begin() + guard, all.begin() + guard + static_cast<std::ptrdiff_t>(r.bytes));
    } else {  // nothing written
      EXPECT_TRUE(std::equal(all.begin() + guard,
                             all.begin() + guard + static_cast<std::ptrdiff_t>(cap),
                             pattern.begin()));
    }
    return st;
  }

  gpu::Codec codec_;
  cudaStream_t stream_ = nullptr;
};

std::vector<uint8_t> cpu_encode(Dtype d, const std::vector<uint8_t>& in, uint64_t count,
                                const CodecParams& p) {
  EncodeRequest req{d, in.data(), count, &p, nullptr};
  std::vector<uint8_t> frame(max_frame_bytes(req));
  std::size_t n = 0;
  EXPECT_TRUE(encode_frame(req, frame, &n).ok());
  frame.resize(n);
  return frame;
}

std::vector<CodecParams> all_params(uint32_t row_length) {
  std::vector<CodecParams> v;
  for (bool checksum : {false, true}) {
    CodecParams p;
    p.checksum = checksum;
    v.push_back(p);
    p.codec = CodecId::kLossless;
    v.push_back(p);
    p.codec = CodecId::kThreshold;
    p.threshold.keep = 0.01;
    v.push_back(p);
    p.threshold.value_dtype = Dtype::kBfloat16;
    v.push_back(p);
    p.codec = CodecId::kCast;
    p.cast.to = Dtype::kBfloat16;
    v.push_back(p);
    p.cast.to = Dtype::kFloat16;
    v.push_back(p);
    p.codec = CodecId::kQuantize;
    for (BoundMode m : {BoundMode::kAbs, BoundMode::kRel, BoundMode::kRelRow}) {
      for (bool dedupe : {false, true}) {
        p.quantize.mode = m;
        p.quantize.error_bound = m == BoundMode::kAbs ? 1e-3 : 1e-2;
        p.quantize.row_length = row_length;
        p.quantize.dedupe_rows = dedupe;
        v.push_back(p);
      }
    }
  }
  return v;
}

TEST_F(Gpu, FramesAreByteIdenticalToCpuFramesAndDecodeBothWays) {
  for (Dtype d : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (Dist dist : testdata::all_dists()) {
      for (std::size_t n : {0u, 1u, 63u, 64u, 65u, 1000u, 4097u, 100003u}) {
        auto v = testdata::make_floats(dist, n, n + 3);
        for (std::size_t i = 16; i + 16 <= n; i += 48)
          std::copy(v.begin(), v.begin() + 16, v.begin() + i);  // repeats
        const auto in = testdata::to_dtype(v, d);
        for (const CodecParams& p : all_params(16)) {
          if (p.codec == CodecId::kCast && d != Dtype::kFloat32) continue;
          if (p.codec == CodecId::kThreshold && p.threshold.value_dtype == Dtype::kBfloat16 &&
              d != Dtype::kFloat32)
            continue;
          SCOPED_TRACE(std::string(dtype_name(d)) + " " + testdata::dist_name(dist) +
                       " n=" + std::to_string(n) + " " + codec_name(p.codec) + " mode " +
                       std::to_string(static_cast<int>(p.quantize.mode)));
          const auto cpu = cpu_encode(d, in, n, p);
          const auto gpu = gpu_encode(d, in, n, p);
          ASSERT_EQ(gpu, cpu);
          std::vector<uint8_t> out;
          ASSERT_TRUE(gpu_decode(cpu, in.size(), &out).ok());
          std::vector<uint8_t> ref(in.size());
          std::size_t written = 0;
          ASSERT_TRUE(decode_frame(cpu, ref, &written).ok());
          ASSERT_EQ(out, ref);
        }
      }
    }
  }
}

TEST_F(Gpu, ThresholdAndLosslessFramesNeedTheHostHeader) {
  const auto in =
      testdata::to_dtype(testdata::make_floats(Dist::kSparse, 3000, 8), Dtype::kFloat32);
  CodecParams p;
  p.codec = CodecId::kLossless;
  const auto frame = cpu_encode(Dtype::kFloat32, in, 3000, p);
  std::vector<uint8_t> out;
  EXPECT_EQ(gpu_decode(frame, in.size(), &out, /*host_header=*/false).code(),
            Status::Code::kUnsupported);
  ASSERT_TRUE(gpu_decode(frame, in.size(), &out).ok());
  EXPECT_EQ(out, in);
}

TEST_F(Gpu, BatchesOfChunksEncodeIndependently) {
  const auto a =
      testdata::to_dtype(testdata::make_floats(Dist::kGaussian, 5000, 1), Dtype::kFloat32);
  const auto b = testdata::to_dtype(testdata::make_floats(Dist::kSparse, 7000, 2), Dtype::kFloat32);
  CodecParams pa, pb;
  pa.codec = CodecId::kQuantize;
  pb.codec = CodecId::kCast;
  pb.checksum = true;
  DeviceBuffer sa(a.size()), sb(b.size()), da(a.size() + kFrameHeaderBytes),
      db(b.size() + kFrameHeaderBytes);
  sa.upload(a.data(), a.size());
  sb.upload(b.data(), b.size());
  const gpu::EncodeChunk chunks[] = {
      {Dtype::kFloat32, sa.get(), 5000, &pa, da.get(), a.size() + kFrameHeaderBytes},
      {Dtype::kFloat32, sb.get(), 7000, &pb, db.get(), b.size() + kFrameHeaderBytes}};
  gpu::ChunkResult r[2];
  ASSERT_TRUE(codec_.encode(chunks, stream_, r).ok());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(da.download(r[0].bytes), cpu_encode(Dtype::kFloat32, a, 5000, pa));
  EXPECT_EQ(db.download(r[1].bytes), cpu_encode(Dtype::kFloat32, b, 7000, pb));
}

// NCCL's all-to-all cuts a message into 128 KiB chunks: one batch of 512 of them, every codec
// setting in turn and odd sizes among them, encodes to the CPU's bytes and decodes, again as
// one batch, to the CPU's values. (A batch this size once failed as "out of device memory".)
TEST_F(Gpu, ABatchOf512ChunksOfMixedCodecsAndSizesMatchesTheCpu) {
  const std::vector<CodecParams> params = all_params(/*row_length=*/64);
  constexpr std::size_t kChunks = 512, kChunkBytes = 128 * 1024;
  std::vector<std::vector<uint8_t>> in(kChunks), cpu(kChunks);
  std::vector<uint64_t> count(kChunks);
  std::size_t in_total = 0, out_total = 0;
  for (std::size_t i = 0; i < kChunks; ++i) {
    count[i] = (kChunkBytes - (i % 7) * 4 * 37) / 4;  // a few odd sizes
    in[i] = testdata::to_dtype(
        testdata::make_floats(i % 2 ? Dist::kSparse : Dist::kGaussian, count[i], i),
        Dtype::kFloat32);
    cpu[i] = cpu_encode(Dtype::kFloat32, in[i], count[i], params[i % params.size()]);
    in_total += in[i].size();
    out_total += kFrameHeaderBytes + in[i].size();
  }
  DeviceBuffer src(in_total), dst(out_total), back(in_total);
  std::vector<gpu::EncodeChunk> enc(kChunks);
  std::vector<std::size_t> in_off(kChunks), out_off(kChunks);
  for (std::size_t i = 0, a = 0, b = 0; i < kChunks;
       a += in[i].size(), b += kFrameHeaderBytes + in[i].size(), ++i) {
    in_off[i] = a;
    out_off[i] = b;
    ASSERT_EQ(cudaMemcpy(src.get() + a, in[i].data(), in[i].size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    enc[i] = {Dtype::kFloat32, src.get() + a,
              count[i],        &params[i % params.size()],
              dst.get() + b,   kFrameHeaderBytes + in[i].size()};
  }
  std::vector<gpu::ChunkResult> r(kChunks);
  const Status st = codec_.encode(enc, stream_, r.data());
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const std::vector<uint8_t> frames = dst.download(out_total);
  std::vector<gpu::DecodeChunk> dec(kChunks);
  for (std::size_t i = 0; i < kChunks; ++i) {
    ASSERT_TRUE(gpu::result_status(r[i]).ok()) << i << ": " << gpu::result_status(r[i]).message();
    ASSERT_EQ(
        std::vector<uint8_t>(frames.begin() + static_cast<std::ptrdiff_t>(out_off[i]),
                             frames.begin() + static_cast<std::ptrdiff_t>(out_off[i] + r[i].bytes)),
        cpu[i])
        << "chunk " << i;
    dec[i] = {dst.get() + out_off[i], r[i].bytes, back.get() + in_off[i], in[i].size(),
              cpu[i].data()};
  }
  ASSERT_TRUE(codec_.decode(dec, stream_, r.data()).ok());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const std::vector<uint8_t> values = back.download(in_total);
  for (std::size_t i = 0; i < kChunks; ++i) {
    ASSERT_TRUE(gpu::result_status(r[i]).ok()) << i << ": " << gpu::result_status(r[i]).message();
    std::vector<uint8_t> ref(in[i].size());
    std::size_t written = 0;
    ASSERT_TRUE(decode_frame(cpu[i], ref, &written).ok());
    ASSERT_EQ(r[i].bytes, written);
    EXPECT_TRUE(std::equal(ref.begin(), ref.begin() + static_cast<std::ptrdiff_t>(written),
                           values.begin() + static_cast<std::ptrdiff_t>(in_off[i])))
        << "chunk " << i;
  }
}

TEST_F(Gpu, MalformedFramesAreRejectedWithoutWriting) {
  const auto in =
      testdata::to_dtype(testdata::make_floats(Dist::kGaussian, 300, 5), Dtype::kFloat32);
  CodecParams p;
  p.codec = CodecId::kQuantize;
  p.quantize.row_length = 10;
  p.quantize.dedupe_rows = true;
  const auto frame = cpu_encode(Dtype::kFloat32, in, 300, p);
  std::vector<uint8_t> out;
  for (std::size_t len = 0; len < frame.size(); len += 7) {
    EXPECT_FALSE(gpu_decode(std::vector<uint8_t>(frame.begin(),
                                                 frame.begin() + static_cast<std::ptrdiff_t>(len)),
                            in.size(), &out)
                     .ok())
        << len;
  }
  for (std::size_t byte = 0; byte < kFrameHeaderBytes; ++byte) {
    auto f = frame;
    f[byte] ^= 0x04;
    EXPECT_FALSE(gpu_decode(f, in.size(), &out).ok()) << byte;
  }
  EXPECT_EQ(gpu_decode(frame, in.size() - 1, &out).code(), Status::Code::kInvalidArgument);
  std::mt19937 rng(3);
  for (int t = 0; t < 300; ++t) {  // random body damage: either rejected or decoded within bounds
    auto f = frame;
    f[kFrameHeaderBytes + static_cast<std::size_t>(rng()) % (f.size() - kFrameHeaderBytes)] =
        static_cast<uint8_t>(rng());
    std::vector<uint8_t> ref(in.size());
    std::size_t written = 0;
    const bool cpu_ok = decode_frame(f, ref, &written).ok();
    const bool gpu_ok = gpu_decode(f, in.size(), &out).ok();
    EXPECT_EQ(gpu_ok, cpu_ok) << t;
    if (cpu_ok && gpu_ok) {
      EXPECT_EQ(out, ref);
    }
  }
}

}  // namespace
}  // namespace squeeze::compress

// The CUDA lossless body against the CPU reference: the same bytes for the same input,
// bodies decode across CPU and GPU, and malformed bodies are rejected on the device without
// touching the destination. Skips without a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "compress/lossless.h"
#include "tests/compress/test_data.h"
#include "tests/compress/threshold_data.h"
#include "tests/gpu/gpu_body_test_util.h"

namespace squeeze::compress {
namespace {

using gpu_test::DeviceBytes;
namespace td = ::squeeze::testdata;

class LosslessGpu : public gpu_test::GpuBodies {
 protected:
  std::vector<uint8_t> cpu_body(Dtype dt, const std::vector<uint8_t>& in) {
    EncodeRequest req{dt, in.data(), in.size() / dtype_size(dt), nullptr, nullptr};
    std::vector<uint8_t> body(lossless_body_bound(req));
    std::size_t n = 0;
    EXPECT_TRUE(lossless_encode_body(req, body, &n).ok());
    body.resize(n);
    return body;
  }
  std::vector<uint8_t> gpu_body(Dtype dt, const std::vector<uint8_t>& in) {
    DeviceBytes src(in), dst(lossless_body_bound_bytes(in.size()));
    const Status s = gpu::enqueue_lossless_body_encode(dt, src.get(), in.size() / dtype_size(dt),
                                                       dst.get(), dst.size(), result_, stream_);
    EXPECT_TRUE(s.ok()) << s.message();
    const gpu::BodyResult r = wait_result();
    EXPECT_EQ(r.code, 0u);
    return dst.download(r.bytes);
  }
  // GPU decode into a pre-filled buffer; returns the whole buffer and the result.
  std::vector<uint8_t> gpu_decode(const std::vector<uint8_t>& body, Dtype dt, uint64_t count,
                                  gpu::BodyResult* r) {
    DeviceBytes b(body), dst(count * dtype_size(dt) + 64, 0xA5);
    const Status s = gpu::enqueue_lossless_body_decode(b.get(), body.size(), dt, count, dst.get(),
                                                       count * dtype_size(dt), result_, stream_);
    EXPECT_TRUE(s.ok()) << s.message();
    *r = wait_result();
    return dst.download(dst.size());
  }
  void check(Dtype dt, const std::vector<uint8_t>& in, const std::string& what) {
    SCOPED_TRACE(what + " " + dtype_name(dt) + " " + std::to_string(in.size()) + " bytes");
    const std::vector<uint8_t> cpu = cpu_body(dt, in);
    ASSERT_EQ(gpu_body(dt, in), cpu) << "GPU body differs from the CPU body";
    gpu::BodyResult r;
    std::vector<uint8_t> out = gpu_decode(cpu, dt, in.size() / dtype_size(dt), &r);
    ASSERT_EQ(r.code, 0u);
    for (std::size_t i = in.size(); i < out.size(); ++i)
      ASSERT_EQ(out[i], 0xA5) << "wrote past dst";
    out.resize(in.size());
    EXPECT_EQ(out, in);
  }
};

TEST_F(LosslessGpu, SameBytesAsTheCpuForEveryKindOfData) {
  for (std::size_t n : {0ul, 1ul, 7ul, 4095ul, 4096ul, 4097ul, 100003ul, (1ul << 20) + 3}) {
    for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
      for (td::Dist d : td::all_dists())
        check(dt, td::to_dtype(td::make_floats(d, n, 3), dt), td::dist_name(d));
    }
    check(Dtype::kBytes, testgen::random_bytes(n, n), "random");
  }
  check(Dtype::kFloat32, td::to_dtype(testgen::sparse_rows(16384, 64, 0.01, 4), Dtype::kFloat32),
        "sparse rows");
  std::vector<float> relu = td::make_floats(td::Dist::kGaussian, 300000, 5);
  for (float& f : relu) f = f > 0 ? f : 0.0f;
  check(Dtype::kFloat32, td::to_dtype(relu, Dtype::kFloat32), "relu");
  check(Dtype::kBfloat16, td::to_dtype(relu, Dtype::kBfloat16), "relu");
}

TEST_F(LosslessGpu, MalformedBodiesAreRejectedWithoutWrites) {
  const std::vector<uint8_t> in =
      td::to_dtype(td::make_floats(td::Dist::kSparse, 20000, 6), Dtype::kFloat32);
  const std::vector<uint8_t> good = cpu_body(Dtype::kFloat32, in);
  auto expect_rejected = [&](const std::vector<uint8_t>& body, const std::string& what) {
    gpu::BodyResult r;
    const std::vector<uint8_t> out = gpu_decode(body, Dtype::kFloat32, 20000, &r);
    EXPECT_NE(r.code, 0u) << what;
    for (uint8_t b : out) ASSERT_EQ(b, 0xA5) << what << ": a rejected body wrote dst";
  };
  for (std::size_t len : {0ul, 3ul, 10ul, good.size() / 2, good.size() - 1}) {
    expect_rejected(
        std::vector<uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len)),
        "truncated to " + std::to_string(len));
  }
  std::vector<uint8_t> b = good;
  b.push_back(0);
  expect_rejected(b, "trailing byte");
  for (std::size_t at : {0ul, 1ul, 2ul, 3ul}) {
    b = good;
    b[at] ^= 0x40;
    expect_rejected(b, "header byte " + std::to_string(at));
  }
  // Every single-byte corruption is either rejected (nothing written) or decodes; the CPU
  // decoder must agree on which.
  for (std::size_t at = 0; at < good.size(); at += 7) {
    b = good;
    b[at] ^= 0x21;
    std::vector<uint8_t> cpu_out(in.size());
    const bool cpu_ok = lossless_decode_body(b, Dtype::kFloat32, 20000, cpu_out).ok();
    gpu::BodyResult r;
    std::vector<uint8_t> out = gpu_decode(b, Dtype::kFloat32, 20000, &r);
    ASSERT_EQ(r.code == 0, cpu_ok) << "byte " << at;
    out.resize(in.size());
    if (cpu_ok) {
      ASSERT_EQ(out, cpu_out) << "byte " << at;
    }
  }
}

}  // namespace
}  // namespace squeeze::compress

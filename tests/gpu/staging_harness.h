// Harness for the GPU staging tests: dlopens the built plugin's v11 table, keeps device
// buffers (this test's own CUDA runtime; the plugin has its own, sharing the device's
// primary context) and reads the plugin's statistics file. One process holds both ends of a
// loopback connection and drives them from one thread, as NCCL's proxy progress thread does.
#pragma once

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plugin/nccl/net_abi.h"
#include "tests/plugin_path.h"

namespace squeeze::gpu_staging_test {

// setNetAttr values: op = 1 << ncclFunc, algo = 1 << algorithm, proto = 1 << protocol.
inline constexpr uint32_t kOpAllGather = 1u << 2, kOpSend = 1u << 6, kOpAllToAll = 1u << 8;
inline constexpr uint32_t kAlgoRing = 1u << 1, kProtoSimple = 1u << 2, kUndef = UINT32_MAX;
inline constexpr int kPtrHost = 1, kPtrCuda = 2;

// WARN and INFO lines the plugin logged (it formats INFO only when NCCL_DEBUG=INFO was set
// before it was loaded).
inline std::vector<std::string>& plugin_log() {
  static std::vector<std::string> lines;
  return lines;
}

inline void test_logger(int level, unsigned long, const char* file, int line, const char* fmt,
                        ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (level == kLogWarn || level == kLogInfo) plugin_log().push_back(buf);
  if (level > kLogWarn && getenv("SQUEEZE_TEST_VERBOSE") == nullptr) return;
  fprintf(stderr, "[plugin log %d] %s:%d %s\n", level, file, line, buf);
}

// The plugin's v11 table; null with *why when it cannot be loaded. Loaded once, never closed.
// The file comes from tests/plugin_path.h's lookup, so a carried build folder finds its own.
// The first load says which file it was, for device_run.sh's summary.
inline nccl_net_v11* load_plugin(std::string* why) {
  static std::string load_error;
  static squeeze::testing::PluginChoice used;
  static void* lib = [] {
    void* l = squeeze::testing::dlopen_plugin(&load_error, &used);
    if (l != nullptr) {
      fprintf(stderr, "plugin: %s (chosen by %s)\n", used.path.c_str(), used.source.c_str());
    }
    return l;
  }();
  if (lib == nullptr) {
    *why = load_error;
    return nullptr;
  }
  auto* net = static_cast<nccl_net_v11*>(dlsym(lib, "ncclNetPlugin_v11"));
  if (net == nullptr) *why = "ncclNetPlugin_v11 missing";
  return net;
}

// cudaMalloc'd bytes, filled with `fill`.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n, uint8_t fill = 0) : n_(n) {
    EXPECT_EQ(cudaMalloc(&p_, n ? n : 1), cudaSuccess);
    EXPECT_EQ(cudaMemset(p_, fill, n ? n : 1), cudaSuccess);
  }
  ~DeviceBuffer() { (void)cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint8_t* get() const { return static_cast<uint8_t*>(p_); }
  std::size_t size() const { return n_; }
  void upload(const void* src, std::size_t n, std::size_t off = 0) {
    if (n > 0) {
      EXPECT_EQ(cudaMemcpy(get() + off, src, n, cudaMemcpyHostToDevice), cudaSuccess);
    }
  }
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> out(n_);
    if (n_ > 0) {
      EXPECT_EQ(cudaMemcpy(out.data(), p_, n_, cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return out;
  }

 private:
  void* p_ = nullptr;
  std::size_t n_;
};

// One message: from send_off of the send region to recv_off of the receive region, posted
// with capacity cap (>= size, as NCCL posts its slot size).
struct Msg {
  std::size_t send_off = 0, size = 0, recv_off = 0, cap = 0;
  int tag = 1;
};

// Lays messages of the given sizes out back to back in both regions; returns the region sizes.
inline std::vector<Msg> layout(const std::vector<std::size_t>& sizes, std::size_t extra,
                               std::size_t* send_bytes, std::size_t* recv_bytes) {
  std::vector<Msg> msgs;
  std::size_t so = 0, ro = 0;
  for (std::size_t z : sizes) {
    msgs.push_back({so, z, ro, z + extra, 1});
    so += z;
    ro += z + extra;
  }
  *send_bytes = so + 1;
  *recv_bytes = ro + 1;
  return msgs;
}

// Statistics the plugin wrote (SQUEEZE_STATS); an empty object when it wrote none yet.
inline nlohmann::json read_stats(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  return nlohmann::json::parse(in, nullptr, false);
}

// rules[name].collectives[coll][key], or raw_by_cause[cause] when cause is given; 0 if absent.
inline uint64_t rule_count(const nlohmann::json& s, const std::string& rule,
                           const std::string& coll, const std::string& key,
                           const std::string& cause = {}) {
  if (!s.contains("rules")) return 0;
  for (const auto& r : s["rules"]) {
    if (r.value("name", "") != rule || !r["collectives"].contains(coll)) continue;
    const auto& c = r["collectives"][coll];
    if (cause.empty()) return c.value(key, uint64_t{0});
    return c["raw_by_cause"].value(cause, uint64_t{0});
  }
  return 0;
}

// decode[codec][coll].messages; 0 if absent.
inline uint64_t decode_count(const nlohmann::json& s, const std::string& codec,
                             const std::string& coll) {
  if (!s.contains("decode") || !s["decode"].contains(codec) || !s["decode"][codec].contains(coll))
    return 0;
  return s["decode"][codec][coll].value("messages", uint64_t{0});
}

}  // namespace squeeze::gpu_staging_test

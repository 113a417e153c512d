// Run-time choice of the quantize encoder's instruction set (quantize_simd.h).
#include "compress/quantize_simd.h"

#include <atomic>

namespace squeeze::compress::qsimd {
namespace {

std::atomic<int> g_level{-1};  // -1: not decided yet

}  // namespace

Level cpu_level() {
#if defined(__x86_64__)
  static const Level l = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")) {
      return Level::kAvx512;
    }
    return __builtin_cpu_supports("avx2") ? Level::kAvx2 : Level::kScalar;
  }();
  return l;
#else
  return Level::kScalar;
#endif
}

Level level() {
  int v = g_level.load(std::memory_order_relaxed);
  if (v < 0) {
    v = static_cast<int>(cpu_level());
    g_level.store(v, std::memory_order_relaxed);
  }
  return static_cast<Level>(v);
}

Level set_level(Level want) {
  const Level prev = level();
  const Level cpu = cpu_level();
  g_level.store(static_cast<int>(want < cpu ? want : cpu), std::memory_order_relaxed);
  return prev;
}

bool parse_level(std::string_view name, Level* out) {
  for (Level l : {Level::kScalar, Level::kAvx2, Level::kAvx512}) {
    if (name == level_name(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

const char* level_name(Level l) {
  switch (l) {
    case Level::kScalar: return "scalar";
    case Level::kAvx2: return "avx2";
    case Level::kAvx512: return "avx512";
  }
  return "?";
}

}  // namespace squeeze::compress::qsimd

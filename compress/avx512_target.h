// What every AVX-512 kernel file of the codecs shares: the target attribute of the
// instruction set qsimd::Level::kAvx512 stands for (AVX-512 F, VL, DQ and BW), and the
// silencing of GCC 12's false warnings about intrinsics. GCC 12 warns that the undefined
// pass-through operand inside many of them (_mm512_cvtps_pd, _mm512_cvtpd_ps, permutes,
// shifts, narrowing conversions, the _mm512_reduce_* shuffles) is used uninitialized; it is
// not: their mask is all ones, or those lanes are discarded. x86-64 only.
#pragma once

#define SQUEEZE_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw")))

#if defined(__clang__)  // clang has no -Wmaybe-uninitialized (and does not warn here)
#define SQUEEZE_INTRINSIC_WARNINGS_OFF \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#else
#define SQUEEZE_INTRINSIC_WARNINGS_OFF                                                       \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#endif
#define SQUEEZE_INTRINSIC_WARNINGS_ON _Pragma("GCC diagnostic pop")

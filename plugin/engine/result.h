// Turning internal statuses and C++ exceptions into NCCL result codes at the ABI edge.
#pragma once

#include <climits>
#include <cstdint>
#include <exception>
#include <new>

#include "plugin/log.h"
#include "plugin/nccl/common.h"
#include "transport/status.h"

namespace squeeze::plugin {

// test() reports sizes as int; NCCL never moves 2 GiB in one request, but stay defined.
inline int clamp_int(uint64_t v) { return v > INT_MAX ? INT_MAX : static_cast<int>(v); }

// Logs a failed transport status with its origin and maps it to an ncclResult_t.
nccl_result_t to_nccl(const transport::Status& s, const char* file, int line);
#define SQ_CHECK_STATUS(expr)                                                      \
  do {                                                                             \
    ::squeeze::transport::Status sq_s_ = (expr);                                   \
    if (!sq_s_.ok()) return ::squeeze::plugin::to_nccl(sq_s_, __FILE__, __LINE__); \
  } while (0)

// Runs f() and makes sure no exception leaves: every C entry point goes through this.
template <typename F>
nccl_result_t guarded(const char* what, F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    SQ_WARN("%s: out of memory", what);
    return kNcclSystemError;
  } catch (const std::exception& e) {
    SQ_WARN("%s: internal error: %s", what, e.what());
    return kNcclInternalError;
  } catch (...) {
    SQ_WARN("%s: unknown internal error", what);
    return kNcclInternalError;
  }
}

}  // namespace squeeze::plugin

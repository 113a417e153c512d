// Logging through the logger NCCL passes to init(), prefixed "NET/Squeeze". Before init (or
// in tools without NCCL) warnings go to stderr so that nothing important is lost.
#pragma once

#include "plugin/nccl/common.h"

namespace squeeze::plugin {

void set_logger(nccl_logger_t logger);
bool have_logger();
nccl_logger_t current_logger();  // nullptr before init
void log_message(int level, unsigned long flags, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

}  // namespace squeeze::plugin

#define SQ_WARN(...) \
  ::squeeze::plugin::log_message(kLogWarn, kSubsysNet, __FILE__, __LINE__, __VA_ARGS__)
#define SQ_INFO(flags, ...) \
  ::squeeze::plugin::log_message(kLogInfo, (flags), __FILE__, __LINE__, __VA_ARGS__)
#define SQ_TRACE(...) \
  ::squeeze::plugin::log_message(kLogTrace, kSubsysNet, __FILE__, __LINE__, __VA_ARGS__)

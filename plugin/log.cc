#include "plugin/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <strings.h>

namespace squeeze::plugin {

namespace {
std::atomic<nccl_logger_t> g_logger{nullptr};

// NCCL's logger drops what NCCL_DEBUG does not ask for; checking the same level here first
// saves formatting on the hot path (TRACE on every isend).
int level_from_env() {
  const char* v = getenv("NCCL_DEBUG");
  if (v == nullptr) return kLogWarn;
  if (strcasecmp(v, "TRACE") == 0) return kLogTrace;
  if (strcasecmp(v, "INFO") == 0) return kLogInfo;
  if (strcasecmp(v, "ABORT") == 0) return kLogAbort;
  if (strcasecmp(v, "VERSION") == 0) return kLogVersion;
  if (strcasecmp(v, "WARN") == 0) return kLogWarn;
  return kLogWarn;
}
const int g_level = level_from_env();
}

void set_logger(nccl_logger_t logger) {
  if (logger != nullptr) g_logger.store(logger);
}

bool have_logger() { return g_logger.load() != nullptr; }
nccl_logger_t current_logger() { return g_logger.load(); }

void log_message(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  if (level > g_level && level != kLogWarn) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  nccl_logger_t logger = g_logger.load();
  if (logger != nullptr) {
    logger(level, flags, file, line, "NET/Squeeze : %s", buf);
  } else if (level == kLogWarn) {
    fprintf(stderr, "NET/Squeeze WARN %s:%d %s\n", file, line, buf);
  }
}

}  // namespace squeeze::plugin

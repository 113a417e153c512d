#include "plugin/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "plugin/params/params.h"

namespace squeeze::plugin {

namespace {
std::atomic<nccl_logger_t> g_logger{nullptr};

// NCCL's logger drops what NCCL_DEBUG does not ask for; checking the same level here first
// saves formatting on the hot path (TRACE on every isend).
int level_from_env() {
  const params::Value v = params::Settings::read_env(params::Id::kNcclDebug, nullptr);
  if (!v.set) return kLogWarn;
  if (v.text == "TRACE") return kLogTrace;
  if (v.text == "INFO") return kLogInfo;
  if (v.text == "ABORT") return kLogAbort;
  if (v.text == "VERSION") return kLogVersion;
  return kLogWarn;
}
const int g_level = level_from_env();
}  // namespace

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

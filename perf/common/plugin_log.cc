#include "perf/common/plugin_log.h"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "plugin/nccl/common.h"
#include "plugin/params/params.h"

namespace squeeze::perf {
namespace {

std::string& tag() {
  static std::string t;
  return t;
}

const char* level_name(int level) {
  switch (level) {
    case kLogWarn: return "WARN";
    case kLogInfo: return "INFO";
    case kLogAbort: return "ABORT";
    case kLogTrace: return "TRACE";
    default: return "LOG";
  }
}

// prefix + the formatted text + "\n" in one write(2), retried only where it was cut short.
void write_line(const std::string& prefix, const char* fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string line = prefix;
  if (n > 0) {
    const std::size_t at = line.size();
    line.resize(at + static_cast<std::size_t>(n) + 1);
    std::vsnprintf(line.data() + at, static_cast<std::size_t>(n) + 1, fmt, ap);
    line.resize(at + static_cast<std::size_t>(n));
  }
  line += '\n';
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t w = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<std::size_t>(w);
  }
}

}  // namespace

void set_log_tag(const std::string& t) { tag() = t; }

void perf_logger(int level, unsigned long, const char* file, int line, const char* fmt, ...) {
  // Read once: the plugin may log on every message, and this runs inside the timed loop.
  static const bool verbose = [] {
    const squeeze::params::Value v =
        squeeze::params::Settings::read_env(squeeze::params::Id::kPerfVerbose, nullptr);
    return v.set && v.integer != 0;
  }();
  if (level > kLogWarn && !verbose) return;
  std::string prefix = tag().empty() ? "" : "[" + tag() + "] ";
  prefix += std::string(level_name(level)) + " [" + (file != nullptr ? file : "?") + ":" +
            std::to_string(line) + "] ";
  va_list ap;
  va_start(ap, fmt);
  write_line(prefix, fmt, ap);
  va_end(ap);
}

void log_line(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  write_line(tag().empty() ? "" : "[" + tag() + "] ", fmt, ap);
  va_end(ap);
}

}  // namespace squeeze::perf

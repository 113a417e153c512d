// The logger the perf tools hand the plugin's init (NCCL's ncclDebugLogger_t shape):
// warnings always, every level when SQUEEZE_PERF_VERBOSE is set (NCCL_DEBUG still decides
// what the plugin emits). Each line reaches stderr in one write, tagged with the rank, so the
// lines of ranks sharing a terminal or a log file never interleave mid-line.
#pragma once

#include <string>

namespace squeeze::perf {

// The tag of this process's lines, e.g. "rank 1"; set before the plugin loads (after a
// fork). Empty: no tag.
void set_log_tag(const std::string& tag);

void perf_logger(int level, unsigned long flags, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

// One formatted line (a newline is added) to stderr in a single write(2), prefixed with the
// tag: "[rank 1] text".
void log_line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace squeeze::perf

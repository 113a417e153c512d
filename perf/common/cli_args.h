// Command-line values the perf tools share: sizes with K/M/G suffixes, bounded integers and
// data-set names. Each tool words its own errors (and prints its own usage).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace squeeze::perf {

// "4K", "1M", "1MiB", "2G", or plain bytes. False for anything else, negative, NaN or
// beyond 1e15 bytes.
bool parse_bytes(const std::string& s, std::size_t* out);

// A decimal integer in [lo, hi]; nullopt when `v` is anything else.
std::optional<long> parse_long_in(const std::string& v, long lo, long hi);

// True when `name` is one of traffic_names(); else false with *known = the known names,
// comma-separated.
bool known_data_set(const std::string& name, std::string* known);

}  // namespace squeeze::perf

#include "perf/common/cli_args.h"

#include <cstdlib>

#include "perf/common/traffic_gen.h"

namespace squeeze::perf {

bool parse_bytes(const std::string& s, std::size_t* out) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || !(v >= 0) || v > 1e15) return false;
  const std::string unit = end;
  double m = 1;
  if (unit == "K" || unit == "KiB" || unit == "k") m = 1024.0;
  else if (unit == "M" || unit == "MiB") m = 1048576.0;
  else if (unit == "G" || unit == "GiB") m = 1073741824.0;
  else if (!unit.empty() && unit != "B") return false;
  *out = static_cast<std::size_t>(v * m);
  return true;
}

std::optional<long> parse_long_in(const std::string& v, long lo, long hi) {
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < lo || x > hi) return std::nullopt;
  return x;
}

bool known_data_set(const std::string& name, std::string* known) {
  known->clear();
  for (const auto& n : traffic_names()) {
    if (n == name) return true;
    *known += (known->empty() ? "" : ", ") + n;
  }
  return false;
}

}  // namespace squeeze::perf

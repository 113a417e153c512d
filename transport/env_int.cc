#include "transport/env_int.h"

#include <cstdlib>

namespace squeeze::transport {

std::string env_int(const char* name, long lo, long hi, int* v) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return "";
  char* end = nullptr;
  const long x = std::strtol(s, &end, 10);
  if (end == s || *end != '\0') return std::string(name) + "=" + s + " is not an integer";
  if (x < lo || x > hi)
    return std::string(name) + "=" + s + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  *v = static_cast<int>(x);
  return "";
}

}  // namespace squeeze::transport

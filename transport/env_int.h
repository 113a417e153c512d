// Integer settings read from the environment, shared by the transports: a bad value is an
// error that names the variable, never a silent fall back to the default.
#pragma once

#include <string>

namespace squeeze::transport {

// Reads the integer variable `name` into *v when it is set and not empty (else leaves *v).
// Returns "" or the problem ("NAME=VALUE is not an integer" / "... is outside [lo, hi]").
std::string env_int(const char* name, long lo, long hi, int* v);

}  // namespace squeeze::transport

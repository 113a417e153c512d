// The caps on what the policy reader accepts, so that a hostile or broken file is refused in
// time linear in its size and with a bounded list of errors (config/README.md documents them).
// A real policy is a few KiB, nests 5 levels deep and has a handful of problems at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace squeeze::policy {

// Largest policy file, in bytes; a larger one is refused before it is read whole.
inline constexpr std::size_t kMaxPolicyBytes = std::size_t{1} << 20;  // 1 MiB
// Deepest nesting of arrays and objects; the document itself is level 1.
inline constexpr int kMaxPolicyDepth = 32;
// Errors listed one per line; any more are counted in one last line.
inline constexpr std::size_t kMaxListedErrors = 20;

// The reason given for a file over kMaxPolicyBytes; `size` is its size in bytes, or "more
// than N bytes" where only a read could tell.
inline std::string policy_too_large(const std::string& size) {
  return "too large: " + size + "; a policy may have at most " + std::to_string(kMaxPolicyBytes) +
         " bytes (1 MiB)";
}

}  // namespace squeeze::policy

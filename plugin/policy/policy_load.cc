#include "plugin/policy/policy_load.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "plugin/policy/policy_limits.h"

namespace squeeze::policy {
namespace {

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) {
    if (!out.empty()) out += '\n';
    out += l;
  }
  return out;
}

// Reads the file at path into *text, or sets *error. A regular file over kMaxPolicyBytes is
// refused from its size alone; anything else (a pipe, a file that grows) once the bytes read
// pass the cap. Either way at most kMaxPolicyBytes + 1 bytes are ever held.
bool read_capped(const char* path, std::string* text, std::string* error) {
  const std::string what = std::string("policy ") + path + ": ";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int e = errno;
    *error = what + "cannot open: " + std::strerror(e);
    return false;
  }
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxPolicyBytes) {
    *error = what + policy_too_large(std::to_string(size) + " bytes");
    return false;
  }
  constexpr std::size_t kChunk = 64 * 1024;
  while (in) {
    const std::size_t had = text->size();
    text->resize(had + kChunk);
    in.read(text->data() + had, kChunk);
    text->resize(had + static_cast<std::size_t>(in.gcount()));
    if (text->size() > kMaxPolicyBytes) {
      *error = what + policy_too_large("more than " + std::to_string(kMaxPolicyBytes) + " bytes");
      return false;
    }
  }
  if (in.bad()) {
    int e = errno;  // set by the failed read(2), e.g. EISDIR
    *error = what + "cannot read: " + std::strerror(e);
    return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<const Policy> load_policy(const char* path, std::string* error) {
  std::vector<std::string> errors;
  std::shared_ptr<const Policy> p;
  if (path == nullptr || *path == '\0') {
    p = Policy::parse(default_policy_text(), "(built-in default)", &errors);
  } else {
    std::string text, why;
    if (!read_capped(path, &text, &why)) {
      if (error != nullptr) *error = why;
      return nullptr;
    }
    p = Policy::parse(text, path, &errors);
  }
  if (p == nullptr && error != nullptr) *error = join_lines(errors);
  return p;
}

}  // namespace squeeze::policy

#include "plugin/policy/policy_load.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

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

}  // namespace

std::shared_ptr<const Policy> load_policy(const char* path, std::string* error) {
  std::vector<std::string> errors;
  std::shared_ptr<const Policy> p;
  if (path == nullptr || *path == '\0') {
    p = Policy::parse(default_policy_text(), "(built-in default)", &errors);
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      int e = errno;
      if (error != nullptr) *error = std::string("policy ") + path + ": cannot open: " + std::strerror(e);
      return nullptr;
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
      if (error != nullptr) *error = std::string("policy ") + path + ": cannot read";
      return nullptr;
    }
    p = Policy::parse(text.str(), path, &errors);
  }
  if (p == nullptr && error != nullptr) *error = join_lines(errors);
  return p;
}

}  // namespace squeeze::policy

#include "perf/nccl/paths.h"
#include "plugin/params/params.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace squeeze::perf::nccl {
namespace {

std::string parent_dir(const std::string& p) {
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
}

}  // namespace

bool file_exists(const std::string& path) {
  struct stat st {};
  return !path.empty() && stat(path.c_str(), &st) == 0;
}

std::string absolute_path(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "squeeze-nccl-perf";
  buf[n] = '\0';
  return buf;
}

std::string default_source_dir() {
  if (const squeeze::params::Value env =
          squeeze::params::Settings::read_env(squeeze::params::Id::kSourceDir, nullptr);
      env.set)
    return env.text;
  const std::string up2 = parent_dir(parent_dir(parent_dir(self_exe())));
  if (file_exists(up2 + "/config/off.json") && file_exists(up2 + "/perf/nccl/policies")) return up2;
  return SQUEEZE_SOURCE_DIR;
}

std::string default_plugin_path() {
  const std::string exe_dir = parent_dir(self_exe());
  for (const std::string& p :
       {exe_dir + "/../plugin/libnccl-net-squeeze.so", exe_dir + "/../lib/libnccl-net-squeeze.so"})
    if (file_exists(p)) return absolute_path(p);
  return SQUEEZE_PLUGIN_PATH;
}

std::vector<std::string> nccl_lib_candidates() {
  std::vector<std::string> v;
  if (const squeeze::params::Value env =
          squeeze::params::Settings::read_env(squeeze::params::Id::kNcclLib, nullptr);
      env.set)
    v.emplace_back(env.text);
  if (file_exists(SQUEEZE_NCCL_LIBRARY)) v.emplace_back(SQUEEZE_NCCL_LIBRARY);
  v.emplace_back("libnccl.so.2");
  return v;
}

}  // namespace squeeze::perf::nccl

// Which plugin file a test dlopens. The build folder is carried to other machines (the GPU
// machine gets perf/gpu/pack.sh's folder at whatever path the checkout lands), so the path
// compiled in (SQUEEZE_PLUGIN_PATH, the build folder's absolute path) is only the last resort:
//   1. $SQUEEZE_TEST_PLUGIN, when set and not empty (used as given, even if it is missing);
//   2. <test executable's folder>/../plugin/libnccl-net-squeeze.so (the build tree's layout);
//   3. <test executable's folder>/libnccl-net-squeeze.so;
//   4. SQUEEZE_PLUGIN_PATH.
// When dlopen fails, the message names the file, the rule that chose it and every candidate.
#pragma once

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#ifndef SQUEEZE_PLUGIN_PATH
#error "SQUEEZE_PLUGIN_PATH (the built plugin's path) must be defined by the build"
#endif

namespace squeeze::testing {

inline constexpr const char* kTestPluginEnv = "SQUEEZE_TEST_PLUGIN";
inline constexpr const char* kPluginFileName = "libnccl-net-squeeze.so";

struct PluginChoice {
  std::string path;    // the file to dlopen
  std::string source;  // which rule chose it
  std::string tried;   // every candidate looked at, in order, with whether it exists
};

inline bool plugin_file_exists(const std::string& p) {
  struct stat st {};
  return !p.empty() && stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The rules above, as a pure function of their inputs: env_value (null or empty when the
// variable is unset), the test executable's folder and the compiled-in path.
inline PluginChoice choose_plugin(const char* env_value, const std::string& exe_dir,
                                  const std::string& compiled) {
  PluginChoice c;
  if (env_value != nullptr && *env_value != '\0') {
    c.path = env_value;
    c.source = std::string("$") + kTestPluginEnv;
    c.tried = c.path + (plugin_file_exists(c.path) ? "" : " (missing)");
    return c;
  }
  const std::string beside[] = {exe_dir + "/../plugin/" + kPluginFileName,
                                exe_dir + "/" + kPluginFileName};
  const char* why[] = {"the build layout next to the test (<exe dir>/../plugin/)",
                       "the test's own folder"};
  for (int i = 0; i < 2; ++i) {
    const bool there = !exe_dir.empty() && plugin_file_exists(beside[i]);
    c.tried += (c.tried.empty() ? "" : ", ") + beside[i] + (there ? "" : " (missing)");
    if (there) {
      c.path = beside[i];
      c.source = why[i];
      return c;
    }
  }
  c.path = compiled;
  c.source = "the path compiled in (SQUEEZE_PLUGIN_PATH)";
  c.tried += ", " + compiled + (plugin_file_exists(compiled) ? "" : " (missing)");
  return c;
}

// The folder of the running test executable; empty if /proc/self/exe cannot be read.
inline std::string test_exe_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  const std::string exe(buf, static_cast<std::size_t>(n));
  const auto slash = exe.rfind('/');
  return slash == std::string::npos ? std::string(".") : exe.substr(0, slash == 0 ? 1 : slash);
}

inline PluginChoice find_plugin() {
  return choose_plugin(std::getenv(kTestPluginEnv), test_exe_dir(), SQUEEZE_PLUGIN_PATH);
}

// dlopen(RTLD_NOW | RTLD_LOCAL) of find_plugin()'s file. On failure: null, and *why says which
// file, why that one, what else was looked at, and dlerror(). *used (if given) gets the choice.
inline void* dlopen_plugin(std::string* why, PluginChoice* used = nullptr) {
  const PluginChoice c = find_plugin();
  if (used != nullptr) *used = c;
  void* lib = dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr && why != nullptr) {
    const char* e = dlerror();
    *why = "dlopen " + c.path + " (chosen by " + c.source + "; looked at: " + c.tried + "; set $" +
           kTestPluginEnv + " to the plugin's path): " + (e != nullptr ? e : "failed");
  }
  return lib;
}

}  // namespace squeeze::testing

// squeeze-params: lists the environment variables Squeeze reads (plugin/params/param_table.h)
// and checks the current environment against them.
//   squeeze-params              the table as text, with what this environment sets
//   squeeze-params --markdown   the README's table
//   squeeze-params --check      exit 1 when a set variable is invalid (each problem on stderr)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "plugin/params/params.h"

namespace {

using squeeze::params::kSpecs;
using squeeze::params::Settings;

int usage(FILE* out, int rc) {
  std::fprintf(out,
               "usage: squeeze-params [--markdown | --check]\n"
               "  (no option)  every variable, its default and this environment's value\n"
               "  --markdown   the README's table of variables\n"
               "  --check      validate this environment; exit 1 on an invalid value\n");
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) return usage(stderr, 2);
  const std::string mode = argc == 2 ? argv[1] : "";
  if (mode == "--help" || mode == "-h") return usage(stdout, 0);
  if (mode == "--markdown") {
    std::fputs(squeeze::params::markdown_table().c_str(), stdout);
    return 0;
  }
  if (!mode.empty() && mode != "--check") {
    std::fprintf(stderr, "squeeze-params: unknown option '%s' (expected --markdown or --check)\n",
                 mode.c_str());
    return 2;
  }
  const Settings st = Settings::from_env();
  for (const std::string& w : st.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  for (const std::string& e : st.errors()) std::fprintf(stderr, "error: %s\n", e.c_str());
  if (mode == "--check") return st.ok() ? 0 : 1;
  int width = 0;  // the longest name, so the columns line up
  for (const auto& s : kSpecs) width = std::max(width, static_cast<int>(std::strlen(s.name)));
  for (const auto& s : kSpecs) {
    std::string now = st.is_set(s.id) ? std::string(st.source(s.id)) + "=" + st.text(s.id) : "-";
    std::printf("%-*s default %-32s set %s\n", width, s.name, s.shown, now.c_str());
  }
  return st.ok() ? 0 : 1;
}

#include "perf/collective/stats_file.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin/params/params.h"
#include "plugin/policy/stats.h"

namespace squeeze::perf {
namespace {

bool add_file(const std::string& path, WireTotals* w) {
  std::ifstream in(path);
  if (!in) return false;
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.contains("totals") || !doc["totals"].is_object()) return false;
  const auto& t = doc["totals"];
  auto get = [&](const char* k) {
    return t.contains(k) && t[k].is_number_unsigned() ? t[k].get<uint64_t>() : 0;
  };
  w->bytes_in += get("bytes_in");
  w->bytes_out += get("bytes_out");
  w->raw_bytes += get("raw_bytes");
  w->messages += get("messages");
  w->raw_messages += get("raw_messages");
  if (doc.contains("routes") && doc["routes"].is_object() && doc["routes"].contains("collnet")) {
    const auto& c = doc["routes"]["collnet"];
    for (const char* k : {"bytes_in", "raw_bytes"})
      if (c.is_object() && c.contains(k) && c[k].is_number_unsigned())
        w->collnet_handed += c[k].get<uint64_t>();
  }
  w->found = true;
  return true;
}

// What the signal handler removes: fixed buffers, filled before the handler is installed,
// and only unlink/rmdir (async-signal-safe) in the handler.
constexpr int kMaxFiles = 4 * 65;  // per rank: main and baseline files, each with its .tmp
char g_files[kMaxFiles][PATH_MAX];
int g_nfiles = 0;
char g_dir[PATH_MAX];

void remove_on_signal(int sig) {
  for (int i = 0; i < g_nfiles; ++i) unlink(g_files[i]);
  rmdir(g_dir);
  signal(sig, SIG_DFL);
  raise(sig);
}

void copy_path(char* dst, const std::string& src) {
  std::strncpy(dst, src.c_str(), PATH_MAX - 1);
  dst[PATH_MAX - 1] = '\0';
}

}  // namespace

StatsDir::StatsDir(int first_rank, int count) {
  if (squeeze::params::Settings::read_env(squeeze::params::Id::kStats, nullptr).set) return;
  std::string dir = "/tmp/squeeze-perf-stats.XXXXXX";
  std::vector<char> buf(dir.begin(), dir.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) return;  // no ratio then; the run itself is unaffected
  dir_ = buf.data();
  const std::string tmpl = dir_ + "/stats.json";
  setenv(policy::kStatsEnv, tmpl.c_str(), 1);
  copy_path(g_dir, dir_);
  for (int r = first_rank; r < first_rank + count && g_nfiles + 4 <= kMaxFiles; ++r) {
    for (const std::string& t : {tmpl, baseline_template(tmpl)}) {
      const std::string p = policy::stats_path_for_rank(t, r);
      copy_path(g_files[g_nfiles++], p);
      copy_path(g_files[g_nfiles++], p + ".tmp");
    }
  }
  signal(SIGINT, remove_on_signal);
  signal(SIGTERM, remove_on_signal);
}

StatsDir::~StatsDir() {
  if (dir_.empty()) return;
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  unsetenv(policy::kStatsEnv);  // the plugin's exit-time report must not write into the removed
                                // directory
  if (DIR* d = opendir(dir_.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") unlink((dir_ + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(dir_.c_str());
}

std::string baseline_template(const std::string& main_template) {
  const std::size_t slash = main_template.rfind('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  return main_template.substr(0, name) + "baseline." + main_template.substr(name);
}

StatsFile::StatsFile(int rank, bool baseline) {
  if (const squeeze::params::Value env =
          squeeze::params::Settings::read_env(squeeze::params::Id::kStats, nullptr);
      env.set) {
    template_ = baseline ? baseline_template(env.text) : env.text;
    path_ = policy::stats_path_for_rank(template_, rank);
    // A file left by an earlier run would read as this run's counters until the plugin first
    // rewrites it; this process's plugin is about to own that file anyway.
    unlink(path_.c_str());
  }
}

ScopedEnv StatsFile::plugin_writes_here() const { return ScopedEnv(policy::kStatsEnv, template_); }

WireTotals StatsFile::read() const {
  WireTotals w;
  if (template_.empty()) return w;
  if (!add_file(path_, &w)) add_file(template_, &w);
  return w;
}

WireTotals wire_delta(const WireTotals& b, const WireTotals& a) {
  WireTotals d;
  if (!a.found || a.bytes_in < b.bytes_in || a.bytes_out < b.bytes_out ||
      a.raw_bytes < b.raw_bytes) {
    d.found = false;
    return d;
  }
  d.found = true;
  d.bytes_in = a.bytes_in - b.bytes_in;
  d.bytes_out = a.bytes_out - b.bytes_out;
  d.raw_bytes = a.raw_bytes - b.raw_bytes;
  d.messages = a.messages - b.messages;
  d.raw_messages = a.raw_messages - b.raw_messages;
  d.collnet_handed = a.collnet_handed >= b.collnet_handed ? a.collnet_handed - b.collnet_handed : 0;
  return d;
}

}  // namespace squeeze::perf

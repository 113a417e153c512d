#include "perf/collective/stats_file.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

namespace squeeze::perf {
namespace {

constexpr const char* kStatsEnv = "SQUEEZE_STATS";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The plugin's naming rule (plugin/policy/stats.h stats_path_for_rank).
std::string path_for_rank(const std::string& t, int rank) {
  const std::string r = std::to_string(rank);
  if (t.find("%r") != std::string::npos) {
    std::string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '%' && i + 1 < t.size() && t[i + 1] == 'r') {
        out += r;
        ++i;
      } else {
        out += t[i];
      }
    }
    return out;
  }
  if (t.size() > 5 && ends_with(t, ".json")) return t.substr(0, t.size() - 5) + ".rank" + r + ".json";
  return t + ".rank" + r + ".json";
}

bool add_file(const std::string& path, WireTotals* w) {
  std::ifstream in(path);
  if (!in) return false;
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.contains("totals") || !doc["totals"].is_object()) return false;
  const auto& t = doc["totals"];
  auto get = [&](const char* k) { return t.contains(k) && t[k].is_number_unsigned() ? t[k].get<uint64_t>() : 0; };
  w->bytes_in += get("bytes_in");
  w->bytes_out += get("bytes_out");
  w->raw_bytes += get("raw_bytes");
  w->messages += get("messages");
  w->raw_messages += get("raw_messages");
  w->found = true;
  return true;
}

}  // namespace

StatsFile::StatsFile(int rank) : rank_(rank) {
  if (const char* env = std::getenv(kStatsEnv); env != nullptr && *env != '\0') {
    template_ = env;
    return;
  }
  std::string dir = "/tmp/squeeze-perf-stats.XXXXXX";
  std::vector<char> buf(dir.begin(), dir.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) return;  // no ratio then; the run itself is unaffected
  private_dir_ = buf.data();
  template_ = private_dir_ + "/stats.json";
  setenv(kStatsEnv, template_.c_str(), 1);
}

StatsFile::~StatsFile() {
  if (private_dir_.empty()) return;
  unsetenv(kStatsEnv);  // the plugin's exit-time report must not write into the removed directory
  if (DIR* d = opendir(private_dir_.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") unlink((private_dir_ + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(private_dir_.c_str());
}

WireTotals StatsFile::read() const {
  WireTotals w;
  if (template_.empty()) return w;
  if (!private_dir_.empty()) {  // only this process writes here: every .json file is ours
    if (DIR* d = opendir(private_dir_.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (ends_with(name, ".json")) add_file(private_dir_ + "/" + name, &w);
      }
      closedir(d);
    }
    return w;
  }
  if (!add_file(path_for_rank(template_, rank_), &w)) add_file(template_, &w);
  return w;
}

WireTotals wire_delta(const WireTotals& b, const WireTotals& a) {
  WireTotals d;
  if (!a.found || a.bytes_in < b.bytes_in || a.bytes_out < b.bytes_out || a.raw_bytes < b.raw_bytes) {
    d.found = false;
    return d;
  }
  d.found = true;
  d.bytes_in = a.bytes_in - b.bytes_in;
  d.bytes_out = a.bytes_out - b.bytes_out;
  d.raw_bytes = a.raw_bytes - b.raw_bytes;
  d.messages = a.messages - b.messages;
  d.raw_messages = a.raw_messages - b.raw_messages;
  return d;
}

}  // namespace squeeze::perf

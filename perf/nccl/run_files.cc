#include "perf/nccl/run_files.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace squeeze::perf::nccl {

void publish(const std::string& dir, const std::string& name, const std::string& data) {
  const std::string path = dir + "/" + name, tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << data;
    out.flush();
    if (!out) throw std::runtime_error(tmp + ": cannot write: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error(path + ": cannot rename from " + tmp + ": " + std::strerror(errno));
}

std::string await(const std::string& dir, const std::string& name, double timeout_s) {
  const std::string path = dir + "/" + name;
  static const pid_t parent = getppid();  // the launcher; the rank also gets SIGTERM if it dies
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (auto wait = std::chrono::microseconds(200);;
       wait = std::min(wait * 2, std::chrono::microseconds(20000))) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    }
    if (getppid() != parent)
      throw std::runtime_error("waiting for " + path + ": the launcher is gone");
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("waiting for " + path + ": nothing after " +
                               std::to_string(static_cast<int>(timeout_s)) +
                               " s (did another rank fail?)");
    std::this_thread::sleep_for(wait);
  }
}

void append_line(const std::string& dir, const std::string& name, const std::string& line) {
  const std::string path = dir + "/" + name;
  std::ofstream out(path, std::ios::app);
  out << line << "\n";
  if (!out) throw std::runtime_error(path + ": cannot append: " + std::strerror(errno));
}

std::vector<std::string> read_lines(const std::string& dir, const std::string& name) {
  std::vector<std::string> lines;
  std::ifstream in(dir + "/" + name);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  return lines;
}

RunDir::RunDir(const std::string& keep_parent, const std::string& name) {
  if (!keep_parent.empty()) {
    keep_ = true;
    mkdir(keep_parent.c_str(), 0755);  // may exist
    path_ = keep_parent + "/" + name;
    if (mkdir(path_.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("--keep: cannot create " + path_ + ": " + std::strerror(errno));
    // Files of an earlier run in the same place would be read as this run's.
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") unlink((path_ + "/" + n).c_str());
      }
      closedir(d);
    }
    return;
  }
  char tmpl[] = "/tmp/squeeze-nccl-perf.XXXXXX";
  if (mkdtemp(tmpl) == nullptr)
    throw std::runtime_error(std::string("cannot create a run directory in /tmp: ") +
                             std::strerror(errno));
  path_ = tmpl;
}

RunDir::~RunDir() {
  if (keep_ || path_.empty()) return;
  if (DIR* d = opendir(path_.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") unlink((path_ + "/" + n).c_str());
    }
    closedir(d);
  }
  rmdir(path_.c_str());
}

}  // namespace squeeze::perf::nccl

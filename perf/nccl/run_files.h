// The ranks of one mode talk through files in the mode's run directory, as small as NCCL's
// own bootstrap needs: rank 0 publishes each row's ncclUniqueId, every rank publishes its
// row summary, rank 0 publishes the rows it printed (for the sweep summary). Files appear
// atomically (written to a temporary name, then renamed), so a reader never sees half.
#pragma once

#include <string>
#include <vector>

namespace squeeze::perf::nccl {

// Writes `data` to dir/name atomically. Throws std::runtime_error naming the file.
void publish(const std::string& dir, const std::string& name, const std::string& data);

// Waits until dir/name exists and returns its contents. Throws std::runtime_error naming the
// file after timeout_s seconds, or at once when the launcher (this process's parent) is gone.
std::string await(const std::string& dir, const std::string& name, double timeout_s);

// Appends one line to dir/name (rank 0's rows).
void append_line(const std::string& dir, const std::string& name, const std::string& line);
// The lines of dir/name; empty when there is no such file.
std::vector<std::string> read_lines(const std::string& dir, const std::string& name);

// A directory made for one mode's run and removed with everything in it (one level deep)
// when this goes away, unless kept (then it stays where it was made).
class RunDir {
 public:
  // Under `keep_parent`/`name` when keep_parent is not empty (created, kept), else a fresh
  // /tmp/squeeze-nccl-perf.XXXXXX (removed). Throws std::runtime_error.
  RunDir(const std::string& keep_parent, const std::string& name);
  ~RunDir();
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace squeeze::perf::nccl

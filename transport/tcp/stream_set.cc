#include "transport/tcp/stream_set.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <thread>

#include "transport/stall_watch.h"
#include "transport/tcp/stream_layout.h"

namespace squeeze::transport::tcp {

void FailBox::set(Status s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_.load(std::memory_order_relaxed)) return;  // the first error is the one to report
  status_ = std::move(s);
  failed_.store(true, std::memory_order_release);
}

Status FailBox::get() const {
  if (!failed()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

namespace {
constexpr uint64_t kMaxIo = uint64_t{1} << 30;
// poll()'s timeout: new parts and stop requests wake the thread at once (eventfd); this only
// bounds how long a thread sleeps if a wake-up were ever missed.
constexpr int kPollMs = 1000;
}  // namespace

// One helper thread and the sockets it drives: socket `s` of the set belongs to thread
// s % nthreads.
class StreamThread {
 public:
  struct Task {
    uint8_t* data = nullptr;
    uint64_t bytes = 0, done = 0;
    std::atomic<int>* left = nullptr;
  };
  StreamThread(StreamSet::Dir dir, std::vector<int> fds, std::vector<int> stream_index,
               std::string peer, FailBox* fail, std::atomic<int>* outstanding,
               std::atomic<int64_t>* first_write, int stall_timeout_ms)
      : dir_(dir),
        fds_(std::move(fds)),
        index_(std::move(stream_index)),
        peer_(std::move(peer)),
        fail_(fail),
        outstanding_(outstanding),
        first_write_(first_write),
        stall_(fds_.size(), StallWatch(dir == StreamSet::Dir::kRecv ? stall_timeout_ms : 0)),
        wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (wake_ < 0)
      fail_->set(Status::System("eventfd for a stream thread: " + sock::errno_str(errno)));
    thread_ = std::thread([this] { run(); });
  }
  ~StreamThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    kick();
    thread_.join();
    if (wake_ >= 0) ::close(wake_);
  }
  void push(int local, Task t) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      inbox_.emplace_back(local, t);
    }
    kick();
  }

 private:
  void kick() {
    if (wake_ < 0) return;
    uint64_t one = 1;
    ssize_t r = ::write(wake_, &one, sizeof one);
    (void)r;  // EAGAIN: the counter is already non-zero, the thread will wake
  }
  Status io_error(sock::Io io, int err, int local, const Task& t) const {
    const std::string where = std::string(dir_ == StreamSet::Dir::kSend ? "send" : "receive") +
                              " of a part on stream " + std::to_string(index_[local]) + " with " +
                              peer_ + " after " + std::to_string(t.done) + " of " +
                              std::to_string(t.bytes) + " bytes";
    if (io == sock::Io::kClosed)
      return Status::Remote("peer closed the connection during " + where);
    return Status::System(where + ": " + sock::errno_str(err));
  }
  // The stall error of socket `local`, whose first part waits: what is missing of it, and of
  // the parts queued behind it.
  Status stall(int local, const std::deque<Task>& q) const {
    const Task& t = q.front();
    uint64_t behind = 0;
    for (std::size_t k = 1; k < q.size(); ++k) behind += q[k].bytes;
    std::string missing = std::to_string(t.bytes - t.done) + " of " + std::to_string(t.bytes) +
                          " bytes of a payload part on data stream " +
                          std::to_string(index_[static_cast<std::size_t>(local)]) + " missing";
    if (behind > 0)
      missing += " (and " + std::to_string(behind) + " bytes of " + std::to_string(q.size() - 1) +
                 " parts queued behind it)";
    const StallWatch& w = stall_[static_cast<std::size_t>(local)];
    return stall_error(peer_, w.waited_s(), bytes_progress(w), missing);
  }
  // Stamps the first write since the link measurement last looked (StreamSet::take_first_write):
  // one atomic load per write, and a clock read once per look.
  void note_write() {
    if (first_write_->load(std::memory_order_relaxed) != 0) return;
    int64_t none = 0;
    first_write_->compare_exchange_strong(
        none, std::chrono::steady_clock::now().time_since_epoch().count(),
        std::memory_order_relaxed);
  }
  // Moves the socket's parts until it would block; false on an error (already reported).
  bool move(int local, std::deque<Task>& q) {
    while (!q.empty()) {
      Task& t = q.front();
      if (t.done < t.bytes) {
        std::size_t n = 0;
        int err = 0;
        const auto len = static_cast<std::size_t>(std::min(t.bytes - t.done, kMaxIo));
        sock::Io io;
        if (dir_ == StreamSet::Dir::kSend) {
          note_write();
          iovec iov{t.data + t.done, len};
          io = sock::writev_once(fds_[local], &iov, 1, &n, &err);
        } else {
          io = sock::read_once(fds_[local], t.data + t.done, len, &n, &err);
        }
        if (io == sock::Io::kWouldBlock) return true;
        if (io != sock::Io::kProgress) {
          fail_->set(io_error(io, err, local, t));
          return false;
        }
        t.done += n;
        stall_[static_cast<std::size_t>(local)].moved(n);
        if (t.done < t.bytes) continue;
      }
      stall_[static_cast<std::size_t>(local)].completed();  // a whole part: progress
      t.left->fetch_sub(1, std::memory_order_release);
      outstanding_->fetch_sub(1, std::memory_order_release);
      q.pop_front();
    }
    return true;
  }
  void run() {
    const std::size_t n = fds_.size();
    std::vector<std::deque<Task>> queues(n);
    std::vector<bool> hung_up(n, false);  // the peer closed it while it had nothing to move
    std::vector<pollfd> pfds(n + 1);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) return;
        for (auto& [local, t] : inbox_) queues[static_cast<std::size_t>(local)].push_back(t);
        inbox_.clear();
      }
      const bool failed = fail_->failed();
      for (std::size_t i = 0; i < n && !failed; ++i) {
        if (!move(static_cast<int>(i), queues[i])) break;
      }
      // A receiving socket that awaits a part and could not move: is it stalled?
      int wait_ms = kPollMs;
      if (!fail_->failed()) {
        const auto now = StallWatch::Clock::now();
        for (std::size_t i = 0; i < n; ++i) {
          StallWatch& w = stall_[i];
          if (queues[i].empty()) {
            w.completed();
            continue;
          }
          if (w.expired(now)) {
            fail_->set(stall(static_cast<int>(i), queues[i]));
            break;
          }
          if (const int left = w.ms_left(now); left >= 0) wait_ms = std::min(wait_ms, left);
        }
      }
      // Once the connection failed, the thread only waits to be stopped: nothing it could
      // move would be used.
      const bool idle_only = fail_->failed();
      pfds[0] = {wake_, POLLIN, 0};
      for (std::size_t i = 0; i < n; ++i) {
        pollfd& p = pfds[i + 1];
        p = {fds_[i], 0, 0};
        if (idle_only) {
          p.fd = -1;
        } else if (!queues[i].empty()) {
          p.events = dir_ == StreamSet::Dir::kSend ? POLLOUT : POLLIN;
        } else if (hung_up[i]) {
          p.fd = -1;  // its next part's read meets the end and reports it
        } else if (dir_ == StreamSet::Dir::kRecv) {
          p.events = POLLRDHUP;
        }
      }
      int r = ::poll(pfds.data(), static_cast<nfds_t>(n + 1), wait_ms);
      if (r < 0 && errno != EINTR) {
        fail_->set(Status::System("poll in a stream thread with " + peer_ + ": " +
                                  sock::errno_str(errno)));
        continue;
      }
      if (pfds[0].revents & POLLIN) {
        uint64_t v = 0;
        ssize_t got = ::read(wake_, &v, sizeof v);
        (void)got;
      }
      for (std::size_t i = 0; i < n; ++i) {
        const short ev = pfds[i + 1].revents;
        if (pfds[i + 1].fd < 0 || !queues[i].empty() || ev == 0) continue;
        if (ev & POLLERR) {  // a reset while idle: the peer is gone
          int err = 0;
          socklen_t len = sizeof err;
          if (getsockopt(fds_[i], SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
          fail_->set(Status::Remote("stream " + std::to_string(index_[i]) + " with " + peer_ +
                                    " failed while idle: " + sock::errno_str(err)));
        } else if (ev & (POLLHUP | POLLRDHUP)) {
          hung_up[i] = true;
        }
      }
    }
  }

  StreamSet::Dir dir_;
  std::vector<int> fds_;  // not owned: the set closes them after joining
  std::vector<int> index_;
  std::string peer_;
  FailBox* fail_;
  std::atomic<int>* outstanding_;
  std::atomic<int64_t>* first_write_;
  std::vector<StallWatch> stall_;  // per socket; used by the thread alone
  int wake_ = -1;
  std::mutex mu_;
  bool stop_ = false;
  std::vector<std::pair<int, Task>> inbox_;
  std::thread thread_;
};

StreamSet::StreamSet(Dir dir, std::vector<sock::Fd> fds, int nthreads, std::string peer,
                     int stall_timeout_ms)
    : dir_(dir), fds_(std::move(fds)), peer_(std::move(peer)) {
  const int n = static_cast<int>(fds_.size());
  nthreads = std::clamp(nthreads, 1, std::max(1, n));
  for (int t = 0; t < nthreads; ++t) {
    std::vector<int> mine, index;
    for (int s = t; s < n; s += nthreads) {
      mine.push_back(fds_[static_cast<std::size_t>(s)].get());
      index.push_back(s + 1);  // stream 0 is the control socket
    }
    threads_.push_back(std::make_unique<StreamThread>(dir_, std::move(mine), std::move(index),
                                                      peer_, &fail_, &outstanding_, &first_write_,
                                                      stall_timeout_ms));
  }
}

StreamSet::~StreamSet() { threads_.clear(); }

void StreamSet::submit(uint8_t* base, uint64_t bytes, std::atomic<int>* left) {
  const int n = nsocks();
  const int parts = part_count(bytes, n);
  if (parts == 0) return;
  left->fetch_add(parts, std::memory_order_relaxed);
  outstanding_.fetch_add(parts, std::memory_order_relaxed);
  const int nthreads = static_cast<int>(threads_.size());
  for (int i = 0; i < parts; ++i) {
    const Part p = part_at(bytes, n, i);
    const int s = (next_ + i) % n;
    threads_[static_cast<std::size_t>(s % nthreads)]->push(
        s / nthreads, StreamThread::Task{base + p.offset, p.bytes, 0, left});
  }
  next_ = (next_ + parts) % n;
}

uint64_t StreamSet::bytes_acked() const {
  uint64_t sum = 0;
  for (const sock::Fd& fd : fds_) {
    TcpCounters c;
    if (tcp_counters(fd.get(), &c)) sum += c.bytes_acked;
  }
  return sum;
}

std::optional<std::chrono::steady_clock::time_point> StreamSet::take_first_write() {
  if (first_write_.load(std::memory_order_relaxed) == 0) return std::nullopt;
  const int64_t t = first_write_.exchange(0, std::memory_order_relaxed);
  if (t == 0) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(t));
}

TcpBacklog StreamSet::backlog() const {
  TcpBacklog all;
  for (const sock::Fd& fd : fds_) {
    const TcpBacklog b = tcp_backlog(fd.get());
    all.busy = all.busy || b.busy;
    all.window_full = all.window_full || b.window_full;
  }
  return all;
}

}  // namespace squeeze::transport::tcp

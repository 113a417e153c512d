// squeeze-transport-bench: two processes, sizes 8 B .. 64 MiB, through the plugin's v11
// ABI (as NCCL's proxy drives it, 8 requests in flight) and, in the same run, through a
// plain blocking TCP socket as the reference, and through N plain blocking sockets in
// parallel (one thread each, every message cut across them as the plugin's multi-stream TCP
// cuts it; N defaults to the plugin's data-socket count for the run). Prints a table, or JSON
// lines with --json.
//
//   squeeze-transport-bench [-b BYTES] [-e BYTES] [--reps N] [--sockets N] [--ifname lo]
//                           [--json] [--plugin PATH] [--policy FILE]    (--help lists them)
//                           [--peer-netns NS --peer-ifname IF --socket-addr ADDR]
// The policy defaults to config/off.json: this measures the transport and the per-message
// metadata path (describe + decide), with every message raw. With --peer-netns the second
// process moves into network namespace NS before it loads the plugin, so the two talk over a
// real link (perf/link_emu.sh's veth pair, for one) instead of loopback.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "perf/common/cli_args.h"
#include "perf/plugin_net.h"
#include "plugin/engine/transport_options.h"
#include "plugin/params/params.h"
#include "transport/tcp/stream_layout.h"

namespace {

// The transport the plugin was asked for (the plugin logs which one it chose and why), read
// through the parameter table as the plugin reads it.
const char* transport_choice() {
  static const std::string choice =
      squeeze::params::Settings::read_env(squeeze::params::Id::kTransport, nullptr).text;
  return choice.c_str();
}

using squeeze::perf::PluginNet;
using Clock = std::chrono::steady_clock;

struct Options {
  std::size_t min = 8, max = 64u << 20;
  int reps = 3;
  int sockets = 0;  // plain sockets in parallel; 0: the plugin's data sockets for this run
  std::string ifname = "lo";
  bool json = false;
  std::string plugin = SQUEEZE_PLUGIN_PATH;
  std::string policy = SQUEEZE_CONFIG_DIR "/off.json";
  std::string peer_netns;                 // the second process's network namespace ("": this one)
  std::string peer_ifname;                // its plugin device ("": --ifname)
  std::string socket_addr = "127.0.0.1";  // the first process's address for the plain socket
};

void write_all(int fd, const void* p, std::size_t n) {
  if (::write(fd, p, n) != static_cast<ssize_t>(n))
    throw std::runtime_error("handle exchange write failed");
}
void read_all(int fd, void* p, std::size_t n) {
  auto* b = static_cast<uint8_t*>(p);
  while (n > 0) {
    ssize_t r = ::read(fd, b, n);
    if (r <= 0) throw std::runtime_error("handle exchange read failed");
    b += r;
    n -= static_cast<std::size_t>(r);
  }
}

// Plain blocking socket helpers for the reference path.
void send_all(int fd, const uint8_t* p, std::size_t n) {
  while (n > 0) {
    ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r <= 0) throw std::runtime_error("socket send failed");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}
void recv_all(int fd, uint8_t* p, std::size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) throw std::runtime_error("socket recv failed");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

struct Link {  // everything one side needs
  PluginNet* net;
  void* send;  // to the peer
  void* recv;  // from the peer
  int fd;      // plain socket to the peer
  std::vector<uint8_t> buf;
  std::vector<int> fds;  // N plain sockets to the peer, driven in parallel
};

// The data sockets the plugin gives this run's connections: its TCP layout from the same
// variables (SQUEEZE_NSOCKS_PERTHREAD, SQUEEZE_SOCKET_NTHREADS, their NCCL fallbacks, or auto
// from the device's speed and the cores), at least 1. UCX and verbs have no data sockets.
int plugin_data_sockets(PluginNet& net, int dev) {
  const squeeze::params::Settings st = squeeze::params::Settings::from_env();
  if (!st.ok()) return 1;  // the plugin refused to start already
  const std::string& choice = st.text(squeeze::params::Id::kTransport);
  if (choice == "ucx" || choice == "ib") return 1;
  nccl_net_props_v11 p{};
  PluginNet::check(net->getProperties(dev, &p), "getProperties");
  const auto layout = squeeze::transport::tcp::choose_streams(
      squeeze::plugin::transport_options(st).tcp, p.speed, squeeze::transport::tcp::usable_cores());
  return std::max(1, layout.nsocks);
}

std::size_t bw_count(std::size_t size) {
  return std::clamp<std::size_t>((256u << 20) / std::max<std::size_t>(size, 1), 8, 20000);
}
int lat_iters(std::size_t size) {
  return size <= (64u << 10) ? 2000 : std::max(20, static_cast<int>((64u << 20) / size));
}

// Plugin streaming: the sender keeps 8 isends in flight, then waits for a 1-byte ack.
double plugin_bw(Link& l, std::size_t size, bool sender) {
  const std::size_t n = bw_count(size);
  const int depth = 8;
  void* reqs[depth];
  uint8_t ack = 0;
  auto t0 = Clock::now();
  std::size_t posted = 0, done = 0;
  while (done < n) {
    while (posted < n && posted - done < depth) {
      reqs[posted % depth] = sender ? l.net->isend(l.send, l.buf.data(), size, 0, nullptr)
                                    : l.net->irecv(l.recv, l.buf.data(), size, 0, nullptr);
      ++posted;
    }
    l.net->wait(reqs[done % depth]);
    ++done;
  }
  if (sender)
    l.net->wait(l.net->irecv(l.recv, &ack, 1, 1, nullptr));
  else
    l.net->wait(l.net->isend(l.send, &ack, 1, 1, nullptr));
  return std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(n * size) *
         1e9;  // ns/B
}

double socket_bw(Link& l, std::size_t size, bool sender) {
  const std::size_t n = bw_count(size);
  uint8_t ack = 0;
  auto t0 = Clock::now();
  for (std::size_t i = 0; i < n; ++i)
    sender ? send_all(l.fd, l.buf.data(), size) : recv_all(l.fd, l.buf.data(), size);
  sender ? recv_all(l.fd, &ack, 1) : send_all(l.fd, &ack, 1);
  return std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(n * size) *
         1e9;
}

// N plain blocking sockets, one thread each: every message is cut into parts as the plugin's
// data sockets cut it (stream_layout.h: at most N parts of at least 64 KiB), each message
// starting on the socket after the last one's, so small messages rotate over the sockets.
double sockets_bw(Link& l, std::size_t size, bool sender) {
  namespace tcp = squeeze::transport::tcp;
  const std::size_t n = bw_count(size);
  const int nsocks = static_cast<int>(l.fds.size());
  uint8_t ack = 0;
  std::atomic<bool> failed{false};
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int k = 0; k < nsocks; ++k)
    threads.emplace_back([&, k] {
      try {
        int next = 0;  // the socket this message's first part goes on
        for (std::size_t m = 0; m < n && !failed; ++m) {
          const int parts = tcp::part_count(size, nsocks);
          for (int i = 0; i < parts; ++i) {
            if ((next + i) % nsocks != k) continue;
            const tcp::Part p = tcp::part_at(size, nsocks, i);
            uint8_t* at = l.buf.data() + p.offset;
            sender ? send_all(l.fds[k], at, p.bytes) : recv_all(l.fds[k], at, p.bytes);
          }
          next = (next + parts) % nsocks;
        }
      } catch (const std::exception&) {
        failed = true;
      }
    });
  for (std::thread& t : threads) t.join();
  if (failed) throw std::runtime_error("parallel sockets: send or recv failed");
  sender ? recv_all(l.fds[0], &ack, 1) : send_all(l.fds[0], &ack, 1);
  return std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(n * size) *
         1e9;
}

// Ping-pong: returns one-way latency in microseconds.
double plugin_lat(Link& l, std::size_t size, bool initiator) {
  const int iters = lat_iters(size);
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    if (initiator) {
      void* rq = l.net->irecv(l.recv, l.buf.data(), size, 2, nullptr);
      l.net->wait(l.net->isend(l.send, l.buf.data(), size, 2, nullptr));
      l.net->wait(rq);
    } else {
      l.net->wait(l.net->irecv(l.recv, l.buf.data(), size, 2, nullptr));
      l.net->wait(l.net->isend(l.send, l.buf.data(), size, 2, nullptr));
    }
  }
  return std::chrono::duration<double>(Clock::now() - t0).count() * 1e6 / (2.0 * iters);
}

double socket_lat(Link& l, std::size_t size, bool initiator) {
  const int iters = lat_iters(size);
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    if (initiator) {
      send_all(l.fd, l.buf.data(), size);
      recv_all(l.fd, l.buf.data(), size);
    } else {
      recv_all(l.fd, l.buf.data(), size);
      send_all(l.fd, l.buf.data(), size);
    }
  }
  return std::chrono::duration<double>(Clock::now() - t0).count() * 1e6 / (2.0 * iters);
}

template <typename F>
double best(int reps, F&& f) {  // smallest cost over reps, after one warm-up run
  f();
  double b = 1e300;
  for (int i = 0; i < reps; ++i) b = std::min(b, f());
  return b;
}

int run(const Options& o) {
  setenv("SQUEEZE_POLICY", o.policy.c_str(), 1);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (inet_pton(AF_INET, o.socket_addr.c_str(), &a.sin_addr) != 1)
    throw std::runtime_error("--socket-addr " + o.socket_addr + " is not an IPv4 address");
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  socklen_t alen = sizeof(a);
  if (bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(ls, 128) != 0 ||
      getsockname(ls, reinterpret_cast<sockaddr*>(&a), &alen) != 0)
    throw std::runtime_error("reference socket setup failed on " + o.socket_addr);

  std::vector<std::size_t> sizes;
  for (std::size_t s = o.min; s <= o.max; s *= 8) sizes.push_back(s);
  if (sizes.back() != o.max) sizes.push_back(o.max);
  if (std::find(sizes.begin(), sizes.end(), std::size_t{1} << 20) == sizes.end() &&
      o.min <= (1u << 20) && o.max >= (1u << 20))
    sizes.push_back(1u << 20);
  std::sort(sizes.begin(), sizes.end());

  // Each process loads the plugin after the fork, in its own namespace, and the two trade
  // their listen handles over a socket pair.
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw std::runtime_error("socketpair failed");
  std::fflush(nullptr);
  pid_t pid = fork();
  bool parent = pid != 0;
  squeeze::perf::set_log_tag(parent ? "rank 0" : "rank 1");
  const int chan = pair[parent ? 0 : 1];
  close(pair[parent ? 1 : 0]);
  std::string ifname = o.ifname;
  if (!parent && !o.peer_netns.empty()) {
    const std::string path = "/var/run/netns/" + o.peer_netns;
    int nsfd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0 || setns(nsfd, CLONE_NEWNET) != 0) {
      fprintf(stderr, "squeeze-transport-bench: cannot enter %s (needs root)\n", path.c_str());
      _exit(1);
    }
    close(nsfd);
  }
  if (!parent && !o.peer_ifname.empty()) ifname = o.peer_ifname;
  setenv("SQUEEZE_SOCKET_IFNAME", ifname.c_str(), 0);
  PluginNet net(o.plugin.c_str());
  int dev = net.device(ifname);
  alignas(8) unsigned char mine[128] = {}, theirs[128] = {};
  void* lcomm = nullptr;
  PluginNet::check(net->listen(net.ctx(), dev, mine, &lcomm), "listen");
  write_all(chan, mine, sizeof mine);
  read_all(chan, theirs, sizeof theirs);
  // The parallel sockets: as many as the sender's (the first process's) plugin connection has
  // data sockets, unless --sockets says.
  int32_t nsocks = 0;
  if (parent) {
    nsocks = o.sockets > 0 ? o.sockets : plugin_data_sockets(net, dev);
    write_all(chan, &nsocks, sizeof nsocks);
  } else {
    read_all(chan, &nsocks, sizeof nsocks);
  }
  Link l{&net, nullptr, nullptr, -1, std::vector<uint8_t>(o.max, 0x5a), {}};
  int one = 1;
  auto dial = [&] {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0)
      throw std::runtime_error("socket connect");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
  };
  if (parent) {
    l.send = net.connect(dev, theirs);
    l.recv = net.accept(lcomm);
    l.fd = accept(ls, nullptr, nullptr);
    if (nsocks > 1) {
      l.fds.assign(static_cast<std::size_t>(nsocks), -1);
      for (int i = 0; i < nsocks; ++i) {  // each says which it is: accept order is no promise
        int fd = accept(ls, nullptr, nullptr);
        uint8_t idx = 0;
        if (fd < 0) throw std::runtime_error("socket accept");
        recv_all(fd, &idx, 1);
        if (idx >= nsocks || l.fds[idx] >= 0) throw std::runtime_error("parallel socket index");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        l.fds[idx] = fd;
      }
    }
  } else {
    l.recv = net.accept(lcomm);
    l.send = net.connect(dev, theirs);
    l.fd = dial();
    for (int i = 0; nsocks > 1 && i < nsocks; ++i) {
      l.fds.push_back(dial());
      const auto idx = static_cast<uint8_t>(i);
      send_all(l.fds.back(), &idx, 1);
    }
  }
  close(ls);
  setsockopt(l.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

  if (parent && !o.json) {
    printf(
        "# squeeze-transport-bench: plugin (ncclNetPlugin_v11, 8 in flight, SQUEEZE_TRANSPORT=%s) "
        "vs one plain blocking TCP socket and vs %d in parallel (one thread each, messages cut "
        "as the plugin's data sockets cut them%s), %s%s%s, policy %s\n",
        transport_choice(), nsocks,
        o.sockets > 0 ? ", --sockets" : ": the plugin's data sockets for this run",
        o.ifname.c_str(), o.peer_netns.empty() ? "" : " to netns ", o.peer_netns.c_str(),
        o.policy.c_str());
    const std::string par = std::to_string(nsocks) + " socks GB/s";
    printf("%12s %12s %12s %8s %14s %8s %12s %12s %8s\n", "size(B)", "squeeze GB/s", "socket GB/s",
           "ratio", par.c_str(), "ratio", "squeeze us", "socket us", "lat x");
  }
  for (std::size_t size : sizes) {
    double pbw = best(o.reps, [&] { return plugin_bw(l, size, parent); });
    double sbw = best(o.reps, [&] { return socket_bw(l, size, parent); });
    // With one socket the parallel column is the plain socket itself: not measured twice.
    double nbw = nsocks > 1 ? best(o.reps, [&] { return sockets_bw(l, size, parent); }) : sbw;
    double plat = -1, slat = -1;
    if (size <= (1u << 20)) {
      plat = best(o.reps, [&] { return plugin_lat(l, size, parent); });
      slat = best(o.reps, [&] { return socket_lat(l, size, parent); });
    }
    if (!parent) continue;
    double p_gbps = 1.0 / pbw, s_gbps = 1.0 / sbw, n_gbps = 1.0 / nbw;  // ns/B -> GB/s
    if (!o.json)
      printf("%12zu %12.3f %12.3f %8.3f %14.3f %8.3f %12.2f %12.2f %8.3f\n", size, p_gbps, s_gbps,
             p_gbps / s_gbps, n_gbps, p_gbps / n_gbps, plat, slat, plat > 0 ? plat / slat : 0.0);
    else
      printf(
          "{\"bench\":\"transport\",\"transport\":\"%s\",\"ifname\":\"%s\",\"size\":%zu,\"squeeze_"
          "GBps\":%.4f,"
          "\"socket_GBps\":%.4f,\"bw_ratio\":%.4f,\"sockets\":%d,\"sockets_GBps\":%.4f,"
          "\"bw_ratio_sockets\":%.4f,\"squeeze_lat_us\":%.3f,\"socket_lat_us\":%.3f,"
          "\"lat_ratio\":%.4f}\n",
          transport_choice(), o.ifname.c_str(), size, p_gbps, s_gbps, p_gbps / s_gbps, nsocks,
          n_gbps, p_gbps / n_gbps, plat, slat, plat > 0 ? plat / slat : 0.0);
    fflush(stdout);
  }
  close(l.fd);
  for (int fd : l.fds) close(fd);
  PluginNet::check(net->closeSend(l.send), "closeSend");
  PluginNet::check(net->closeRecv(l.recv), "closeRecv");
  if (!parent) _exit(0);
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  squeeze::perf::CliParser cli(
      "squeeze-transport-bench",
      "Two processes, 8 B to 64 MiB, through the plugin's ncclNetPlugin_v11 (8 requests in\n"
      "flight, as NCCL's proxy) and, in the same run, through a plain blocking TCP socket and\n"
      "through N plain blocking sockets in parallel, one thread each.");
  cli.section("Work")
      .bytes("-b,--min,--minbytes", &o.min, "smallest message; sizes step by 8x, plus 1 MiB")
      .bytes("-e,--max,--maxbytes", &o.max, "largest message")
      .integer("--reps", &o.reps, 1, 1000, "runs per size; the best is reported")
      .integer("--sockets", &o.sockets, 0, squeeze::transport::tcp::kMaxDataStreams,
               "plain sockets in parallel for the N-sockets column (0: as many as the plugin's "
               "data sockets for this run, at least 1)")
      .text("--ifname", &o.ifname, "IF", "the plugin device (SQUEEZE_SOCKET_IFNAME unless set)")
      .text("--plugin", &o.plugin, "PATH", "the plugin library")
      .text("--policy", &o.policy, "FILE",
            "SQUEEZE_POLICY for the plugin (off.json: raw plus the metadata path)")
      .section("Across a link")
      .text("--peer-netns", &o.peer_netns, "NS",
            "run the second process in network namespace NS (root)")
      .text("--peer-ifname", &o.peer_ifname, "IF",
            "the second process's plugin device (default --ifname)")
      .text("--socket-addr", &o.socket_addr, "ADDR",
            "the first process's IPv4 address, where the plain socket connects (127.0.0.1)")
      .section("Output")
      .flag("--json", &o.json, "JSON lines instead of the table");
  cli.parse_or_exit(argc, argv);
  if (o.min < 1 || o.max < o.min) cli.fail("need 1 <= --min <= --max");
  try {
    return run(o);
  } catch (const std::exception& e) {
    fprintf(stderr, "squeeze-transport-bench: %s\n", e.what());
    return 1;
  }
}

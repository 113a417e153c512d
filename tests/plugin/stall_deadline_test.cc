// A sender that stops halfway through a message (SIGSTOP: its host and kernel are fine, so
// keepalive and TCP_USER_TIMEOUT never fire) is an ncclRemoteError from the receiver's test()
// at the stall deadline, not a hang. The receiver runs in a fresh child process: the plugin
// reads SQUEEZE_STALL_TIMEOUT_S once, at the first init. Over single-socket TCP, multi-stream
// TCP (the payload's parts on data sockets read by helper threads) and UCX (over its tcp
// transport: over shared memory UCX may pull the payload from the stopped process itself).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "plugin/nccl/common.h"
#include "tests/plugin/fork_peer.h"
#include "tests/plugin/plugin_api.h"

namespace squeeze::testing {
namespace {

// Child exit codes, so that a failure says which step went wrong.
enum Outcome : int {
  kRemoteErrorInTime = 0,
  kInitFailed = 20,
  kNoLoopback,
  kListenFailed,
  kAcceptFailed,
  kIrecvFailed,
  kNoReady,
  kHung,        // no error within 30 s
  kWrongError,  // an error, but not ncclRemoteError
  kTooEarly,    // before the deadline
  kTooLate,
  kNoWarmUp,     // the first, small message did not arrive
  kCloseFailed,  // closing the comms after the error failed or took over 5 s
};

struct Variant {
  const char* name;
  std::vector<std::pair<const char*, const char*>> env;
};

int receive_from_stopped_sender(const Variant& setup) {
  setenv("SQUEEZE_STALL_TIMEOUT_S", "1", 1);
  for (const auto& [name, value] : setup.env) setenv(name, value, 1);
  PluginApi& api = *new PluginApi(12);  // the plugin stays loaded, as NCCL keeps it
  if (api.init() != 0) return kInitFailed;
  const int dev = loopback_device(api);
  if (dev < 0) return kNoLoopback;
  alignas(8) unsigned char handle[128] = {};
  void* l = nullptr;
  if (api.listen(dev, handle, &l) != 0) return kListenFailed;
  const std::size_t z = 256u << 20;
  int ready[2];
  if (pipe(ready) != 0) return kNoReady;
  ForkPeer sender([&]() -> int {
    void* s = nullptr;
    while (s == nullptr)
      if (api.connect(dev, handle, &s) != 0) return 10;
    // A small message first, so that the connection is up end to end (UCX wires its
    // endpoints lazily: without this the big message's header might never leave). Sent
    // before the big buffer is filled, which takes seconds under the sanitizers.
    unsigned char first[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    void* req = nullptr;
    while (req == nullptr)
      if (api.isend(s, first, 8, 0, nullptr, &req) != 0) return 11;
    if (wait_request(api, req, nullptr, 30) != 0) return 14;
    std::vector<uint8_t> buf(z);
    uint64_t x = 12345;  // incompressible, so that it goes as it is
    for (std::size_t i = 0; i + 8 <= z; i += 8) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      std::memcpy(buf.data() + i, &x, 8);
    }
    req = nullptr;
    while (req == nullptr)
      if (api.isend(s, buf.data(), z, 1, nullptr, &req) != 0) return 11;
    int done = 0;
    for (int i = 0; i < 50 && !done; ++i) api.test(req, &done, nullptr);  // some bytes leave
    char c = 1;
    if (write(ready[1], &c, 1) != 1) return 12;
    raise(SIGSTOP);  // stalled, not dead: the socket stays open and its kernel answers
    return 13;
  });
  void* r = nullptr;
  while (r == nullptr)
    if (api.accept(l, &r) != 0) return kAcceptFailed;
  std::vector<uint8_t> buf(z);
  void* data = buf.data();
  std::size_t cap = 8;
  int tag = 0;
  void* mh = nullptr;
  void* req = nullptr;
  if (api.irecv(r, 1, &data, &cap, &tag, &mh, &req) != 0 || req == nullptr) return kIrecvFailed;
  if (wait_request(api, req, nullptr, 30) != 0) return kNoWarmUp;
  cap = z;
  tag = 1;
  req = nullptr;
  if (api.irecv(r, 1, &data, &cap, &tag, &mh, &req) != 0 || req == nullptr) return kIrecvFailed;
  char c;
  if (read(ready[0], &c, 1) != 1) return kNoReady;
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = wait_request(api, req, nullptr, 30);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc == -1) return kHung;
  if (rc != kNcclRemoteError) return kWrongError;
  if (waited < 0.9) return kTooEarly;
  if (waited > 5) return kTooLate;
  // The job then closes what it has, as NCCL's abort does, with the sender still stopped:
  // over UCX that must neither abort inside UCX (ucx_session.h) nor wait for the peer.
  const auto t1 = std::chrono::steady_clock::now();
  if (api.close_recv(r) != 0 || api.close_listen(l) != 0 || api.finalize() != 0)
    return kCloseFailed;
  if (std::chrono::steady_clock::now() - t1 > std::chrono::seconds(5)) return kCloseFailed;
  return kRemoteErrorInTime;  // the sender is SIGKILLed as `sender` goes out of scope
}

class StallDeadline : public ::testing::TestWithParam<Variant> {};

TEST_P(StallDeadline, StoppedSenderIsARemoteErrorForNccl) {
  const Variant setup = GetParam();
  ForkPeer receiver([&] { return receive_from_stopped_sender(setup); });
  const int got = receiver.wait(90);
  if (got == kInitFailed && std::string(setup.name) == "ucx")
    GTEST_SKIP() << "the plugin could not start over UCX here";
  EXPECT_EQ(got, kRemoteErrorInTime)
      << "20 init, 21 no lo, 22 listen, 23 accept, 24 irecv, 25 ready, 26 hung "
         "30 s, 27 not ncclRemoteError, 28 before the deadline, 29 well after it, 30 no first "
         "message, 31 closing after the error failed";
}

INSTANTIATE_TEST_SUITE_P(
    Transports, StallDeadline,
    ::testing::Values(Variant{"tcp", {{"SQUEEZE_TRANSPORT", "tcp"}}},
                      Variant{"tcp_streams",
                              {{"SQUEEZE_TRANSPORT", "tcp"},
                               {"SQUEEZE_NSOCKS_PERTHREAD", "2"},
                               {"SQUEEZE_SOCKET_NTHREADS", "2"}}},
                      Variant{"ucx", {{"SQUEEZE_TRANSPORT", "ucx"}, {"UCX_TLS", "tcp"}}}),
    [](const ::testing::TestParamInfo<Variant>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace squeeze::testing

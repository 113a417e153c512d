#include "transport/registry.h"

#include <filesystem>
#include <system_error>

#include "transport/ib/ib_transport.h"
#include "transport/tcp/tcp_transport.h"
#include "transport/ucx/ucx_transport.h"

namespace squeeze::transport {

namespace {

// RDMA devices the kernel knows (InfiniBand, RoCE, iWARP), whether or not our verbs
// transport could open them.
bool machine_has_rdma_device() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/sys/class/infiniband", ec);
  return !ec && it != std::filesystem::directory_iterator();
}

}  // namespace

std::unique_ptr<Transport> open_transport(const Options& o, std::string* why) {
  const std::string choice = o.name.empty() ? "auto" : o.name;
  if (choice == "tcp") {
    *why = "SQUEEZE_TRANSPORT=tcp";
    return std::make_unique<tcp::TcpTransport>(o.socket, o.tcp);
  }
  if (choice == "ib" || choice == "ucx") {
    std::string reason;
    std::unique_ptr<Transport> t = choice == "ib" ? ib::open_transport(o.ib, o.socket, &reason)
                                                  : ucx::open_transport(o.ucx, o.socket, &reason);
    *why = t ? "SQUEEZE_TRANSPORT=" + choice
             : "SQUEEZE_TRANSPORT=" + choice + " requested but not available: " + reason;
    return t;
  }
  if (choice != "auto") {
    *why = "SQUEEZE_TRANSPORT=" + choice + " is not one of auto, ib, ucx, tcp";
    return nullptr;
  }
  std::string no_ib, no_ucx;
  if (std::unique_ptr<Transport> t = ib::open_transport(o.ib, o.socket, &no_ib)) {
    *why = "auto: usable RDMA device found";
    return t;
  }
  // UCX earns its place where it reaches hardware our verbs transport could not open. Where
  // the machine has no RDMA device UCX would run over TCP, and there our own TCP transport
  // is faster (perf/RESULTS.md: the emulator's ring all-reduce several times faster): use it.
  if (!machine_has_rdma_device()) {
    *why = "auto: verbs not available (" + no_ib +
           "); no RDMA device, so UCX would only run over TCP, where this TCP transport is faster "
           "(SQUEEZE_TRANSPORT=ucx uses UCX anyway)";
    return std::make_unique<tcp::TcpTransport>(o.socket, o.tcp);
  }
  if (std::unique_ptr<Transport> t = ucx::open_transport(o.ucx, o.socket, &no_ucx)) {
    *why = "auto: verbs not available (" + no_ib + "); RDMA device present and UCX loaded";
    return t;
  }
  *why = "auto: verbs not available (" + no_ib + "); UCX not available (" + no_ucx + ")";
  return std::make_unique<tcp::TcpTransport>(o.socket, o.tcp);
}

}  // namespace squeeze::transport

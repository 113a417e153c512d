// Network interface discovery with NCCL's NCCL_SOCKET_IFNAME syntax
// ("eth,ib" prefixes, "^docker" excludes, "=eth0" exact names), shared by the transports:
// TCP's devices, the interface UCX and verbs set connections up over, and verbs' HCA filter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "transport/socket/socket.h"

namespace squeeze::transport::sock {

struct Interface {
  std::string name;
  SockAddr addr;  // port 0
};

// Parsed interface filter. Empty filter = NCCL's default policy.
class IfFilter {
 public:
  static IfFilter parse(std::string_view spec);
  bool matches(std::string_view ifname) const;
  bool empty() const { return names_.empty(); }

 private:
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<std::string> names_;
};

// Interfaces that are up and have an address, honouring SQUEEZE_SOCKET_IFNAME, else
// NCCL_SOCKET_IFNAME. Without either, like NCCL: everything but lo and docker*, falling back
// to docker*, then lo. SQUEEZE_SOCKET_FAMILY / NCCL_SOCKET_FAMILY (AF_INET, AF_INET6) restrict
// the address family. One entry per interface, IPv4 preferred, link-local IPv6 skipped.
std::vector<Interface> find_interfaces();
// Same, with an explicit filter spec and family (0 = any); exposed for tests.
std::vector<Interface> find_interfaces(std::string_view spec, int family);

// Link speed from /sys/class/net/<if>/speed in Mbps, or 10000 when unknown.
int interface_speed_mbps(const std::string& ifname);
// realpath of /sys/class/net/<if>/device, or "" for virtual interfaces.
std::string interface_pci_path(const std::string& ifname);

}  // namespace squeeze::transport::sock

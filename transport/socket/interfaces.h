// Network interface discovery with NCCL's NCCL_SOCKET_IFNAME syntax
// ("eth,ib" prefixes, "^docker" excludes, "=eth0" exact names), shared by the transports:
// TCP's devices, the interface UCX and verbs set connections up over, and verbs' HCA filter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "transport/socket/socket.h"
#include "transport/socket/socket_options.h"

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

// Interfaces that are up and have an address, picked by the filter `spec` (see
// SocketOptions::ifname; empty: like NCCL, everything but lo and docker*, falling back to
// docker*, then lo) and of address family `family` (AF_INET, AF_INET6; 0 = any). One entry
// per interface, IPv4 preferred, link-local IPv6 skipped.
std::vector<Interface> find_interfaces(std::string_view spec, int family);
// The same with the choice made in `o` (ifname and family).
std::vector<Interface> find_interfaces(const SocketOptions& o);

// Link speed from /sys/class/net/<if>/speed in Mbps, or 10000 when unknown.
int interface_speed_mbps(const std::string& ifname);
// realpath of /sys/class/net/<if>/device, or "" for virtual interfaces.
std::string interface_pci_path(const std::string& ifname);

}  // namespace squeeze::transport::sock

#include "transport/socket/interfaces.h"

#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

namespace squeeze::transport::sock {

IfFilter IfFilter::parse(std::string_view spec) {
  IfFilter f;
  if (!spec.empty() && spec.front() == '^') {
    f.exclude_ = true;
    spec.remove_prefix(1);
  }
  if (!spec.empty() && spec.front() == '=') {
    f.exact_ = true;
    spec.remove_prefix(1);
  }
  while (!spec.empty()) {
    std::size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    if (!item.empty()) f.names_.emplace_back(item);
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  return f;
}

bool IfFilter::matches(std::string_view ifname) const {
  bool hit = false;
  for (const std::string& n : names_) {
    if (exact_ ? ifname == n : ifname.substr(0, n.size()) == n) {
      hit = true;
      break;
    }
  }
  return exclude_ ? !hit : hit;
}

static bool is_link_local6(const sockaddr* sa) {
  if (sa->sa_family != AF_INET6) return false;
  const auto* a6 = reinterpret_cast<const sockaddr_in6*>(sa);
  return IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr);
}

static std::vector<Interface> scan(const IfFilter& filter, int family) {
  std::vector<Interface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (int pass = 0; pass < 2; ++pass) {  // IPv4 first, then IPv6 for interfaces without IPv4
    int want = pass == 0 ? AF_INET : AF_INET6;
    if (family != 0 && family != want) continue;
    for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
      if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != want) continue;
      if ((ifa->ifa_flags & IFF_UP) == 0 || is_link_local6(ifa->ifa_addr)) continue;
      if (!filter.matches(ifa->ifa_name)) continue;
      bool seen = false;
      for (const Interface& i : out) seen = seen || i.name == ifa->ifa_name;
      if (seen) continue;
      Interface i;
      i.name = ifa->ifa_name;
      i.addr.len = want == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
      std::memcpy(&i.addr.storage, ifa->ifa_addr, i.addr.len);
      i.addr.set_port(0);
      out.push_back(std::move(i));
    }
  }
  freeifaddrs(list);
  return out;
}

std::vector<Interface> find_interfaces(std::string_view spec, int family) {
  if (!spec.empty()) return scan(IfFilter::parse(spec), family);
  // NCCL's default: avoid docker bridges and loopback unless they are all there is.
  for (const char* s : {"^docker,lo", "docker", "lo"}) {
    std::vector<Interface> found = scan(IfFilter::parse(s), family);
    if (!found.empty()) return found;
  }
  return {};
}

std::vector<Interface> find_interfaces(const SocketOptions& o) {
  return find_interfaces(o.ifname, o.family);
}

int interface_speed_mbps(const std::string& ifname) {
  std::ifstream f("/sys/class/net/" + ifname + "/speed");
  long speed = 0;
  if (f >> speed && speed > 0 && speed < (1L << 30)) return static_cast<int>(speed);
  return 10000;
}

std::string interface_pci_path(const std::string& ifname) {
  std::string link = "/sys/class/net/" + ifname + "/device";
  char buf[PATH_MAX];
  if (realpath(link.c_str(), buf) == nullptr) return "";
  return buf;
}

}  // namespace squeeze::transport::sock

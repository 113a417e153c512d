// The socket helpers the tcp, ucx and ib transports share: interface filters in NCCL's
// syntax, interface discovery, and the options every data socket gets.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <string>

#include "transport/socket/interfaces.h"
#include "transport/socket/socket.h"

namespace squeeze::transport::sock {
namespace {

TEST(IfFilter, PrefixListMatchesLikeNccl) {
  IfFilter f = IfFilter::parse("eth,ib");
  EXPECT_TRUE(f.matches("eth0"));
  EXPECT_TRUE(f.matches("ib1"));
  EXPECT_FALSE(f.matches("lo"));
}

TEST(IfFilter, CaretExcludes) {
  IfFilter f = IfFilter::parse("^docker,lo");
  EXPECT_FALSE(f.matches("docker0"));
  EXPECT_FALSE(f.matches("lo"));
  EXPECT_TRUE(f.matches("eth0"));
}

TEST(IfFilter, EqualsMeansExactName) {
  IfFilter f = IfFilter::parse("=eth0");
  EXPECT_TRUE(f.matches("eth0"));
  EXPECT_FALSE(f.matches("eth00"));
  IfFilter g = IfFilter::parse("^=eth0");
  EXPECT_FALSE(g.matches("eth0"));
  EXPECT_TRUE(g.matches("eth01"));
}

TEST(Interfaces, LoopbackIsFoundWhenAskedFor) {
  auto ifs = find_interfaces("lo", 0);
  ASSERT_EQ(ifs.size(), 1u);
  EXPECT_EQ(ifs[0].name, "lo");
  EXPECT_EQ(ifs[0].addr.port(), 0);
  EXPECT_EQ(interface_speed_mbps("lo"), 10000) << "no /sys speed for lo: default 10 Gb/s";
  EXPECT_TRUE(find_interfaces("=no-such-if", 0).empty());
}

// Every data socket gets the keepalive and user timeout the options ask for (the defaults
// when none are given): a vanished peer turns into an error within seconds.
int sockopt(int fd, int level, int name) {
  int v = -1;
  socklen_t len = sizeof(v);
  EXPECT_EQ(getsockopt(fd, level, name, &v, &len), 0);
  return v;
}

TEST(DataSocket, GetsTheTimeoutsOfItsOptions) {
  Fd fd(socket(AF_INET, SOCK_STREAM, 0));
  ASSERT_GE(fd.get(), 0);
  ASSERT_TRUE(configure_data_socket(fd.get(), SocketOptions{}).ok());
  EXPECT_EQ(sockopt(fd.get(), IPPROTO_TCP, TCP_USER_TIMEOUT), 10000);
  EXPECT_EQ(sockopt(fd.get(), IPPROTO_TCP, TCP_KEEPIDLE), 5);
  EXPECT_EQ(sockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY), 1);
  EXPECT_EQ(sockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE), 1);
  SocketOptions o;
  o.user_timeout_ms = 2500;
  o.keepidle_s = 7;
  ASSERT_TRUE(configure_data_socket(fd.get(), o).ok());
  EXPECT_EQ(sockopt(fd.get(), IPPROTO_TCP, TCP_USER_TIMEOUT), 2500);
  EXPECT_EQ(sockopt(fd.get(), IPPROTO_TCP, TCP_KEEPIDLE), 7);
}

TEST(Interfaces, OptionsPickTheInterfaces) {
  SocketOptions o;
  o.ifname = "=lo";
  auto ifs = find_interfaces(o);
  ASSERT_EQ(ifs.size(), 1u);
  EXPECT_EQ(ifs[0].name, "lo");
  o.family = AF_INET6;
  for (const Interface& i : find_interfaces(o)) EXPECT_EQ(i.addr.family(), AF_INET6) << i.name;
  o.ifname = "=no-such-if";
  o.family = 0;
  EXPECT_TRUE(find_interfaces(o).empty());
}

}  // namespace
}  // namespace squeeze::transport::sock

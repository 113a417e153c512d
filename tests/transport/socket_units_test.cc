// The socket helpers the tcp, ucx and ib transports share: interface filters in NCCL's
// syntax, interface discovery, and the options every data socket gets.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
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

// A bad socket setting is an error that names the variable, not a silent default.
TEST(DataSocket, BadTimeoutVariablesAreNamed) {
  Fd fd(socket(AF_INET, SOCK_STREAM, 0));
  ASSERT_GE(fd.get(), 0);
  EXPECT_TRUE(configure_data_socket(fd.get()).ok());
  const struct {
    const char *name, *value, *says;
  } cases[] = {{"SQUEEZE_TCP_TIMEOUT_MS", "10s", "SQUEEZE_TCP_TIMEOUT_MS=10s is not an integer"},
               {"SQUEEZE_TCP_TIMEOUT_MS", "0", "SQUEEZE_TCP_TIMEOUT_MS=0 is outside [1, "},
               {"SQUEEZE_TCP_KEEPIDLE_S", "40000", "SQUEEZE_TCP_KEEPIDLE_S=40000 is outside [1, 32767]"}};
  for (const auto& c : cases) {
    setenv(c.name, c.value, 1);
    const Status st = configure_data_socket(fd.get());
    unsetenv(c.name);
    EXPECT_FALSE(st.ok()) << c.name << "=" << c.value;
    EXPECT_NE(st.message().find(c.says), std::string::npos) << st.message();
  }
  setenv("SQUEEZE_TCP_TIMEOUT_MS", "2500", 1);
  EXPECT_TRUE(configure_data_socket(fd.get()).ok());
  unsetenv("SQUEEZE_TCP_TIMEOUT_MS");
}

}  // namespace
}  // namespace squeeze::transport::sock

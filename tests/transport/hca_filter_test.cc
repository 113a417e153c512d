// NCCL_IB_HCA's syntax as NCCL 2.28 reads it: prefixes, "=" exact names, "^" excludes, and
// ":port" on an entry.
#include "transport/ib/hca_filter.h"

#include <gtest/gtest.h>

namespace squeeze::transport::ib {
namespace {

HcaFilter parsed(const char* spec) {
  HcaFilter f;
  EXPECT_EQ(HcaFilter::parse(spec, &f), "") << spec;
  return f;
}

TEST(HcaFilter, EmptySelectsEveryPort) {
  const HcaFilter f = parsed("");
  EXPECT_TRUE(f.selects("mlx5_0", 1));
  EXPECT_TRUE(f.selects("anything", 2));
}

TEST(HcaFilter, NamesArePrefixesUnlessExact) {
  const HcaFilter prefix = parsed("mlx5_1");
  EXPECT_TRUE(prefix.selects("mlx5_1", 1));
  EXPECT_TRUE(prefix.selects("mlx5_10", 1)) << "NCCL matches prefixes";
  EXPECT_FALSE(prefix.selects("mlx5_0", 1));
  const HcaFilter exact = parsed("=mlx5_1");
  EXPECT_TRUE(exact.selects("mlx5_1", 1));
  EXPECT_FALSE(exact.selects("mlx5_10", 1));
}

TEST(HcaFilter, PortsNarrowAnEntry) {
  const HcaFilter f = parsed("mlx5_0:2,mlx5_1");
  EXPECT_FALSE(f.selects("mlx5_0", 1));
  EXPECT_TRUE(f.selects("mlx5_0", 2));
  EXPECT_TRUE(f.selects("mlx5_1", 1));
  EXPECT_TRUE(f.selects("mlx5_1", 2)) << "no port: every port";
}

TEST(HcaFilter, CaretExcludesAndComesBeforeEquals) {
  const HcaFilter f = parsed("^=mlx5_1,mlx5_0:1");
  EXPECT_FALSE(f.selects("mlx5_1", 1));
  EXPECT_TRUE(f.selects("mlx5_10", 1));
  EXPECT_FALSE(f.selects("mlx5_0", 1));
  EXPECT_TRUE(f.selects("mlx5_0", 2));
  const HcaFilter none = parsed("^");
  EXPECT_FALSE(none.selects("mlx5_0", 1)) << "NCCL: '^' with no names excludes everything";
}

TEST(HcaFilter, EmptyEntriesAreSkipped) {
  const HcaFilter f = parsed(",mlx5_0,,");
  EXPECT_TRUE(f.selects("mlx5_0", 1));
  EXPECT_FALSE(f.selects("mlx5_1", 1));
}

TEST(HcaFilter, APortThatIsNotANumberIsNamed) {
  HcaFilter f;
  for (const char* bad : {"mlx5_0:x", "mlx5_0:", "mlx5_0:0", "mlx5_0:256", "mlx5_1,mlx5_0:1x"}) {
    const std::string why = HcaFilter::parse(bad, &f);
    EXPECT_NE(why.find("has no port number in [1, 255]"), std::string::npos) << bad << ": " << why;
  }
  EXPECT_EQ(HcaFilter::parse("mlx5_1,mlx5_0:1x", &f),
            "entry 'mlx5_0:1x' has no port number in [1, 255] after ':'");
}

}  // namespace
}  // namespace squeeze::transport::ib

// Which RDMA ports to use, in NCCL's NCCL_IB_HCA syntax (facts from NCCL 2.28):
// - a comma-separated list of entries, each a device name with an optional port,
//   "mlx5_0" or "mlx5_0:1";
// - a name matches device names that start with it ("mlx5" matches mlx5_0 and mlx5_10),
//   unless the list starts with "=", then only the exact name;
// - an entry without a port matches every port of its devices, one with a port only that port;
// - a list that starts with "^" (before any "=") selects every port it does not match;
// - an empty list selects every port.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace squeeze::transport::ib {

class HcaFilter {
 public:
  // Parses `spec`. Returns "" or what is wrong with it (a port that is not a number in
  // [1, 255]), without naming the variable.
  static std::string parse(std::string_view spec, HcaFilter* out);

  // Whether port `port` (1-based) of the device `device` is to be used.
  bool selects(std::string_view device, int port) const;

 private:
  struct Entry {
    std::string name;
    int port = -1;  // -1: every port
  };
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<Entry> entries_;
};

}  // namespace squeeze::transport::ib

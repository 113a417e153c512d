#include "transport/ib/ib_transport.h"

namespace squeeze::transport::ib {

std::unique_ptr<Transport> open_transport(std::string* why) {
  *why = "the ib transport is not built into this version";
  return nullptr;
}

}  // namespace squeeze::transport::ib

#include "transport/socket/nonce.h"

#include <sys/random.h>

#include <cerrno>
#include <cstddef>

#include "transport/socket/socket.h"

namespace squeeze::transport::sock {

Status random_nonce(uint64_t* nonce) {
  auto* out = reinterpret_cast<unsigned char*>(nonce);
  std::size_t got = 0;
  while (got < sizeof(*nonce)) {
    const ssize_t n = ::getrandom(out + got, sizeof(*nonce) - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::System("getrandom for a listener's nonce: " + errno_str(errno));
    }
    got += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

}  // namespace squeeze::transport::sock

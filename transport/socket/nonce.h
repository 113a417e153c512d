// The nonce a listener writes into its NCCL handle and expects back in every hello. It keeps
// one job's connections apart from another's (and from stale ones of the same job); it does
// not authenticate a peer: anyone who sees the handle, or the traffic, can present it.
#pragma once

#include <cstdint>

#include "transport/status.h"

namespace squeeze::transport::sock {

// 64 bits from the kernel's random source (getrandom), fresh for each listen().
Status random_nonce(uint64_t* nonce);

}  // namespace squeeze::transport::sock

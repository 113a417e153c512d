// How a call's elements are split among the nodes: node j owns piece j, the
// elements [count·j/n, count·(j+1)/n). Every rank computes the same split from
// the call alone.
#pragma once

#include <cstdint>

namespace squeeze::collnet {

struct Piece {
  uint64_t begin = 0;  // first element
  uint64_t count = 0;  // elements (0 when count < n leaves node j none)
};

// floor(count·j / n) without overflow: count = q·n + r gives q·j + floor(r·j /
// n), r·j < n².
inline uint64_t piece_start(uint64_t count, int nodes, int j) {
  const auto n = static_cast<uint64_t>(nodes);
  const auto jj = static_cast<uint64_t>(j);
  return (count / n) * jj + (count % n) * jj / n;
}

inline Piece piece_of(uint64_t count, int nodes, int j) {
  const uint64_t lo = piece_start(count, nodes, j);
  return {lo, piece_start(count, nodes, j + 1) - lo};
}

}  // namespace squeeze::collnet

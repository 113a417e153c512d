// What the plugin (or a tool or test) decides about the transports' TCP sockets: which
// interfaces, and how soon a vanished peer becomes an error. The defaults are what Squeeze
// uses when nothing is set; the plugin fills the struct from its parameter table
// (SQUEEZE_SOCKET_IFNAME / NCCL_SOCKET_IFNAME, SQUEEZE_SOCKET_FAMILY / NCCL_SOCKET_FAMILY,
// SQUEEZE_TCP_TIMEOUT_MS, SQUEEZE_TCP_KEEPIDLE_S, SQUEEZE_HANDSHAKE_TIMEOUT_S,
// SQUEEZE_LISTEN_PENDING, SQUEEZE_STALL_TIMEOUT_S). Nothing here reads the environment.
#pragma once

#include <string>

namespace squeeze::transport::sock {

struct SocketOptions {
  // Interfaces in NCCL_SOCKET_IFNAME syntax ("eth,ib" prefixes, "^docker" excludes, "=eth0"
  // exact names); empty: NCCL's default, every interface but lo and docker*, else docker*,
  // else lo.
  std::string ifname;
  // AF_INET or AF_INET6 restricts the interfaces' address family; 0: any.
  int family = 0;
  // TCP_USER_TIMEOUT of every data socket: unacknowledged data older than this fails the
  // connection.
  int user_timeout_ms = 10000;
  // TCP_KEEPIDLE: idle seconds before keepalive probes (1 s apart, 5 of them) look for a
  // peer that vanished.
  int keepidle_s = 5;

  // Listeners (tcp, ucx, verbs): a connection that has not completed its hello this long
  // after it was accepted is closed.
  int handshake_timeout_ms = 30000;
  // At most this many accepted connections wait for their hello; one more closes the oldest
  // that has not shown the listener's nonce.
  int max_pending = 128;
  // TCP data: a message that stops arriving halfway, with no byte for this long while a
  // receive waits for it, fails that receive. 0: wait forever.
  int stall_timeout_ms = 120000;
  // Where the listeners report what they drop and why (the plugin passes NCCL's logger);
  // null: warnings to stderr, nothing else.
  void (*log)(bool warn, const char* message) = nullptr;
};

// Logs through options.log, or warnings to stderr without one.
void log_to(const SocketOptions& options, bool warn, const std::string& message);

}  // namespace squeeze::transport::sock

#include "plugin/engine/transport_options.h"

#include <sys/socket.h>

#include <cstddef>
#include <string>

#include "plugin/log.h"

namespace squeeze::plugin {

using params::Id;

namespace {
// The transports' listeners report through NCCL's logger.
void transport_log(bool warn, const char* message) {
  if (warn) {
    SQ_WARN("%s", message);
  } else {
    SQ_INFO(kSubsysNet, "%s", message);
  }
}
// "NCCL_SOCKET_NTHREADS=2": the variable that set an integer and its value, for the line each
// TCP connection logs; "" when unset.
std::string set_by(const params::Settings& st, Id id) {
  if (!st.is_set(id)) return "";
  return std::string(st.source(id)) + "=" + std::to_string(st.integer(id));
}
}  // namespace

transport::Options transport_options(const params::Settings& st) {
  auto integer = [&](Id id) { return static_cast<int>(st.integer(id)); };
  transport::Options o;
  o.name = st.text(Id::kTransport);

  o.socket.ifname = st.text(Id::kSocketIfname);
  const std::string& family = st.text(Id::kSocketFamily);
  o.socket.family = family == "AF_INET6" ? AF_INET6 : family == "AF_INET" ? AF_INET : 0;
  o.socket.user_timeout_ms = integer(Id::kTcpTimeoutMs);
  o.socket.keepidle_s = integer(Id::kTcpKeepIdleS);
  o.socket.handshake_timeout_ms = integer(Id::kHandshakeTimeoutS) * 1000;
  o.socket.max_pending = integer(Id::kListenPending);
  o.socket.stall_timeout_ms = integer(Id::kStallTimeoutS) * 1000;
  o.socket.log = transport_log;

  o.tcp.nsocks_per_thread = st.integer_or(Id::kNsocksPerThread, transport::tcp::TcpOptions::kAuto);
  o.tcp.nthreads = st.integer_or(Id::kSocketNthreads, transport::tcp::TcpOptions::kAuto);
  o.tcp.nsocks_per_thread_from = set_by(st, Id::kNsocksPerThread);
  o.tcp.nthreads_from = set_by(st, Id::kSocketNthreads);
  o.tcp.max_rate_bps = st.number(Id::kMaxRate) * 1e9;

  o.ucx.library = st.text(Id::kUcxLibrary);
  o.ucx.tls = st.text(Id::kUcxTls);

  o.ib.hca = st.text(Id::kIbHca);
  if (st.is_set(Id::kIbHca)) o.ib.hca_variable = st.source(Id::kIbHca);
  o.ib.qps_per_conn = integer(Id::kIbQpsPerConnection);
  o.ib.gid_index = integer(Id::kIbGidIndex);
  o.ib.timeout = integer(Id::kIbTimeout);
  o.ib.retry_cnt = integer(Id::kIbRetryCnt);
  o.ib.service_level = integer(Id::kIbSl);
  o.ib.traffic_class = integer(Id::kIbTc);
  o.ib.gdr = integer(Id::kIbGdr);
  o.ib.gdr_flush = st.flag(Id::kIbGdrFlush);
  o.ib.dmabuf = st.flag(Id::kIbDmabuf);
  o.ib.mr_cache_entries = static_cast<std::size_t>(st.integer(Id::kIbMrCache));
  o.ib.relaxed_ordering = integer(Id::kIbPciRelaxedOrdering);
  return o;
}

}  // namespace squeeze::plugin

// Every environment variable Squeeze reads, declared once: name, the NCCL (or launcher)
// variables it falls back to, type, range or choices, default and meaning. plugin/params/
// params.cc is the only code that reads the environment; everything else asks a Settings
// object (params.h) built from this table. The README's variable table is generated from it
// (`squeeze-params --markdown`) and a test keeps the two equal.
//
// Rules that hold for every entry:
// - A bad SQUEEZE_* value is an error that names the variable, the value and what is
//   accepted; the plugin refuses to start (init fails) rather than run with a setting the
//   user did not ask for.
// - A bad NCCL_* or launcher value is a warning and is skipped (the next fallback or the
//   default applies), as NCCL itself treats its own variables.
// - A SQUEEZE_* variable wins over the NCCL_* variable it falls back to, so Squeeze can be
//   tuned apart from NCCL's own IB transport; with only the NCCL_* one set, Squeeze follows it.
// - An empty value counts as unset.
// - Booleans accept 0/1, off/on, false/true, no/yes (any case), the same everywhere.
// - Choices match without regard to case.
#pragma once

#include <array>
#include <cstddef>

namespace squeeze::params {

enum class Type : unsigned char {
  kInt,     // a whole decimal number in [lo, hi]
  kNumber,  // a finite decimal number in [lo, hi]
  kBool,    // 0/1, off/on, false/true, no/yes
  kChoice,  // one of `choices` ("a|b|c")
  kText,    // any non-empty text (a path, an interface list)
};

// Who reads it: the plugin library (NCCL loads it), or only the perf tools and test scripts.
enum class Scope : unsigned char { kPlugin, kTools };

enum class Id : int {
  kPolicy,
  kBypass,
  kThreads,
  kLocalRanks,
  kStats,
  kRank,
  kProfiler,
  kGpuStaging,
  kTransport,
  kSocketIfname,
  kSocketFamily,
  kTcpTimeoutMs,
  kTcpKeepIdleS,
  kNsocksPerThread,
  kSocketNthreads,
  kMaxRate,
  kHandshakeTimeoutS,
  kListenPending,
  kStallTimeoutS,
  kUcxLibrary,
  kUcxTls,
  kIbHca,
  kIbQpsPerConnection,
  kIbGidIndex,
  kIbTimeout,
  kIbRetryCnt,
  kIbSl,
  kIbTc,
  kIbGdr,
  kIbGdrFlush,
  kIbDmabuf,
  kIbMrCache,
  kIbPciRelaxedOrdering,
  kQuantizeSimd,
  kCollNetConnectTimeoutS,
  kNcclDebug,
  kPerfVerbose,
  kSourceDir,
  kNcclLib,
  kCount
};
inline constexpr std::size_t kNumParams = static_cast<std::size_t>(Id::kCount);

struct Spec {
  Id id;
  const char* name;
  // Read in order when `name` is unset: NCCL's own variable, older names, launcher variables.
  std::array<const char*, 4> fallbacks{};
  Type type = Type::kText;
  double lo = 0, hi = 0;     // kInt, kNumber
  const char* choices = "";  // kChoice: "a|b|c"
  const char* value = "";    // the default as a value of the type; "" = none (see shown)
  const char* shown = "";    // the default as the README shows it
  const char* meaning = "";
  Scope scope = Scope::kPlugin;
  // One of `fallbacks` that is an older name of this variable: it still works, with a
  // warning that names the new one.
  const char* deprecated = nullptr;
};

inline constexpr Spec kSpecs[] = {
    {.id = Id::kPolicy,
     .name = "SQUEEZE_POLICY",
     .shown = "built-in",
     .meaning = "JSON policy file (see Policies). An invalid file stops the plugin with the file, "
                "JSON pointer and reason on stderr."},
    {.id = Id::kBypass,
     .name = "SQUEEZE_BYPASS",
     .type = Type::kBool,
     .value = "on",
     .shown = "`on`",
     .meaning = "`on`: send a message raw wherever compressing it would not pay on the measured "
                "link and codec speeds. `off`: compress whenever the policy says so."},
    {.id = Id::kThreads,
     .name = "SQUEEZE_THREADS",
     .type = Type::kInt,
     .lo = 0,
     .hi = 64,
     .shown = "cores/2 (1..8); 0 on one core",
     .meaning = "Codec worker threads per process, 0..64. Cores are those of the process's CPU "
                "affinity mask, or this rank's share of them where the host's ranks cannot all "
                "have cores of their own (unbound ranks, as torchrun starts them). With 0, the "
                "thread that tests a request (NCCL's proxy thread) runs its encode or decode."},
    {.id = Id::kLocalRanks,
     .name = "LOCAL_WORLD_SIZE",
     .fallbacks = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"},
     .type = Type::kInt,
     .lo = 1,
     .hi = 4096,
     .value = "1",
     .shown = "1",
     .meaning = "Ranks on this host, as torchrun, Open MPI or MPICH sets it; read only to size "
                "the codec threads. `squeeze-perf --nranks N` sets `LOCAL_WORLD_SIZE=N`."},
    {.id = Id::kStats,
     .name = "SQUEEZE_STATS",
     .shown = "unset",
     .meaning = "Per-rank statistics JSON file; `stats.json` becomes `stats.rank<R>.json`, "
                "`%r` is replaced by the rank."},
    {.id = Id::kRank,
     .name = "SQUEEZE_RANK",
     .fallbacks = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"},
     .type = Type::kInt,
     .lo = 0,
     .hi = 1e9,
     .shown = "the launcher's, else the pid",
     .meaning = "Rank used in the statistics file name."},
    {.id = Id::kProfiler,
     .name = "SQUEEZE_PROFILER",
     .type = Type::kBool,
     .value = "on",
     .shown = "`on`",
     .meaning = "`off`: the built-in profiler requests no events, so every message's dtype is "
                "unknown: a lossy rule then sends raw (or lossless, as its `fallback` says) "
                "unless it has `assume_dtype`."},
    {.id = Id::kGpuStaging,
     .name = "SQUEEZE_GPU_STAGING",
     .type = Type::kBool,
     .value = "off",
     .shown = "`off`",
     .meaning = "`on`: declare `NCCL_PTR_CUDA` on TCP/UCX devices and stage GPU buffers through "
                "pinned host mirrors, encoding and decoding on the GPU (needs a CUDA build and a "
                "GPU at init; an INFO line says why it stays off)."},
    {.id = Id::kTransport,
     .name = "SQUEEZE_TRANSPORT",
     .type = Type::kChoice,
     .choices = "auto|tcp|ucx|ib",
     .value = "auto",
     .shown = "`auto`",
     .meaning = "`auto`: verbs when a usable RDMA device exists, else UCX when libucp loads and "
                "the machine has an RDMA device verbs could not use, else TCP. A transport asked "
                "for by name that cannot start stops init with the reason."},
    {.id = Id::kSocketIfname,
     .name = "SQUEEZE_SOCKET_IFNAME",
     .fallbacks = {"NCCL_SOCKET_IFNAME"},
     .shown = "unset",
     .meaning = "Interfaces, NCCL syntax: `eth,ib` prefixes, `^docker` excludes, `=eth0` exact. "
                "With neither variable: every interface that is up except `lo` and `docker*`, "
                "else `docker*`, else `lo`."},
    {.id = Id::kSocketFamily,
     .name = "SQUEEZE_SOCKET_FAMILY",
     .fallbacks = {"NCCL_SOCKET_FAMILY"},
     .type = Type::kChoice,
     .choices = "AF_INET|AF_INET6",
     .shown = "any",
     .meaning = "Address family of the interfaces used."},
    {.id = Id::kTcpTimeoutMs,
     .name = "SQUEEZE_TCP_TIMEOUT_MS",
     .type = Type::kInt,
     .lo = 1,
     .hi = 1073741823,
     .value = "10000",
     .shown = "10000",
     .meaning = "`TCP_USER_TIMEOUT`: unacknowledged data older than this fails the connection "
                "(TCP, and the sockets UCX and the verbs bootstrap set up)."},
    {.id = Id::kTcpKeepIdleS,
     .name = "SQUEEZE_TCP_KEEPIDLE_S",
     .type = Type::kInt,
     .lo = 1,
     .hi = 32767,
     .value = "5",
     .shown = "5",
     .meaning = "Idle seconds before keepalive probes (1 s apart, 5 of them)."},
    {.id = Id::kNsocksPerThread,
     .name = "SQUEEZE_NSOCKS_PERTHREAD",
     .fallbacks = {"NCCL_NSOCKS_PERTHREAD"},
     .type = Type::kInt,
     .lo = 1,
     .hi = 64,
     .shown = "auto",
     .meaning = "TCP: data sockets per helper thread of each connection. Messages of 64 KiB "
                "and more travel on the data sockets, in parts of at least 64 KiB, each message "
                "starting on the socket after the last one's; smaller ones stay on the "
                "connection's control socket. Fewer than 2 data sockets in all "
                "(threads x sockets): one socket, no helper threads. At most 64 in all. Auto: "
                "one data socket per 12.5 Gbit/s of link speed, from 25 Gbit/s and 4 cores up; "
                "else one socket."},
    {.id = Id::kSocketNthreads,
     .name = "SQUEEZE_SOCKET_NTHREADS",
     .fallbacks = {"NCCL_SOCKET_NTHREADS"},
     .type = Type::kInt,
     .lo = 0,
     .hi = 16,
     .shown = "auto",
     .meaning = "TCP: helper threads per connection that drive its data sockets. Auto: one per "
                "two cores, at most one per data socket."},
    {.id = Id::kMaxRate,
     .name = "SQUEEZE_MAX_RATE",
     .type = Type::kNumber,
     .lo = 0,
     .hi = 100000,
     .value = "0",
     .shown = "0 (off)",
     .meaning = "TCP: pacing cap of each connection in Gbit/s, by the kernel's own TCP pacing "
                "(`SO_MAX_PACING_RATE`, no qdisc needed): the control socket may use all of it, "
                "each data socket its share. Shares a link politely, or emulates a slower one on "
                "one machine. 0: no cap."},
    {.id = Id::kHandshakeTimeoutS,
     .name = "SQUEEZE_HANDSHAKE_TIMEOUT_S",
     .type = Type::kInt,
     .lo = 1,
     .hi = 86400,
     .value = "30",
     .shown = "30",
     .meaning = "A connection to a listener (TCP, UCX, verbs) that has not completed its hello "
                "this many seconds after it was accepted is closed."},
    {.id = Id::kListenPending,
     .name = "SQUEEZE_LISTEN_PENDING",
     .type = Type::kInt,
     .lo = 1,
     .hi = 65536,
     .value = "128",
     .shown = "128",
     .meaning = "Connections a listener keeps waiting for their hello; one more closes the "
                "oldest that has not shown the listener's nonce."},
    {.id = Id::kStallTimeoutS,
     .name = "SQUEEZE_STALL_TIMEOUT_S",
     .type = Type::kInt,
     .lo = 0,
     .hi = 86400,
     .value = "120",
     .shown = "120",
     .meaning = "A message that stops arriving halfway fails its receive with an error naming "
                "the peer and the bytes missing: over TCP, less than 64 KiB (or the rest of the "
                "header, payload or part) in this many seconds while its receive waits; over "
                "UCX, a payload not complete this long after its header; over verbs, no further "
                "part of a started multi-part message. `0`: wait forever."},
    {.id = Id::kUcxLibrary,
     .name = "SQUEEZE_UCX_LIBRARY",
     .value = "libucp.so.0",
     .shown = "`libucp.so.0`",
     .meaning = "The UCX library to `dlopen`. UCX's own variables (`UCX_TLS`, "
                "`UCX_NET_DEVICES`, ...) apply as usual."},
    {.id = Id::kUcxTls,
     .name = "UCX_TLS",
     .shown = "all",
     .meaning = "UCX's own list of transports, read by UCX itself; Squeeze only names it in the "
                "UCX device's description (the INFO line that lists the devices)."},
    {.id = Id::kIbHca,
     .name = "SQUEEZE_IB_HCA",
     .fallbacks = {"NCCL_IB_HCA"},
     .shown = "all",
     .meaning = "RDMA ports to use, NCCL's syntax: `mlx5_0,mlx5_1:1` device-name prefixes, each "
                "with an optional `:port`; `^mlx5_2` excludes; `=mlx5_0` exact names. A port "
                "that is not a number stops the verbs transport, naming the variable."},
    {.id = Id::kIbQpsPerConnection,
     .name = "SQUEEZE_IB_QPS_PER_CONNECTION",
     .fallbacks = {"SQUEEZE_IB_QPS_PER_CONN", "NCCL_IB_QPS_PER_CONNECTION"},
     .type = Type::kInt,
     .lo = 1,
     .hi = 8,
     .value = "1",
     .shown = "1",
     .meaning = "RC queue pairs per connection; large messages are split across them. "
                "`SQUEEZE_IB_QPS_PER_CONN` is the deprecated old name.",
     .deprecated = "SQUEEZE_IB_QPS_PER_CONN"},
    {.id = Id::kIbGidIndex,
     .name = "SQUEEZE_IB_GID_INDEX",
     .fallbacks = {"NCCL_IB_GID_INDEX"},
     .type = Type::kInt,
     .lo = -1,
     .hi = 255,
     .value = "-1",
     .shown = "-1",
     .meaning = "RoCE GID index; -1 picks a RoCE v2 IPv4 GID."},
    {.id = Id::kIbTimeout,
     .name = "SQUEEZE_IB_TIMEOUT",
     .fallbacks = {"NCCL_IB_TIMEOUT"},
     .type = Type::kInt,
     .lo = 1,
     .hi = 31,
     .value = "20",
     .shown = "20",
     .meaning = "Queue pair ack timeout, 4.096 µs × 2^n."},
    {.id = Id::kIbRetryCnt,
     .name = "SQUEEZE_IB_RETRY_CNT",
     .fallbacks = {"NCCL_IB_RETRY_CNT"},
     .type = Type::kInt,
     .lo = 0,
     .hi = 7,
     .value = "7",
     .shown = "7",
     .meaning = "Queue pair retry count."},
    {.id = Id::kIbSl,
     .name = "SQUEEZE_IB_SL",
     .fallbacks = {"NCCL_IB_SL"},
     .type = Type::kInt,
     .lo = 0,
     .hi = 15,
     .value = "0",
     .shown = "0",
     .meaning = "InfiniBand service level."},
    {.id = Id::kIbTc,
     .name = "SQUEEZE_IB_TC",
     .fallbacks = {"NCCL_IB_TC"},
     .type = Type::kInt,
     .lo = 0,
     .hi = 255,
     .value = "0",
     .shown = "0",
     .meaning = "Traffic class of RoCE packets (the GRH's)."},
    {.id = Id::kIbGdr,
     .name = "SQUEEZE_IB_GDR",
     .type = Type::kInt,
     .lo = -1,
     .hi = 1,
     .value = "-1",
     .shown = "-1",
     .meaning = "GPUDirect RDMA: -1 detects it (nvidia-peermem loaded), 0 off, 1 on."},
    {.id = Id::kIbGdrFlush,
     .name = "SQUEEZE_IB_GDR_FLUSH",
     .type = Type::kBool,
     .value = "on",
     .shown = "`on`",
     .meaning = "`off`: no flush read after GPU receives."},
    {.id = Id::kIbDmabuf,
     .name = "SQUEEZE_IB_DMABUF",
     .type = Type::kBool,
     .value = "on",
     .shown = "`on`",
     .meaning = "`off`: never register memory through dma-buf."},
    {.id = Id::kIbMrCache,
     .name = "SQUEEZE_IB_MR_CACHE",
     .type = Type::kInt,
     .lo = 1,
     .hi = 1048576,
     .value = "64",
     .shown = "64",
     .meaning = "Registrations kept for buffers handed over unregistered."},
    {.id = Id::kIbPciRelaxedOrdering,
     .name = "SQUEEZE_IB_PCI_RELAXED_ORDERING",
     .fallbacks = {"NCCL_IB_PCI_RELAXED_ORDERING"},
     .type = Type::kInt,
     .lo = 0,
     .hi = 2,
     .value = "2",
     .shown = "2",
     .meaning = "0: never. 1 or 2: register buffers with PCIe relaxed ordering where libibverbs "
                "has `ibv_reg_mr_iova2` (rdma-core 29 or newer), as NCCL does."},
    {.id = Id::kQuantizeSimd,
     .name = "SQUEEZE_QUANTIZE_SIMD",
     .type = Type::kChoice,
     .choices = "scalar|avx2|avx512",
     .shown = "best the CPU has",
     .meaning = "The highest instruction set the CPU quantize encoder and decoder may use (never "
                "above what the CPU supports). Frames are byte-identical at every level."},
    {.id = Id::kCollNetConnectTimeoutS,
     .name = "SQUEEZE_COLLNET_CONNECT_TIMEOUT_S",
     .type = Type::kInt,
     .lo = 1,
     .hi = 3600,
     .value = "120",
     .shown = "120",
     .meaning = "Collective network (`NCCL_COLLNET_ENABLE=1`): how long its `connect` waits for "
                "every node to join the mesh. NCCL calls it once and blocks on it; past this the "
                "connect fails naming the missing nodes, and NCCL falls back to its other "
                "algorithms."},
    {.id = Id::kNcclDebug,
     .name = "NCCL_DEBUG",
     .type = Type::kChoice,
     .choices = "VERSION|WARN|INFO|ABORT|TRACE",
     .value = "WARN",
     .shown = "`WARN`",
     .meaning = "NCCL's log level; the plugin formats only the lines NCCL would print."},
    {.id = Id::kPerfVerbose,
     .name = "SQUEEZE_PERF_VERBOSE",
     .type = Type::kBool,
     .value = "off",
     .shown = "`off`",
     .meaning = "Perf tools only: pass the plugin's INFO and TRACE lines on to stderr "
                "(`NCCL_DEBUG` still selects the level).",
     .scope = Scope::kTools},
    {.id = Id::kSourceDir,
     .name = "SQUEEZE_SOURCE_DIR",
     .shown = "the build's source tree",
     .meaning = "Perf tools only: where `squeeze-nccl-perf` finds `config/` and `perf/torch/`.",
     .scope = Scope::kTools},
    {.id = Id::kNcclLib,
     .name = "SQUEEZE_NCCL_LIB",
     .shown = "PyTorch's, else the system's",
     .meaning = "Perf tools only: the `libnccl.so` that `squeeze-nccl-perf` loads.",
     .scope = Scope::kTools},
};

// The table lists every Id once, in the enum's order.
constexpr bool table_is_complete() {
  if (std::size(kSpecs) != kNumParams) return false;
  for (std::size_t i = 0; i < kNumParams; ++i)
    if (static_cast<std::size_t>(kSpecs[i].id) != i) return false;
  return true;
}
static_assert(table_is_complete(), "kSpecs must list every params::Id once, in order");

constexpr const Spec& spec(Id id) { return kSpecs[static_cast<std::size_t>(id)]; }

}  // namespace squeeze::params

// squeeze-policy: check a policy file, or explain what it decides for one message.
//   squeeze-policy check FILE
//   squeeze-policy explain FILE --collective C --bytes N [--dtype D] [--proto P] [--algo A]
//   [--nranks N]
//                                 [--comm NAME] [--count N]
// Sizes take K/M/G suffixes (binary: 1M = 2^20 bytes), as in the perf tools.
// Exit status: 0 success, 1 invalid policy, 2 usage error (one line naming it; --help for usage).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "plugin/policy/describe.h"
#include "plugin/policy/names.h"
#include "plugin/policy/policy_load.h"

namespace {

using namespace squeeze::policy;

constexpr const char* kUsage =
    "usage:\n"
    "  squeeze-policy check FILE\n"
    "      validate FILE and summarise what each rule does (FILE \"-\": the built-in default)\n"
    "  squeeze-policy explain FILE --collective C --bytes N [--dtype D] [--proto P] [--algo A]\n"
    "                              [--nranks N] [--comm NAME] [--count N]\n"
    "      print the decision for one message and the rule that made it\n"
    "      C: allreduce alltoall send recv allgather reducescatter broadcast reduce gather "
    "scatter\n"
    "      N (--bytes): the call's size, count x dtype size (per peer for alltoall/send/recv);\n"
    "         4096, 64K, 1M, 2G (K, M, G: 2^10, 2^20, 2^30)\n"
    "      D: float32 bfloat16 float16 float64 int8 uint8 int32 uint32 int64 uint64 ... unknown\n"
    "         (default unknown, as when NCCL's profiler chain is unavailable)\n"
    "      P: simple (default) ll ll128\n"
    "      A: tree ring collnet_direct collnet_chain nvls nvls_tree pat collnet (default "
    "unknown)\n";

// One line on stderr; the usage itself only for --help.
int usage(const std::string& why) {
  std::fprintf(stderr, "squeeze-policy: %s (squeeze-policy --help shows the usage)\n", why.c_str());
  return 2;
}

bool parse_u64(const char* s, uint64_t* out) {
  if (s == nullptr || *s == '\0' || *s == '-') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

// "a, b, c": the names of enum values first..count-1.
template <typename E>
std::string names(int count, const char* (*name)(E), int first) {
  std::string out;
  for (int i = first; i < count; ++i)
    out += (out.empty() ? "" : ", ") + std::string(name(static_cast<E>(i)));
  return out;
}

// A byte count with an optional binary K/M/G suffix (also KiB/MiB/GiB).
bool parse_size(const char* s, uint64_t* out) {
  if (s == nullptr || *s < '0' || *s > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  const std::string_view unit = end;
  unsigned shift = 0;
  if (unit == "K" || unit == "k" || unit == "KiB")
    shift = 10;
  else if (unit == "M" || unit == "m" || unit == "MiB")
    shift = 20;
  else if (unit == "G" || unit == "g" || unit == "GiB")
    shift = 30;
  else if (!unit.empty() && unit != "B")
    return false;
  if (errno != 0 || v > (UINT64_MAX >> shift)) return false;
  *out = static_cast<uint64_t>(v) << shift;
  return true;
}

std::shared_ptr<const Policy> load(const std::string& file) {
  std::string error;
  auto p = load_policy(file == "-" ? nullptr : file.c_str(), &error);
  if (p == nullptr) std::fprintf(stderr, "%s\n", error.c_str());
  return p;
}

int check(int argc, char** argv) {
  if (argc != 3) return usage("check takes exactly one FILE");
  auto p = load(argv[2]);
  if (p == nullptr) return 1;
  std::fputs(describe_policy(*p).c_str(), stdout);
  return 0;
}

int explain(int argc, char** argv) {
  if (argc < 3) return usage("explain needs a FILE");
  MessageMeta m;
  m.proto = Proto::kSimple;
  std::string comm;
  bool have_comm = false, have_bytes = false, have_coll = false;
  for (int i = 3; i < argc; i += 2) {
    std::string_view flag = argv[i];
    const char* val = i + 1 < argc ? argv[i + 1] : nullptr;
    if (val == nullptr) return usage(std::string(flag) + " needs a value");
    uint64_t n = 0;
    if (flag == "--collective") {
      if (!parse_collective(val, &m.collective))
        return usage(std::string("--collective '") + val + "': expected one of " +
                     names<Collective>(kNumCollectives, collective_name, 1));
      have_coll = true;
    } else if (flag == "--dtype") {
      if (!parse_dtype(val, &m.dtype))
        return usage(std::string("--dtype '") + val + "': expected one of " +
                     names<DataType>(kNumDataTypes, dtype_name, 0));
    } else if (flag == "--proto") {
      if (!parse_proto(val, &m.proto))
        return usage(std::string("--proto '") + val + "': expected one of " +
                     names<Proto>(kNumProtos, proto_name, 1));
    } else if (flag == "--algo") {
      if (!parse_algo(val, &m.algo))
        return usage(std::string("--algo '") + val + "': expected one of " +
                     names<Algo>(kNumAlgos, algo_name, 1));
    } else if (flag == "--bytes") {
      if (!parse_size(val, &n))
        return usage(std::string("--bytes '") + val +
                     "': expected a size in bytes such as 4096, 64K, 1M or 2G");
      m.bytes = m.coll_bytes = n;
      have_bytes = true;
    } else if (flag == "--count") {
      if (!parse_u64(val, &n))
        return usage(std::string("--count '") + val + "': expected an element count");
      m.count = n;
    } else if (flag == "--nranks") {
      if (!parse_u64(val, &n) || n == 0 || n > INT32_MAX)
        return usage(std::string("--nranks '") + val + "': expected an integer >= 1");
      m.nranks = static_cast<int32_t>(n);
    } else if (flag == "--comm") {
      comm = val;
      have_comm = true;
    } else {
      return usage("unknown option '" + std::string(flag) +
                   "' (explain takes --collective, --bytes, --dtype, --proto, --algo, --nranks, "
                   "--comm, --count)");
    }
  }
  if (!have_coll) return usage("explain needs --collective");
  if (!have_bytes) return usage("explain needs --bytes");
  if (m.count == 0 && dtype_size(m.dtype) != 0) m.count = m.coll_bytes / dtype_size(m.dtype);
  auto p = load(argv[2]);
  if (p == nullptr) return 1;
  CommMatch cm;
  if (have_comm) {
    cm = p->resolve_comm(comm);
    m.comm = &cm;
  }
  Decision d = p->decide(m);
  std::printf("message:  %s%s\n", describe_meta(m).c_str(),
              have_comm ? (", comm " + comm).c_str() : ", comm unknown");
  std::printf("decision: %s\n", describe_decision(*p, d).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("missing command: check or explain");
  std::string_view cmd = argv[1];
  if (cmd == "check") return check(argc, argv);
  if (cmd == "explain") return explain(argc, argv);
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  return usage("unknown command '" + std::string(cmd) + "' (commands: check, explain)");
}

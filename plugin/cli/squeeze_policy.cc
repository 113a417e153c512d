// squeeze-policy: check a policy file, or explain what it decides for one message.
//   squeeze-policy check FILE
//   squeeze-policy explain FILE --collective C --bytes N [--dtype D] [--proto P] [--nranks N]
//                                 [--comm NAME] [--count N]
// Exit status: 0 success, 1 invalid policy, 2 usage error.
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
    "  squeeze-policy explain FILE --collective C --bytes N [--dtype D] [--proto P]\n"
    "                              [--nranks N] [--comm NAME] [--count N]\n"
    "      print the decision for one message and the rule that made it\n"
    "      C: allreduce alltoall send recv allgather reducescatter broadcast reduce gather scatter\n"
    "      N (--bytes): the call's size, count x dtype size (per peer for alltoall/send/recv)\n"
    "      D: float32 bfloat16 float16 float64 int8 uint8 int32 uint32 int64 uint64 ... unknown\n"
    "         (default unknown, as when NCCL's profiler chain is unavailable)\n"
    "      P: simple (default) ll ll128\n";

int usage(const std::string& why) {
  std::fprintf(stderr, "squeeze-policy: %s\n%s", why.c_str(), kUsage);
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
      if (!parse_collective(val, &m.collective)) return usage(std::string("unknown collective ") + val);
      have_coll = true;
    } else if (flag == "--dtype") {
      if (!parse_dtype(val, &m.dtype)) return usage(std::string("unknown dtype ") + val);
    } else if (flag == "--proto") {
      if (!parse_proto(val, &m.proto)) return usage(std::string("unknown protocol ") + val);
    } else if (flag == "--bytes") {
      if (!parse_u64(val, &n)) return usage(std::string("--bytes must be a byte count, not ") + val);
      m.bytes = m.coll_bytes = n;
      have_bytes = true;
    } else if (flag == "--count") {
      if (!parse_u64(val, &n)) return usage(std::string("--count must be an element count, not ") + val);
      m.count = n;
    } else if (flag == "--nranks") {
      if (!parse_u64(val, &n) || n == 0 || n > INT32_MAX) return usage(std::string("--nranks must be >= 1, not ") + val);
      m.nranks = static_cast<int32_t>(n);
    } else if (flag == "--comm") {
      comm = val;
      have_comm = true;
    } else {
      return usage("unknown option " + std::string(flag));
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
  std::printf("message:  %s%s\n", describe_meta(m).c_str(), have_comm ? (", comm " + comm).c_str() : ", comm unknown");
  std::printf("decision: %s\n", describe_decision(*p, d).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("missing command");
  std::string_view cmd = argv[1];
  if (cmd == "check") return check(argc, argv);
  if (cmd == "explain") return explain(argc, argv);
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  return usage("unknown command " + std::string(cmd));
}

// Fuzzes the policy parser and everything that reads a parsed policy: every input must either
// be rejected with errors in the documented form, or give a policy whose decisions respect the
// safety rules for every message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/policy/describe.h"
#include "plugin/policy/names.h"
#include "plugin/policy/policy.h"
#include "plugin/policy/stats.h"
#include "plugin/tuner/tuner.h"

using namespace squeeze::policy;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void exercise(const Policy& p) {
  (void)describe_policy(p);
  CommMatch cm = p.resolve_comm("dp_group_0");
  static const uint64_t kSizes[] = {0, 1, 4096, 65536, 1 << 20, uint64_t{1} << 40};
  for (int c = 0; c < kNumCollectives; ++c) {
    for (int d = 0; d < kNumDataTypes; ++d) {
      for (int pr = 0; pr < kNumProtos; ++pr) {
        for (uint64_t b : kSizes) {
          MessageMeta m;
          m.collective = static_cast<Collective>(c);
          m.dtype = static_cast<DataType>(d);
          m.proto = static_cast<Proto>(pr);
          m.bytes = m.coll_bytes = b;
          m.count = b / 4;
          m.nranks = (c % 2) ? 8 : 0;
          m.comm = (d % 2) ? &cm : nullptr;
          Decision x = p.decide(m);
          check(x.action != nullptr);
          check(x.rule >= -1 && x.rule < static_cast<int32_t>(p.rules().size()));
          if (m.proto != Proto::kSimple) check(x.is_raw());  // LL/LL128/unknown: always raw
          if (x.lossy) {
            check(lossy_capable(x.dtype));
            check(m.dtype == DataType::kUnknown ||
                  m.dtype == x.dtype);  // assume_dtype never overrides
          }
          if (!x.is_raw() && !x.lossy) check(!squeeze::compress::is_lossy(x.params->codec));
          (void)describe_decision(p, x);
        }
      }
    }
  }
  float table[7][3];
  for (int f = 0; f < 11; ++f) {
    for (auto& row : table) row[0] = row[1] = row[2] = 1.0f;
    table[1][2] = -1.0f;
    squeeze::tuner::steer(p, {f, 1 << 20, 8, DataType::kUnknown, nullptr}, &table[0][0], 7, 3);
    check(table[1][2] == -1.0f);  // a disabled entry stays disabled
  }
  auto stats = Stats::for_policy(p);
  stats->record_encode(0, Collective::kAllReduce, 10, 5, 1);
  (void)stats->to_json(0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> errors;
  auto p = Policy::parse(text, "fuzz.json", &errors);
  if (p == nullptr) {
    check(!errors.empty());
    for (const std::string& e : errors) check(e.rfind("policy fuzz.json: ", 0) == 0);
    return 0;
  }
  check(errors.empty());
  exercise(*p);
  return 0;
}

#include "perf/nccl/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "perf/common/row_fields.h"

namespace squeeze::perf::nccl {
namespace {

double get_num(const nlohmann::json& j, const char* k, double dflt) {
  return j.contains(k) && j[k].is_number() ? j[k].get<double>() : dflt;
}

}  // namespace

void print_header(const RunInfo& i) {
  std::printf("# squeeze-nccl-perf: mode %s, %d ranks, NCCL_NET=%s\n", i.mode.c_str(), i.nranks,
              i.net.c_str());
  if (!i.plugin.empty())
    std::printf("#   plugin %s\n#   policy %s%s\n", i.plugin.c_str(), i.policy.c_str(),
                i.bypass.empty() ? "" : (", SQUEEZE_BYPASS=" + i.bypass).c_str());
  if (i.collnet)
    std::printf(
        "#   route collnet: all-reduce on Squeeze's collective network (NCCL_COLLNET_ENABLE=1, "
        "NCCL_ALGO=%s); collnet = share of the bytes handed that it carried\n",
        i.algo.c_str());
  std::printf("#   NCCL %s, devices %s, interface %s, all-to-all by %s\n", i.nccl.c_str(),
              i.devices.c_str(), i.ifname.c_str(),
              i.a2a_api == "sendrecv" ? "grouped ncclSend/ncclRecv" : "ncclAlltoAll");
  std::printf(
      "#   time = slowest rank's mean per iteration (iterations back to back, as nccl-tests); "
      "busbw = "
      "algbw * 2(n-1)/n (all-reduce), (n-1)/n (all-to-all)\n");
  std::printf(
      "#   #wrong = elements beyond the policy's bound (bit-exact where nothing lossy applies; N/A "
      "= no "
      "bound stated); max_err = max |result - exact host result|\n");
  std::printf(
      "#   ratio = bytes handed to the plugin / bytes on the wire (its SQUEEZE_STATS files); agree "
      "= all "
      "ranks' all-reduce outputs bit-identical\n");
  std::fflush(stdout);
}

std::string row_json(const Row& r, const RunInfo& i) {
  namespace k = row_key;
  nlohmann::json j = {{k::kBench, "squeeze-nccl-perf"}, {k::kPolicy, i.policy}};
  put_row_fields(r, j);
  j["mode"] = r.mode;
  j["net"] = i.net;
  j["nccl"] = i.nccl;
  j["devices"] = i.devices;
  if (r.collective == "alltoall") j["a2a_api"] = i.a2a_api;
  if (r.route == "collnet") {
    j["collnet_bytes_handed"] = r.collnet_handed;
    j["collnet_share"] =
        r.handed > 0
            ? json_number(static_cast<double>(r.collnet_handed) / static_cast<double>(r.handed))
            : nlohmann::json(nullptr);
  }
  if (!i.bypass.empty()) j["bypass"] = i.bypass;
  if (!i.label.empty()) j[k::kLabel] = i.label;
  return j.dump();
}

bool parse_row_json(const std::string& line, Row* r) {
  namespace k = row_key;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("mode") || !j.contains(k::kCollective) ||
      !j.contains(k::kSize))
    return false;
  r->mode = j["mode"].get<std::string>();
  r->collective = j[k::kCollective].get<std::string>();
  r->bytes = j[k::kSize].get<std::size_t>();
  r->busbw = get_num(j, k::kBusbw, NAN);
  r->time_us = get_num(j, k::kTimeUs, NAN);
  r->have_ratio = j.contains(k::kRatio) && j[k::kRatio].is_number();
  r->ratio = get_num(j, k::kRatio, 1);
  r->max_err = get_num(j, k::kMaxAbsErr, NAN);
  r->wrong = j.contains(k::kWrong) && j[k::kWrong].is_number() ? j[k::kWrong].get<int64_t>() : -1;
  if (j.contains(k::kRoute) && j[k::kRoute].is_string()) r->route = j[k::kRoute].get<std::string>();
  if (j.contains("collnet_bytes_handed") && j["collnet_bytes_handed"].is_number_unsigned())
    r->collnet_handed = j["collnet_bytes_handed"].get<uint64_t>();
  return true;
}

bool row_passes(const Row& r) {
  std::string why;
  if (r.wrong > 0) why = std::to_string(r.wrong) + " elements beyond the bound (" + r.bound + ")";
  if (r.agree == 0 && r.agree_required)
    why += std::string(why.empty() ? "" : "; ") + "ranks' outputs differ";
  if (r.route == "collnet" && r.collective == "allreduce" && r.have_ratio && r.collnet_handed == 0)
    why += std::string(why.empty() ? "" : "; ") +
           "the collective network carried none of it (NCCL did not use CollNet)";
  if (why.empty()) return true;
  std::fprintf(stderr, "squeeze-nccl-perf: check failed: %s %s %zu bytes: %s\n", r.mode.c_str(),
               r.collective.c_str(), r.bytes, why.c_str());
  return false;
}

void print_sweep_summary(const std::vector<Row>& rows, bool json, const std::string& label) {
  std::vector<std::string> modes;
  std::map<std::pair<std::string, std::size_t>, std::map<std::string, const Row*>> by_key;
  std::vector<std::pair<std::string, std::size_t>> keys;
  for (const Row& r : rows) {
    if (std::find(modes.begin(), modes.end(), r.mode) == modes.end()) modes.push_back(r.mode);
    auto key = std::make_pair(r.collective, r.bytes);
    if (!by_key.count(key)) keys.push_back(key);
    by_key[key][r.mode] = &r;
  }
  auto ratio_of = [](const Row* a, const Row* b) {
    return a != nullptr && b != nullptr && b->busbw > 0 ? a->busbw / b->busbw : NAN;
  };
  if (!json) {
    std::printf(
        "#\n# sweep summary: busbw (GB/s) by mode; codec columns: busbw (busbw / raw's busbw); "
        "last "
        "column: raw's busbw / socket's\n");
    std::printf("%-10s %12s", "# coll", "size(B)");
    for (const auto& m : modes) std::printf(" %16s", m.c_str());
    std::printf(" %10s\n", "raw/socket");
  }
  for (const auto& key : keys) {
    const auto& per = by_key[key];
    auto find = [&](const std::string& m) {
      auto it = per.find(m);
      return it == per.end() ? nullptr : it->second;
    };
    const Row* raw = find("raw");
    const double raw_socket = ratio_of(raw, find("socket"));
    if (json) {
      nlohmann::json busbw = nlohmann::json::object(), over_raw = nlohmann::json::object(),
                     ratio = nlohmann::json::object(), wrong = nlohmann::json::object();
      for (const auto& [m, r] : per) {
        busbw[m] = json_number(r->busbw);
        ratio[m] = r->have_ratio ? json_number(r->ratio) : nlohmann::json(nullptr);
        wrong[m] = r->wrong >= 0 ? nlohmann::json(r->wrong) : nlohmann::json(nullptr);
        if (m != "raw" && m != "socket") over_raw[m] = json_number(ratio_of(r, raw));
      }
      namespace k = row_key;
      nlohmann::json j = {{k::kBench, "squeeze-nccl-perf-sweep"},
                          {k::kCollective, key.first},
                          {k::kSize, key.second},
                          {k::kBusbw, busbw},
                          {"raw_over_socket", json_number(raw_socket)},
                          {"over_raw", over_raw},
                          {k::kRatio, ratio},
                          {k::kWrong, wrong}};
      if (!label.empty()) j[k::kLabel] = label;
      std::printf("%s\n", j.dump().c_str());
      continue;
    }
    std::printf("%-10s %12zu", key.first.c_str(), key.second);
    for (const auto& m : modes) {
      const Row* r = find(m);
      char cell[64] = "-";
      if (r != nullptr && (m == "socket" || m == "raw"))
        std::snprintf(cell, sizeof cell, "%.3f", r->busbw);
      else if (r != nullptr)
        std::snprintf(cell, sizeof cell, "%.3f (%.2fx)", r->busbw, ratio_of(r, raw));
      std::printf(" %16s", cell);
    }
    std::printf(" %10.3f\n", raw_socket);
  }
  std::fflush(stdout);
}

}  // namespace squeeze::perf::nccl

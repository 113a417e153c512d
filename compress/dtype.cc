// Names and sizes of dtypes and codecs, shared by the frame layer, the policy parser and the
// tools that print them.
#include <array>
#include <cstddef>

#include "compress/codec.h"

namespace squeeze::compress {
namespace {

constexpr std::array<const char*, 4> kDtypeNames = {"bytes", "float32", "bfloat16", "float16"};
constexpr std::array<std::size_t, 4> kDtypeSizes = {1, 4, 2, 2};
constexpr std::array<const char*, 5> kCodecNames = {"stored", "quantize", "threshold", "lossless",
                                                    "cast"};

}  // namespace

std::size_t dtype_size(Dtype d) {
  const auto i = static_cast<std::size_t>(d);
  return i < kDtypeSizes.size() ? kDtypeSizes[i] : 0;
}

const char* dtype_name(Dtype d) {
  const auto i = static_cast<std::size_t>(d);
  return i < kDtypeNames.size() ? kDtypeNames[i] : "unknown";
}

bool parse_dtype(std::string_view s, Dtype* out) {
  for (std::size_t i = 0; i < kDtypeNames.size(); ++i) {
    if (s == kDtypeNames[i]) {
      *out = static_cast<Dtype>(i);
      return true;
    }
  }
  // Common aliases (NCCL's names and the short forms people type).
  struct Alias {
    std::string_view name;
    Dtype d;
  };
  static constexpr Alias kAliases[] = {
      {"f32", Dtype::kFloat32},
      {"fp32", Dtype::kFloat32},
      {"float", Dtype::kFloat32},
      {"ncclFloat32", Dtype::kFloat32},
      {"ncclFloat", Dtype::kFloat32},
      {"bf16", Dtype::kBfloat16},
      {"ncclBfloat16", Dtype::kBfloat16},
      {"f16", Dtype::kFloat16},
      {"fp16", Dtype::kFloat16},
      {"half", Dtype::kFloat16},
      {"ncclFloat16", Dtype::kFloat16},
      {"ncclHalf", Dtype::kFloat16},
      {"u8", Dtype::kBytes},
      {"uint8", Dtype::kBytes},
  };
  for (const Alias& a : kAliases) {
    if (s == a.name) {
      *out = a.d;
      return true;
    }
  }
  return false;
}

const CodecTraits& codec_traits(CodecId c) {
  static constexpr CodecTraits kNone{};
  static constexpr std::array<CodecTraits, 5> kTraits = {{
      {},                                                      // stored
      {.lossy = true, .row_dedupe = true},                     // quantize
      {.lossy = true, .stateful = true, .sparsifying = true},  // threshold
      {.bytes_as_words = 4},                                   // lossless
      {.lossy = true, .float32_only = true},                   // cast
  }};
  static_assert(kTraits.size() == kCodecNames.size());
  const auto i = static_cast<std::size_t>(c);
  return i < kTraits.size() ? kTraits[i] : kNone;
}

const char* codec_name(CodecId c) {
  const auto i = static_cast<std::size_t>(c);
  return i < kCodecNames.size() ? kCodecNames[i] : "unknown";
}

bool parse_codec(std::string_view s, CodecId* out) {
  for (std::size_t i = 0; i < kCodecNames.size(); ++i) {
    if (s == kCodecNames[i]) {
      *out = static_cast<CodecId>(i);
      return true;
    }
  }
  return false;
}

}  // namespace squeeze::compress

// The dispatch table from CodecId to body codec.
#include "compress/codec_registry.h"

#include <cstddef>

namespace squeeze::compress {

const BodyCodec* find_body_codec(CodecId c) {
  switch (c) {
    case CodecId::kStored: return &kStoredBody;
    case CodecId::kQuantize: return &kQuantizeBody;
    case CodecId::kThreshold: return &kThresholdBody;
    case CodecId::kLossless: return &kLosslessBody;
    case CodecId::kCast: return &kCastBody;
  }
  return nullptr;
}

}  // namespace squeeze::compress

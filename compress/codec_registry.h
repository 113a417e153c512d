// Maps a CodecId to its body codec (compress/codec_body.h). The only place that names every
// codec's body, so the frame layer dispatches without knowing the codecs.
#pragma once

#include "compress/codec.h"
#include "compress/codec_body.h"

namespace squeeze::compress {

// The body codec for c, or nullptr for an id this build does not know.
const BodyCodec* find_body_codec(CodecId c);

}  // namespace squeeze::compress

// A call's values for one buffer or drawn scalar, from that call's keystream: the
// distributions a spec may name (spec.hpp's Draw).
#pragma once

#include <cstdint>

#include "task/keystream.hpp"
#include "task/spec.hpp"

namespace bench {

// Fills `count` doubles (or, for the csr_* draws, int32 values) at `out` for call `call`;
// `stream` tells a call's buffers apart.
void draw_values(const Keystream& key, uint32_t call, uint32_t stream, const Draw& d, int64_t count, void* out);

}  // namespace bench

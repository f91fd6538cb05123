// attn's declaration of tt-metalium/base_types.hpp: the matrix unit's
// fidelity and the unpack-to-destination modes of a compute kernel.
#pragma once

#include <cstdint>

namespace tt::tt_metal {

enum class MathFidelity : uint8_t {
    LoFi = 0,
    HiFi2 = 2,
    HiFi3 = 3,
    HiFi4 = 4,
    Invalid = 0xff,
};

enum class UnpackToDestMode : uint8_t { UnpackToDestFp32, Default };

}  // namespace tt::tt_metal

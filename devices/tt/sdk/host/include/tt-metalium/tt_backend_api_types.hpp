// attn's declaration of tt-metalium/tt_backend_api_types.hpp: the data
// formats of circular buffers (the enum's values are the hardware's codes).
#pragma once

#include <cstdint>

namespace tt {

enum class DataFormat : uint8_t {
    Float32 = 0,
    Float16 = 1,
    Bfp8 = 2,
    Bfp4 = 3,
    Tf32 = 4,
    Float16_b = 5,
    Bfp8_b = 6,
    Bfp4_b = 7,
    Int32 = 8,
    UInt16 = 9,
    Lf8 = 10,
    Bfp2 = 11,
    Int16 = 13,
    Int8 = 14,
    Bfp2_b = 15,
    MxFp4 = 22,
    UInt32 = 24,
    Fp8_e4m3 = 26,
    UInt8 = 30,
    RawUInt8 = 240,
    RawUInt16 = 241,
    RawUInt32 = 242,
    Invalid = 255
};

}  // namespace tt

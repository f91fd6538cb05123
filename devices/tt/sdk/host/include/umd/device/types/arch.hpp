// attn's declaration of UMD's architecture enum (tt-umd's
// device/api/umd/device/types/arch.hpp), which MeshDevice::arch returns.
#pragma once

namespace tt {

enum class ARCH {
    WORMHOLE_B0 = 2,
    BLACKHOLE = 3,
    QUASAR = 4,
    Invalid = 0xFF,
};

}  // namespace tt

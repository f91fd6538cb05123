// attn's declaration of tt-metalium/sub_device_types.hpp: the id of a
// worker sub-device (a strong integer type in the SDK). attn uses the whole
// device, so it never names one; Finish takes an empty list.
#pragma once

#include <cstdint>

namespace tt::tt_metal {

struct SubDeviceId {
    uint8_t value = 0;
};

}  // namespace tt::tt_metal

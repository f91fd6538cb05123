// attn's declaration of tt-metalium/circular_buffer_config.hpp: a program's
// circular buffer, its total size and, per buffer index, the data format and
// page size the kernels see.
#pragma once

#include <cstdint>
#include <map>

#include <tt-metalium/tt_backend_api_types.hpp>

namespace tt::tt_metal {

using CBHandle = uintptr_t;

class CircularBufferConfig {
public:
    // A buffer of `total_size` bytes in each core's L1, allocated by the
    // program, with the given buffer indices and their formats.
    CircularBufferConfig(uint32_t total_size, const std::map<uint8_t, tt::DataFormat>& data_format_spec);

    // Page size of one buffer index; total_size must be a multiple of it.
    CircularBufferConfig& set_page_size(uint8_t buffer_index, uint32_t page_size);

    uint32_t total_size() const;
};

}  // namespace tt::tt_metal

// attn's declaration of tt-metalium/mesh_buffer.hpp: a device buffer on
// every device of a mesh at the same address. attn creates replicated DRAM
// buffers, interleaved page by page over the banks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <variant>

#include <tt-metalium/buffer_types.hpp>
#include <tt-metalium/mesh_device.hpp>

namespace tt::tt_metal {

using DeviceAddr = uint64_t;

}  // namespace tt::tt_metal

namespace tt::tt_metal::distributed {

// How the buffer sits in one device's banks. The SDK's has further members
// after these (sharding, allocation direction, sub-device) that attn leaves
// at their defaults.
struct DeviceLocalBufferConfig {
    DeviceAddr page_size = 0;
    BufferType buffer_type = BufferType::DRAM;
};

// The same `size` bytes on every device.
struct ReplicatedBufferConfig {
    DeviceAddr size = 0;
};

// Split over the mesh's devices. The SDK's also has the global and shard
// shapes and their orientation; attn does not shard.
struct ShardedBufferConfig {
    DeviceAddr global_size = 0;
};

using MeshBufferConfig = std::variant<ReplicatedBufferConfig, ShardedBufferConfig>;

class MeshBuffer {
public:
    static std::shared_ptr<MeshBuffer> create(
        const MeshBufferConfig& mesh_buffer_config,
        const DeviceLocalBufferConfig& device_local_config,
        MeshDevice* mesh_device,
        std::optional<DeviceAddr> address = std::nullopt);
    ~MeshBuffer();

    MeshBuffer(const MeshBuffer&) = delete;
    MeshBuffer& operator=(const MeshBuffer&) = delete;

    bool is_allocated() const;
    void deallocate();

    DeviceAddr size() const;
    // The address kernels are given (the same on every device).
    DeviceAddr address() const;
    uint32_t page_size() const;
    uint32_t num_pages() const;

private:
    MeshBuffer();
};

}  // namespace tt::tt_metal::distributed

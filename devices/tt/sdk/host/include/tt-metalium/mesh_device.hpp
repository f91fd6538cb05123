// attn's declaration of tt-metalium/mesh_device.hpp, the members attn's host
// code calls: opening one card as a 1x1 mesh, its command queue, its DRAM
// banks and worker grid, and closing it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include <hostdevcommon/common_values.hpp>
#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/dispatch_core_common.hpp>
#include <tt-metalium/mesh_coord.hpp>
#include <tt_stl/span.hpp>
#include <umd/device/types/arch.hpp>

namespace tt::tt_metal::distributed {

class MeshCommandQueue;

class MeshDevice : public std::enable_shared_from_this<MeshDevice> {
public:
    MeshDevice(const MeshDevice&) = delete;
    MeshDevice& operator=(const MeshDevice&) = delete;
    virtual ~MeshDevice();

    // The device `device_id` alone, as a 1x1 mesh.
    static std::shared_ptr<MeshDevice> create_unit_mesh(
        int device_id,
        size_t l1_small_size = DEFAULT_L1_SMALL_SIZE,
        size_t trace_region_size = DEFAULT_TRACE_REGION_SIZE,
        size_t num_command_queues = 1,
        const DispatchCoreConfig& dispatch_core_config = DispatchCoreConfig{},
        ttsl::Span<const std::uint32_t> l1_bank_remap = {},
        size_t worker_l1_size = DEFAULT_WORKER_L1_SIZE);

    tt::ARCH arch() const;
    int id() const;
    int num_dram_channels() const;
    uint32_t l1_size_per_core() const;
    // The Tensix cores a program may use.
    CoreCoord compute_with_storage_grid_size() const;

    const MeshShape& shape() const;
    // With no id, the current thread's queue.
    MeshCommandQueue& mesh_command_queue(std::optional<uint8_t> cq_id = std::nullopt) const;

    bool close();

protected:
    MeshDevice();
};

}  // namespace tt::tt_metal::distributed

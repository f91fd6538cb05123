// attn's declaration of tt-metalium/mesh_workload.hpp: programs placed on
// ranges of a mesh's devices, enqueued together.
#pragma once

#include <memory>

#include <tt-metalium/host_api.hpp>
#include <tt-metalium/mesh_coord.hpp>

namespace tt::tt_metal::distributed {

class MeshWorkloadImpl;

class MeshWorkload {
public:
    MeshWorkload();
    ~MeshWorkload();
    MeshWorkload(MeshWorkload&& other) noexcept;
    MeshWorkload& operator=(MeshWorkload&& other) noexcept;

    void add_program(const MeshCoordinateRange& device_range, Program&& program);

private:
    std::unique_ptr<MeshWorkloadImpl> pimpl_;
};

}  // namespace tt::tt_metal::distributed

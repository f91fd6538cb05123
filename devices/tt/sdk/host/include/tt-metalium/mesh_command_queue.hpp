// attn's declaration of tt-metalium/mesh_command_queue.hpp: the queue that
// mesh workloads and buffer transfers are enqueued on, in order. Used only
// through the free functions of distributed.hpp.
#pragma once

namespace tt::tt_metal::distributed {

class MeshCommandQueue {
public:
    virtual ~MeshCommandQueue() = default;
};

}  // namespace tt::tt_metal::distributed

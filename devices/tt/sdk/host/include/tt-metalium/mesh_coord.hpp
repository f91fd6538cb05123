// attn's declaration of tt-metalium/mesh_coord.hpp: the shape of a mesh of
// devices, a coordinate in it and an inclusive range of coordinates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tt::tt_metal::distributed {

class MeshShape {
public:
    explicit MeshShape(uint32_t x);
    MeshShape(uint32_t x, uint32_t y);
    MeshShape(uint32_t x, uint32_t y, uint32_t z);

    size_t dims() const;
    // Devices in the mesh.
    size_t mesh_size() const;

private:
    std::vector<uint32_t> value_;
};

class MeshCoordinate {
public:
    explicit MeshCoordinate(uint32_t x);
    MeshCoordinate(uint32_t x, uint32_t y);
    MeshCoordinate(uint32_t x, uint32_t y, uint32_t z);

    size_t dims() const;

private:
    std::vector<uint32_t> value_;
};

class MeshCoordinateRange {
public:
    // From `start` to `end`, both included.
    MeshCoordinateRange(const MeshCoordinate& start, const MeshCoordinate& end);
    // Every coordinate of a mesh of `shape`.
    explicit MeshCoordinateRange(const MeshShape& shape);

    const MeshCoordinate& start_coord() const;
    const MeshCoordinate& end_coord() const;

private:
    MeshCoordinate start_;
    MeshCoordinate end_;
};

}  // namespace tt::tt_metal::distributed

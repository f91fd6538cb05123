// attn's declaration of tt-metalium/host_api.hpp, the part attn's host code
// calls: programs, kernels, circular buffers and runtime arguments. Device
// management goes through distributed::MeshDevice (mesh_device.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <hostdevcommon/common_values.hpp>
#include <tt-metalium/circular_buffer_config.hpp>
#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/dispatch_core_common.hpp>
#include <tt-metalium/kernel_types.hpp>
#include <tt-metalium/program.hpp>
#include <tt-metalium/sub_device_types.hpp>
#include <tt_stl/span.hpp>

namespace tt::tt_metal {

Program CreateProgram();

// Adds the kernel in `file_name` (absolute, relative to the working folder,
// or to TT_METAL_HOME / TT_METAL_KERNEL_PATH) on the cores of `core_spec`;
// the SDK compiles it when the program is first enqueued.
KernelHandle CreateKernel(
    Program& program,
    const std::string& file_name,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    const std::variant<DataMovementConfig, ComputeConfig, EthernetConfig>& config);

CBHandle CreateCircularBuffer(
    Program& program,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    const CircularBufferConfig& config);

// One kernel's runtime arguments on the cores of `core_spec` (at most
// max_runtime_args).
void SetRuntimeArgs(
    const Program& program,
    KernelHandle kernel,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    ttsl::Span<const uint32_t> runtime_args);

// Different arguments per core: runtime_args[i] for core_spec[i].
void SetRuntimeArgs(
    const Program& program,
    KernelHandle kernel,
    const std::vector<CoreCoord>& core_spec,
    const std::vector<std::vector<uint32_t>>& runtime_args);

}  // namespace tt::tt_metal

// attn's declaration of tt-metalium/kernel_types.hpp: the configurations
// CreateKernel takes, in the field order of the SDK (designated
// initializers depend on it), and the runtime-argument limit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <tt-metalium/base_types.hpp>
#include <tt-metalium/data_types.hpp>

namespace tt::tt_metal {

// Runtime arguments one kernel may get on one core: a 4 KiB dispatch packet
// shared by the three kernels of a Tensix core.
constexpr uint32_t max_runtime_args = 341;

using KernelHandle = std::uint32_t;

enum class KernelBuildOptLevel : uint8_t { O1, O2, O3, O0, Os, Ofast, Oz };

struct DataMovementConfig {
    DataMovementProcessor processor = DataMovementProcessor::RISCV_0;
    NOC noc = NOC::RISCV_0_default;
    NOC_MODE noc_mode = NOC_MODE::DM_DEDICATED_NOC;
    std::vector<uint32_t> compile_args;
    std::map<std::string, std::string> defines;
    std::unordered_map<std::string, uint32_t> named_compile_args;
    KernelBuildOptLevel opt_level = KernelBuildOptLevel::O2;
};

struct ComputeConfig {
    MathFidelity math_fidelity = MathFidelity::HiFi4;
    bool fp32_dest_acc_en = false;
    bool dst_full_sync_en = false;
    std::vector<UnpackToDestMode> unpack_to_dest_mode;
    bool bfp8_pack_precise = false;
    bool math_approx_mode = false;
    std::vector<uint32_t> compile_args;
    std::map<std::string, std::string> defines;
    std::unordered_map<std::string, uint32_t> named_compile_args;
    KernelBuildOptLevel opt_level = KernelBuildOptLevel::O3;
};

// Here only so that CreateKernel's variant has its real alternatives. The
// SDK's has the Ethernet core's settings; attn runs no Ethernet kernels, so
// none are declared.
struct EthernetConfig {};

}  // namespace tt::tt_metal

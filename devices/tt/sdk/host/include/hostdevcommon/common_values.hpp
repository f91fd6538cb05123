// attn's declaration of the defaults in TT-Metalium's
// tt_metal/hostdevcommon/api/hostdevcommon/common_values.hpp that
// MeshDevice::create_unit_mesh takes: zero asks the SDK for its own size.
#pragma once

#include <cstddef>

constexpr static std::size_t DEFAULT_L1_SMALL_SIZE = 0;
constexpr static std::size_t DEFAULT_TRACE_REGION_SIZE = 0;
constexpr static std::size_t DEFAULT_WORKER_L1_SIZE = 0;

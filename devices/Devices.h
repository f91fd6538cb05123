//===- Devices.h - The devices of this build, by type ----------*- C++ -*-===//
//
// Opens the device of a device type with the device libraries this build
// has (the CPU always; Vulkan, CUDA and the Tenstorrent emulator where they
// were built), so an engine names a device type, not a class. The devices
// come from their factories (DeviceFactory.h).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_DEVICES_DEVICES_H
#define ATTN_DEVICES_DEVICES_H

#include "runtime/device/Device.h"
#include "runtime/host/Registry.h"
#include "runtime/host/Session.h"

#include <memory>
#include <string>
#include <vector>

namespace attn::devices {

/// The device types this build can open.
std::vector<runtime::DeviceType> availableDeviceTypes();

/// The first device of `type`: the CPU (host memory and cpu kernels,
/// devices/cpu), the Vulkan device the Vulkan executor selects, CUDA device
/// 0, the system's Metal device, or the Tenstorrent emulator. An error when
/// this build or machine has none.
Result<std::unique_ptr<runtime::PlanDevice>>
openDevice(runtime::DeviceType type);

/// Session::open on openDevice(type).
Result<std::unique_ptr<runtime::Session>>
openSession(runtime::DeviceType type,
            const std::vector<std::string> &bundleDirs = {},
            const runtime::BundleTrust &trust = {});

} // namespace attn::devices

#endif // ATTN_DEVICES_DEVICES_H

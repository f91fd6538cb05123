//===- Devices.h - The devices of this build, by type ----------*- C++ -*-===//
//
// Opens the device of a device type with the executor libraries this build
// has (the CPU always; Vulkan, CUDA, Metal and the Tenstorrent emulator where
// they were built), so an engine names a device type, not a class.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_SESSION_DEVICES_H
#define ATTN_RUNTIME_SESSION_DEVICES_H

#include "runtime/Device.h"
#include "runtime/Registry.h"
#include "runtime/session/Session.h"

#include <memory>
#include <string>
#include <vector>

namespace attn::runtime {

/// The device types this build can open.
std::vector<DeviceType> availableDeviceTypes();

/// The first device of `type`: the CPU's memory, the Vulkan device the
/// Vulkan executor selects, CUDA device 0, the system's Metal device, or the
/// Tenstorrent emulator. An error when this build or machine has none.
Result<std::unique_ptr<PlanDevice>> openDevice(DeviceType type);

/// Session::open on openDevice(type).
Result<std::unique_ptr<Session>>
openSession(DeviceType type, const std::vector<std::string> &bundleDirs = {});

} // namespace attn::runtime

#endif // ATTN_RUNTIME_SESSION_DEVICES_H

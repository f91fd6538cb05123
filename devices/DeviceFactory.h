//===- DeviceFactory.h - How a device of one type is opened ----*- C++ -*-===//
//
// Each device folder under devices/ defines one factory function returning
// its DeviceFactory, deviceFactory() in the device's namespace
// (attn::vulkan::deviceFactory() in devices/vulkan, ...).
// devices/CMakeLists.txt generates the list of the factories this build has
// (DeviceList.cpp), so adding a device is a folder and a line there, and
// Devices.cpp names none of them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_DEVICES_DEVICEFACTORY_H
#define ATTN_DEVICES_DEVICEFACTORY_H

#include "core/Status.h"
#include "runtime/device/Device.h"
#include "runtime/host/Registry.h"

#include <memory>
#include <span>

namespace attn::devices {

/// Opens the first device of one type.
struct DeviceFactory {
  runtime::DeviceType type;
  Result<std::unique_ptr<runtime::PlanDevice>> (*open)();
};

/// The factories of the devices this build has, the CPU's first
/// (generated: DeviceList.cpp in the build tree).
std::span<const DeviceFactory> builtDeviceFactories();

} // namespace attn::devices

#endif // ATTN_DEVICES_DEVICEFACTORY_H

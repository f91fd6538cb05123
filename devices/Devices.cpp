//===- Devices.cpp - The devices of this build, by type -------------------===//

#include "devices/Devices.h"

#include "devices/DeviceFactory.h"

namespace attn::devices {

using runtime::DeviceType;
using runtime::BundleTrust;
using runtime::PlanDevice;
using runtime::Session;

std::vector<DeviceType> availableDeviceTypes() {
  std::vector<DeviceType> types;
  for (const DeviceFactory &factory : builtDeviceFactories())
    types.push_back(factory.type);
  return types;
}

Result<std::unique_ptr<PlanDevice>> openDevice(DeviceType type) {
  for (const DeviceFactory &factory : builtDeviceFactories())
    if (factory.type == type)
      return factory.open();
  std::string have;
  for (DeviceType t : availableDeviceTypes())
    have += (have.empty() ? "" : ", ") + std::string(toString(t));
  return errorf("this build has no ", toString(type), " device (it has: ", have,
                ")");
}

Result<std::unique_ptr<Session>>
openSession(DeviceType type, const std::vector<std::string> &bundleDirs,
            const BundleTrust &trust) {
  Result<std::unique_ptr<PlanDevice>> device = openDevice(type);
  if (!device)
    return device.status();
  return Session::open(type, std::move(*device), bundleDirs, trust);
}

} // namespace attn::devices

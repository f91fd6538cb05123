//===- TTFactory.cpp - Opens the Tenstorrent device (the host emulator) ---===//

#include "devices/DeviceFactory.h"
#include "devices/tt/EmulatorDevice.h"
#include "devices/tt/TTPlanDevice.h"

namespace attn::runtime {

DeviceFactory ttDeviceFactory() {
  return {DeviceType::TENSTORRENT,
          []() -> Result<std::unique_ptr<PlanDevice>> {
            return std::unique_ptr<PlanDevice>(
                std::make_unique<tt::TTPlanDevice>(
                    std::make_unique<tt::EmulatorDevice>()));
          }};
}

} // namespace attn::runtime

//===- TTFactory.cpp - Opens the Tenstorrent device (the host emulator) ---===//

#include "devices/DeviceFactory.h"
#include "devices/tt/EmulatorDevice.h"
#include "devices/tt/TTPlanDevice.h"

namespace attn::tt {

devices::DeviceFactory deviceFactory() {
  return {
      runtime::DeviceType::TENSTORRENT,
      []() -> Result<std::unique_ptr<runtime::PlanDevice>> {
        return std::unique_ptr<runtime::PlanDevice>(
            std::make_unique<TTPlanDevice>(std::make_unique<EmulatorDevice>()));
      }};
}

} // namespace attn::tt

//===- VulkanFactory.cpp - Opens the Vulkan device ------------------------===//

#include "devices/DeviceFactory.h"
#include "devices/vulkan/VulkanPlanDevice.h"

namespace attn::runtime {

DeviceFactory vulkanDeviceFactory() {
  return {DeviceType::VULKAN, []() -> Result<std::unique_ptr<PlanDevice>> {
            Result<std::unique_ptr<VulkanPlanDevice>> device =
                VulkanPlanDevice::create();
            if (!device)
              return device.status();
            return std::unique_ptr<PlanDevice>(std::move(*device));
          }};
}

} // namespace attn::runtime

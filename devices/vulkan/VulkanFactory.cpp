//===- VulkanFactory.cpp - Opens the Vulkan device ------------------------===//

#include "devices/DeviceFactory.h"
#include "devices/vulkan/VulkanPlanDevice.h"

namespace attn::vulkan {

devices::DeviceFactory deviceFactory() {
  return {runtime::DeviceType::VULKAN,
          []() -> Result<std::unique_ptr<runtime::PlanDevice>> {
            Result<std::unique_ptr<VulkanPlanDevice>> device =
                VulkanPlanDevice::create();
            if (!device)
              return device.status();
            return std::unique_ptr<runtime::PlanDevice>(std::move(*device));
          }};
}

} // namespace attn::vulkan

//===- Devices.cpp - The devices of this build, by type -------------------===//

#include "runtime/session/Devices.h"

#include "runtime/executors/cpu/CpuExecutor.h"

#ifdef ATTN_HAVE_VULKAN
#include "runtime/executors/vulkan/VulkanPlanDevice.h"
#endif
#ifdef ATTN_HAVE_CUDA
#include "runtime/executors/cuda/CudaPlanDevice.h"
#endif
#ifdef ATTN_HAVE_TT
#include "runtime/executors/tt/EmulatorDevice.h"
#include "runtime/executors/tt/TTPlanDevice.h"
#endif

namespace attn::runtime {

std::vector<DeviceType> availableDeviceTypes() {
  std::vector<DeviceType> types = {DeviceType::CPU};
#ifdef ATTN_HAVE_VULKAN
  types.push_back(DeviceType::VULKAN);
#endif
#ifdef ATTN_HAVE_CUDA
  types.push_back(DeviceType::CUDA);
#endif
#ifdef ATTN_HAVE_TT
  types.push_back(DeviceType::TENSTORRENT);
#endif
  return types;
}

Result<std::unique_ptr<PlanDevice>> openDevice(DeviceType type) {
  switch (type) {
  case DeviceType::CPU:
    return std::unique_ptr<PlanDevice>(std::make_unique<CpuDevice>());
#ifdef ATTN_HAVE_VULKAN
  case DeviceType::VULKAN: {
    Result<std::unique_ptr<VulkanPlanDevice>> device =
        VulkanPlanDevice::create();
    if (!device)
      return device.status();
    return std::unique_ptr<PlanDevice>(std::move(*device));
  }
#endif
#ifdef ATTN_HAVE_CUDA
  case DeviceType::CUDA: {
    Result<std::unique_ptr<CudaPlanDevice>> device = CudaPlanDevice::create();
    if (!device)
      return device.status();
    return std::unique_ptr<PlanDevice>(std::move(*device));
  }
#endif
#ifdef ATTN_HAVE_TT
  case DeviceType::TENSTORRENT:
    return std::unique_ptr<PlanDevice>(std::make_unique<tt::TTPlanDevice>(
        std::make_unique<tt::EmulatorDevice>()));
#endif
  default:
    break;
  }
  return errorf("this build has no ", toString(type), " device (it has: ",
                [] {
                  std::string have;
                  for (DeviceType t : availableDeviceTypes())
                    have += (have.empty() ? "" : ", ") +
                            std::string(toString(t));
                  return have;
                }(),
                ")");
}

Result<std::unique_ptr<Session>>
openSession(DeviceType type, const std::vector<std::string> &bundleDirs) {
  Result<std::unique_ptr<PlanDevice>> device = openDevice(type);
  if (!device)
    return device.status();
  return Session::open(type, std::move(*device), bundleDirs);
}

} // namespace attn::runtime

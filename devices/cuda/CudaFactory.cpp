//===- CudaFactory.cpp - Opens CUDA device 0 ------------------------------===//

#include "devices/DeviceFactory.h"
#include "devices/cuda/CudaPlanDevice.h"

namespace attn::runtime {

DeviceFactory cudaDeviceFactory() {
  return {DeviceType::CUDA, []() -> Result<std::unique_ptr<PlanDevice>> {
            Result<std::unique_ptr<CudaPlanDevice>> device =
                CudaPlanDevice::create();
            if (!device)
              return device.status();
            return std::unique_ptr<PlanDevice>(std::move(*device));
          }};
}

} // namespace attn::runtime

//===- CudaFactory.cpp - Opens CUDA device 0 ------------------------------===//

#include "devices/DeviceFactory.h"
#include "devices/cuda/CudaPlanDevice.h"

namespace attn::cuda {

devices::DeviceFactory deviceFactory() {
  return {runtime::DeviceType::CUDA,
          []() -> Result<std::unique_ptr<runtime::PlanDevice>> {
            Result<std::unique_ptr<CudaPlanDevice>> device =
                CudaPlanDevice::create();
            if (!device)
              return device.status();
            return std::unique_ptr<runtime::PlanDevice>(std::move(*device));
          }};
}

} // namespace attn::cuda

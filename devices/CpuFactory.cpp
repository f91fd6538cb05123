//===- CpuFactory.cpp - The CPU device: host memory, the reference ops ----===//
//
// The CPU device is the runtime's own (runtime/executor/CpuExecutor.h), so
// every build has it.
//
//===----------------------------------------------------------------------===//

#include "devices/DeviceFactory.h"
#include "runtime/executor/CpuExecutor.h"

namespace attn::runtime {

DeviceFactory cpuDeviceFactory() {
  return {DeviceType::CPU, []() -> Result<std::unique_ptr<PlanDevice>> {
            return std::unique_ptr<PlanDevice>(std::make_unique<CpuDevice>());
          }};
}

} // namespace attn::runtime

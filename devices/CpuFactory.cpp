//===- CpuFactory.cpp - The CPU device: host memory, the reference ops ----===//
//
// The CPU device is the runtime's own (runtime/executor/CpuExecutor.h), so
// every build has it.
//
//===----------------------------------------------------------------------===//

#include "devices/DeviceFactory.h"
#include "runtime/executor/CpuExecutor.h"

namespace attn::cpu {

devices::DeviceFactory deviceFactory() {
  return {runtime::DeviceType::CPU,
          []() -> Result<std::unique_ptr<runtime::PlanDevice>> {
            return std::unique_ptr<runtime::PlanDevice>(
                std::make_unique<runtime::CpuDevice>());
          }};
}

} // namespace attn::cpu

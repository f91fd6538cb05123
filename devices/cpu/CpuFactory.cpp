//===- CpuFactory.cpp - Opens the CPU device ------------------------------===//

#include "devices/DeviceFactory.h"
#include "devices/cpu/CpuPlanDevice.h"

namespace attn::cpu {

namespace {

/// The CPU device with its default threads (ATTN_CPU_THREADS, else every CPU
/// the process may run on).
Result<std::unique_ptr<runtime::PlanDevice>> openCpuDevice() {
  Result<std::unique_ptr<CpuPlanDevice>> device = CpuPlanDevice::create();
  if (!device)
    return device.status();
  return std::unique_ptr<runtime::PlanDevice>(std::move(*device));
}

} // namespace

devices::DeviceFactory deviceFactory() {
  return {runtime::DeviceType::CPU, openCpuDevice};
}

} // namespace attn::cpu

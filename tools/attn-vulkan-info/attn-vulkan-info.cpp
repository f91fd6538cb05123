//===- VulkanInfoMain.cpp - attn-vulkan-info -----------------------------===//
//
// Prints every Vulkan device and what attn's lowering cares about in it
// (subgroup size, shared memory, 16-bit and 64-bit support), then creates the
// device the executor would pick. For CI logs. With --bundle DIR, also loads
// every SPIR-V kernel of the bundle that this device would run (the entry of
// its subgroup size, per variant), as a serving engine does at start-up.
// Exits 1 without a usable device or when the bundle does not load.
//
//===----------------------------------------------------------------------===//

#include "core/Target.h"
#include "core/Version.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/executor/BundleExecutor.h"
#include "devices/vulkan/VulkanExecutor.h"
#include "devices/vulkan/VulkanPlanDevice.h"

#include <set>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  attn::vulkan::VulkanOptions options;
  std::string bundleDir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--bundle=", 0) == 0) {
      bundleDir = arg.substr(9);
    } else if (arg == "--bundle" && i + 1 < argc) {
      bundleDir = argv[++i];
    } else if (arg == "--validation") {
      options.validation = attn::vulkan::ValidationMode::Required;
    } else if (arg == "--version") {
      std::printf("attn-vulkan-info %s\n", attn::version());
      return 0;
    } else if (arg.rfind("--device=", 0) == 0) {
      options.deviceIndex =
          static_cast<uint32_t>(std::strtoul(arg.c_str() + 9, nullptr, 10));
    } else {
      std::fprintf(stderr,
                   "usage: %s [--validation] [--device=N] [--bundle DIR] "
                   "[--version]\n"
                   "Lists Vulkan devices and the one attn's Vulkan executor "
                   "selects.\n"
                   "--bundle DIR loads every SPIR-V kernel of the bundle "
                   "that device would run.\n",
                   argv[0]);
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }

  auto devices = attn::vulkan::VulkanDevice::listPhysicalDevices(options);
  if (!devices) {
    std::fprintf(stderr, "attn-vulkan-info: %s\n", devices.message().c_str());
    return 1;
  }
  for (const attn::vulkan::VulkanDeviceInfo &info : *devices)
    std::printf("%s\n", attn::vulkan::describe(info).c_str());

  auto device = attn::vulkan::VulkanDevice::create(options);
  if (!device) {
    std::fprintf(stderr, "attn-vulkan-info: %s\n", device.message().c_str());
    return 1;
  }
  std::printf("selected: device %u (%s)%s\n", (*device)->info().index,
              (*device)->info().name.c_str(),
              (*device)->validationEnabled() ? ", validation on" : "");
  for (const std::string &m : (*device)->takeValidationMessages())
    std::printf("validation %s\n", m.c_str());
  if (bundleDir.empty())
    return 0;
  device->reset();

  auto bundle = attn::runtime::loadBundle(bundleDir);
  if (!bundle) {
    std::fprintf(stderr, "attn-vulkan-info: %s\n", bundle.message().c_str());
    return 1;
  }
  auto planDevice = attn::vulkan::VulkanPlanDevice::create(options);
  if (!planDevice) {
    std::fprintf(stderr, "attn-vulkan-info: %s\n",
                 planDevice.message().c_str());
    return 1;
  }
  std::set<std::string> variants;
  for (const attn::runtime::BundleVariant &v : bundle->variants)
    variants.insert(v.name);
  size_t entries = bundle->variants.size();
  attn::runtime::BundleExecutor executor(
      std::move(*bundle), std::string(attn::toString(attn::Target::SPIRV)),
      **planDevice);
  if (attn::Status s = executor.loadAllKernels(); !s) {
    std::fprintf(stderr, "attn-vulkan-info: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("bundle %s: %zu variants (%zu entries), %zu kernels loaded on "
              "%s (subgroup size %s)\n",
              bundleDir.c_str(), variants.size(), entries,
              executor.loadedKernels(),
              std::string((*planDevice)->name()).c_str(),
              (*planDevice)->subgroupSizes().describe().c_str());
  return 0;
}

//===- VulkanInfoMain.cpp - attn-vulkan-info -----------------------------===//
//
// Prints every Vulkan device and what attn's lowering cares about in it
// (subgroup size, shared memory, 16-bit and 64-bit support), then creates the
// device the executor would pick. For CI logs. Exits 1 without a usable
// device.
//
//===----------------------------------------------------------------------===//

#include "runtime/executors/vulkan/VulkanExecutor.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  attn::VulkanOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--validation") {
      options.validation = attn::ValidationMode::Required;
    } else if (arg.rfind("--device=", 0) == 0) {
      options.deviceIndex =
          static_cast<uint32_t>(std::strtoul(arg.c_str() + 9, nullptr, 10));
    } else {
      std::fprintf(stderr,
                   "usage: %s [--validation] [--device=N]\n"
                   "Lists Vulkan devices and the one attn's Vulkan executor "
                   "selects.\n",
                   argv[0]);
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }

  auto devices = attn::VulkanDevice::listPhysicalDevices(options);
  if (!devices) {
    std::fprintf(stderr, "attn-vulkan-info: %s\n", devices.message().c_str());
    return 1;
  }
  for (const attn::VulkanDeviceInfo &info : *devices)
    std::printf("%s\n", attn::describe(info).c_str());

  auto device = attn::VulkanDevice::create(options);
  if (!device) {
    std::fprintf(stderr, "attn-vulkan-info: %s\n", device.message().c_str());
    return 1;
  }
  std::printf("selected: device %u (%s)%s\n", (*device)->info().index,
              (*device)->info().name.c_str(),
              (*device)->validationEnabled() ? ", validation on" : "");
  for (const std::string &m : (*device)->takeValidationMessages())
    std::printf("validation %s\n", m.c_str());
  return 0;
}

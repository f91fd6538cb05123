//===- MemoryBudget.cpp - What this host can allocate now -----------------===//
#include "core/MemoryBudget.h"

#include <cstdio>
#include <string>

#include <unistd.h>

namespace attn {

namespace {

/// Small enough that every host has it, so that the small allocations of
/// every step skip reading /proc.
constexpr uint64_t kAlwaysAvailable = uint64_t{64} << 20;

/// MemAvailable of /proc/meminfo in bytes, or 0 when it cannot be read.
uint64_t memAvailable() {
  std::FILE *file = std::fopen("/proc/meminfo", "r");
  if (!file)
    return 0;
  char line[256];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof(line), file))
    if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
      break;
  std::fclose(file);
  return static_cast<uint64_t>(kib) * 1024;
}

std::string gib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB",
                static_cast<double>(bytes) / (uint64_t{1} << 30));
  return text;
}

} // namespace

uint64_t availableHostMemory() {
  if (uint64_t bytes = memAvailable())
    return bytes;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX; // unknown: let the allocation decide
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

Status checkHostMemory(uint64_t bytes, std::string_view what) {
  if (bytes <= kAlwaysAvailable)
    return Status::ok();
  const uint64_t available = availableHostMemory();
  if (bytes <= available)
    return Status::ok();
  return errorf(what, " needs ", bytes, " bytes (", gib(bytes),
                "), more than the ", available, " bytes (", gib(available),
                ") of memory available on this host");
}

} // namespace attn

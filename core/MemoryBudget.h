//===- MemoryBudget.h - What this host can allocate now ---------*- C++ -*-===//
//
// The one check of a size against the host's memory, made before a tool or
// the runtime allocates something whose size comes from input: a size past
// what the host has would otherwise end in an out-of-memory abort (LLVM's
// new-handler) or in the kernel's OOM killer, long after the input was read.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_MEMORYBUDGET_H
#define ATTN_CORE_MEMORYBUDGET_H

#include "core/Status.h"

#include <cstdint>
#include <string_view>

namespace attn {

/// Bytes this host can give a process now: /proc/meminfo's MemAvailable on
/// Linux, else the physical memory (sysconf).
uint64_t availableHostMemory();

/// An error naming `what` and both sizes when `bytes` exceed
/// availableHostMemory(). Sizes up to 64 MiB pass without asking the host.
Status checkHostMemory(uint64_t bytes, std::string_view what);

} // namespace attn

#endif // ATTN_CORE_MEMORYBUDGET_H

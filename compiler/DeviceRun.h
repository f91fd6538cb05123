//===- DeviceRun.h - Compile and run a function on a device ----*- C++ -*-===//
//
// What attn-run and attn-diff do for a device backend: compile the module
// in process for the device (its subgroup size), load the kernels, and run
// the function's plan with the same runner a serving engine uses.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_DEVICERUN_H
#define ATTN_COMPILER_DEVICERUN_H

#include "reference/ops/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir {
class ModuleOp;

namespace attn {

struct DeviceRunStats {
  /// "vulkan:llvmpipe (LLVM 15.0.6, 256 bits)", ...
  std::string device;
  double compileSeconds = 0.0;
  double kernelSeconds = 0.0;
  int64_t launches = 0;
};

/// The device backends this build can run ("vulkan" when the Vulkan
/// executor is built); "reference" is always there besides them.
std::vector<std::string> deviceBackends();

/// Compiles `module` for `backend`, runs function `entry` on `inputs` and
/// returns its results.
llvm::Expected<std::vector<::attn::Tensor>>
runOnDevice(ModuleOp module, llvm::StringRef entry, llvm::StringRef backend,
            llvm::ArrayRef<::attn::Tensor> inputs,
            DeviceRunStats *stats = nullptr);

} // namespace attn
} // namespace mlir

#endif // ATTN_COMPILER_DEVICERUN_H

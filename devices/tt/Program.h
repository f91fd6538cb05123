//===- Program.h - A TT program description, loaded and built ------------===//
//
// attn-translate --attn-to-ttmetal writes one folder per program: a C++ file
// per kernel and program.json, the host side as data (core/TTProgram.h, its
// one reader and writer).
//
// Every kernel of a core gets the same runtime arguments. A kernel gets at
// most kMaxRuntimeArgs of them, so a step with more units than the cores
// can take at once runs as several launches of the program.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_PROGRAM_H
#define ATTN_RUNTIME_EXECUTORS_TT_PROGRAM_H

#include "core/TTProgram.h"
#include "devices/tt/emulator/Emulator.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn::tt {

/// A program.json and the folder it was read from, where its kernels'
/// sources and its merge program are.
struct ProgramDescription : TTProgram {
  std::string dir;
};

/// Reads `dir`/program.json.
Result<ProgramDescription> loadProgramDescription(const std::string &dir);

/// A device's form of a program's kernels (TTDevice::loadKernels).
class LoadedKernels {
public:
  explicit LoadedKernels(const void *owner) : owner(owner) {}
  virtual ~LoadedKernels();
  /// The device that loaded them; only it can run them.
  const void *owner;
};

/// A description with its kernels loaded on a device, and the program that
/// merges its partial states when it has one.
struct Program {
  ProgramDescription description;
  std::shared_ptr<const LoadedKernels> kernels;
  std::shared_ptr<const Program> merge;
};

/// The folder of the merge program of the program in `dir` (a subfolder).
std::string mergeProgramDir(const std::string &dir,
                            const ProgramDescription &description);

/// Runtime arguments of one launch: [core][kernel] -> arguments.
using LaunchArgs = std::vector<std::vector<std::vector<uint32_t>>>;

/// Lays out per-core runtime arguments: each core gets the named leading
/// arguments (values from `named`, which must hold every name) followed by
/// its share of `units` (each a map from unit field name to value), units
/// split into contiguous runs over at most numCores() cores, and into
/// several launches where a core's share would pass kMaxRuntimeArgs.
Result<std::vector<LaunchArgs>>
layOutRuntimeArgs(const Program &program,
                  const std::map<std::string, uint32_t> &named,
                  const std::vector<std::map<std::string, uint32_t>> &units);

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_PROGRAM_H

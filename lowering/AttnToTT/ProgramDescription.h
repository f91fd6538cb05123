//===- ProgramDescription.h - The host side of a TT program as IR -*- C++
//-*-===//
//
// What convert-attn-to-ttkernel records about a program besides its kernels:
// the circular buffers, the kernels with their RISC and compile-time
// arguments, and the names of the runtime arguments. It becomes the module's
// `ttk.program` dictionary, the IR form of core/TTProgram.h's struct, which
// writeProgramJson reads back into that struct to write program.json. The
// data formats and the architectures are core's.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOTT_PROGRAMDESCRIPTION_H
#define ATTN_LOWERING_ATTNTOTT_PROGRAMDESCRIPTION_H

#include "core/TTProgram.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::attn::tt {

/// TT-Metalium data formats of circular buffers.
using TTDataFormat = ::attn::tt::DataFormat;

int64_t elementBytes(TTDataFormat f);

/// The architecture a program is compiled for. The kernels depend on its
/// dramReadAlignment, the NOC alignment of DRAM reads (32 B on Wormhole,
/// 64 B on Blackhole), which is also the page alignment of interleaved DRAM
/// buffers.
using TTArch = ::attn::tt::ArchParams;

/// "wormhole_b0" or "blackhole"; nullopt for anything else.
std::optional<TTArch> parseTTArch(llvm::StringRef name);
/// Wormhole's, the default of convert-attn-to-ttkernel.
const TTArch &defaultTTArch();

class ProgramDescriptionBuilder {
public:
  explicit ProgramDescriptionBuilder(Builder &b) : b(b) {}

  void cb(int64_t id, StringRef name, int64_t pages, int64_t pageSize,
          TTDataFormat format);
  void kernel(StringRef name, StringRef kind, StringRef processor,
              ArrayRef<int64_t> compileTimeArgs);

  /// The format of buffer `id`, which must have been declared.
  TTDataFormat formatOf(int64_t id) const;

  /// `mergeProgram` names the program (a subfolder) that merges this one's
  /// partial states (split-KV decode), or is empty.
  DictionaryAttr build(StringRef name, StringRef op, const TTArch &arch,
                       DictionaryAttr params, int64_t gridX, int64_t gridY,
                       ArrayRef<StringRef> runtimeArgs,
                       ArrayRef<StringRef> unitArgs,
                       StringRef mergeProgram = "");

private:
  Builder &b;
  struct CircularBuffer {
    int64_t id;
    std::string name;
    int64_t pages;
    int64_t pageSize;
    TTDataFormat format;
  };
  SmallVector<CircularBuffer> cbs;
  SmallVector<Attribute> kernels;
};

/// program.json of `program`, a module with a `ttk.program` description:
/// the description read by core's reader of program.json (so the IR form
/// passes the checks the device layer makes) and written by its writer.
/// Emits an error on `program` when the description does not fit.
FailureOr<std::string> writeProgramJson(Operation *program);

} // namespace mlir::attn::tt

#endif // ATTN_LOWERING_ATTNTOTT_PROGRAMDESCRIPTION_H

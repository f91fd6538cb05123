//===- ProgramDescription.h - The host side of a TT program as data -*- C++ -*-===//
//
// What convert-attn-to-ttkernel records about a program besides its kernels:
// the circular buffers (ids as TT-Metalium's CBIndex: inputs from 0, outputs
// from 16, intermediates from 24), the kernels with their RISC and
// compile-time arguments, and the names of the runtime arguments. It becomes
// the module's `ttk.program` dictionary and then program.json
// (devices/tt/Program.h reads it).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOTT_PROGRAMDESCRIPTION_H
#define ATTN_LOWERING_ATTNTOTT_PROGRAMDESCRIPTION_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::attn::tt {

/// TT-Metalium data formats of circular buffers.
enum class TTDataFormat : uint8_t { Float32, Float16_b, Float16 };

llvm::StringRef spell(TTDataFormat f);
inline int64_t elementBytes(TTDataFormat f) {
  return f == TTDataFormat::Float32 ? 4 : 2;
}

/// The architecture a program is compiled for, and what the kernels depend
/// on: the NOC alignment of DRAM reads (32 B on Wormhole, 64 B on Blackhole),
/// which is also the page alignment of interleaved DRAM buffers.
struct TTArch {
  llvm::StringRef name = "wormhole_b0";
  int64_t dramAlignment = 32;
};

/// "wormhole_b0" or "blackhole"; nullopt for anything else.
std::optional<TTArch> parseTTArch(llvm::StringRef name);

struct CircularBufferDesc {
  int64_t id;
  std::string name;
  int64_t pages;
  int64_t pageSize;
  TTDataFormat format;
};

class ProgramDescriptionBuilder {
public:
  explicit ProgramDescriptionBuilder(Builder &b) : b(b) {}

  void cb(int64_t id, StringRef name, int64_t pages, int64_t pageSize,
          TTDataFormat format);
  void kernel(StringRef name, StringRef kind, StringRef processor,
              ArrayRef<int64_t> compileTimeArgs);

  /// The circular buffers declared so far.
  ArrayRef<CircularBufferDesc> circularBuffers() const { return cbs; }
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
  SmallVector<CircularBufferDesc> cbs;
  SmallVector<Attribute> kernels;
};

} // namespace mlir::attn::tt

#endif // ATTN_LOWERING_ATTNTOTT_PROGRAMDESCRIPTION_H

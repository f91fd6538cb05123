//===- ProgramDescription.cpp - The host side of a TT program as data ----===//
#include "lowering/AttnToTT/ProgramDescription.h"

#include "llvm/Support/ErrorHandling.h"

namespace mlir::attn::tt {

llvm::StringRef spell(TTDataFormat f) {
  switch (f) {
  case TTDataFormat::Float32:
    return "Float32";
  case TTDataFormat::Float16_b:
    return "Float16_b";
  case TTDataFormat::Float16:
    return "Float16";
  }
  return "";
}

std::optional<TTArch> parseTTArch(llvm::StringRef name) {
  if (name == "wormhole_b0")
    return TTArch{"wormhole_b0", 32};
  if (name == "blackhole")
    return TTArch{"blackhole", 64};
  return std::nullopt;
}

void ProgramDescriptionBuilder::cb(int64_t id, StringRef name, int64_t pages,
                                   int64_t pageSize, TTDataFormat format) {
  cbs.push_back({id, name.str(), pages, pageSize, format});
}

TTDataFormat ProgramDescriptionBuilder::formatOf(int64_t id) const {
  for (const CircularBufferDesc &c : cbs)
    if (c.id == id)
      return c.format;
  llvm::report_fatal_error("circular buffer used before it is declared");
}

void ProgramDescriptionBuilder::kernel(StringRef name, StringRef kind,
                                       StringRef processor,
                                       ArrayRef<int64_t> compileTimeArgs) {
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("kind", b.getStringAttr(kind)),
      b.getNamedAttr("processor", b.getStringAttr(processor)),
      b.getNamedAttr("source", b.getStringAttr((name + ".cpp").str())),
      b.getNamedAttr("compile_time_args", b.getI64ArrayAttr(compileTimeArgs)),
  };
  if (kind == "compute") {
    attrs.push_back(b.getNamedAttr("math_fidelity", b.getStringAttr("HiFi4")));
    attrs.push_back(b.getNamedAttr("fp32_dest_acc_en", b.getBoolAttr(true)));
  }
  kernels.push_back(b.getDictionaryAttr(attrs));
}

DictionaryAttr ProgramDescriptionBuilder::build(
    StringRef name, StringRef op, const TTArch &arch, DictionaryAttr params,
    int64_t gridX, int64_t gridY, ArrayRef<StringRef> runtimeArgs,
    ArrayRef<StringRef> unitArgs, StringRef mergeProgram) {
  auto strings = [&](ArrayRef<StringRef> names) {
    SmallVector<Attribute> out;
    for (StringRef n : names)
      out.push_back(b.getStringAttr(n));
    return b.getArrayAttr(out);
  };
  SmallVector<Attribute> cbAttrs;
  for (const CircularBufferDesc &c : cbs)
    cbAttrs.push_back(b.getDictionaryAttr({
        b.getNamedAttr("id", b.getI64IntegerAttr(c.id)),
        b.getNamedAttr("name", b.getStringAttr(c.name)),
        b.getNamedAttr("num_pages", b.getI64IntegerAttr(c.pages)),
        b.getNamedAttr("page_size", b.getI64IntegerAttr(c.pageSize)),
        b.getNamedAttr("data_format", b.getStringAttr(spell(c.format))),
    }));
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("op", b.getStringAttr(op)),
      b.getNamedAttr("arch", b.getStringAttr(arch.name)),
      b.getNamedAttr("params", params),
      b.getNamedAttr(
          "core_grid",
          b.getDictionaryAttr({b.getNamedAttr("x", b.getI64IntegerAttr(gridX)),
                               b.getNamedAttr("y", b.getI64IntegerAttr(gridY))})),
      b.getNamedAttr("circular_buffers", b.getArrayAttr(cbAttrs)),
      b.getNamedAttr("kernels", b.getArrayAttr(kernels)),
      b.getNamedAttr("runtime_args", strings(runtimeArgs)),
      b.getNamedAttr("unit_args", strings(unitArgs)),
  };
  if (!mergeProgram.empty())
    attrs.push_back(
        b.getNamedAttr("merge_program", b.getStringAttr(mergeProgram)));
  return b.getDictionaryAttr(attrs);
}

} // namespace mlir::attn::tt

//===- ProgramDescription.cpp - The host side of a TT program as IR ------===//
#include "lowering/AttnToTT/ProgramDescription.h"

#include "core/TTProgram.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace mlir::attn::tt {

namespace core = ::attn::tt;

int64_t elementBytes(TTDataFormat f) { return core::elementSize(f); }

std::optional<TTArch> parseTTArch(llvm::StringRef name) {
  ::attn::Result<core::Arch> arch = core::parseArch(name);
  if (!arch)
    return std::nullopt;
  return core::archParams(*arch);
}

const TTArch &defaultTTArch() {
  return core::archParams(core::Arch::WormholeB0);
}

void ProgramDescriptionBuilder::cb(int64_t id, StringRef name, int64_t pages,
                                   int64_t pageSize, TTDataFormat format) {
  cbs.push_back({id, name.str(), pages, pageSize, format});
}

TTDataFormat ProgramDescriptionBuilder::formatOf(int64_t id) const {
  for (const CircularBuffer &c : cbs)
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
  for (const CircularBuffer &c : cbs)
    cbAttrs.push_back(b.getDictionaryAttr({
        b.getNamedAttr("id", b.getI64IntegerAttr(c.id)),
        b.getNamedAttr("name", b.getStringAttr(c.name)),
        b.getNamedAttr("num_pages", b.getI64IntegerAttr(c.pages)),
        b.getNamedAttr("page_size", b.getI64IntegerAttr(c.pageSize)),
        b.getNamedAttr("data_format",
                       b.getStringAttr(core::toString(c.format))),
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

namespace {

/// The JSON value of an attribute of the description: the dictionary is
/// program.json's schema in IR form, so its JSON is what core reads.
llvm::json::Value toJson(Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue().str();
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array out;
    for (Attribute e : a)
      out.push_back(toJson(e));
    return out;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object out;
    for (NamedAttribute n : d)
      out[n.getName().getValue()] = toJson(n.getValue());
    return out;
  }
  return nullptr;
}

} // namespace

FailureOr<std::string> writeProgramJson(Operation *program) {
  auto desc = program->getAttrOfType<DictionaryAttr>("ttk.program");
  ::attn::Result<core::TTProgram> description =
      core::readTTProgram(llvm::formatv("{0}", toJson(desc)).str());
  if (!description)
    return program->emitError()
           << "internal error: ttk.program: " << description.message();
  return core::writeTTProgram(*description);
}

} // namespace mlir::attn::tt

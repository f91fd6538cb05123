//===- AttnToTTKernel.cpp - attn ops to TT-Metalium programs -------------===//
//
// Each attn op becomes a program: a nested module carrying the host
// description (`ttk.program`, see ProgramDescription.h) and one function per
// kernel, built by AttentionKernels.cpp and CacheKernels.cpp over the typed
// TT-Metalium calls of TTApi.h. This file reads the static configuration off
// the ops, rejects what the TT kernels cannot do (naming why), and assembles
// the programs.
//
//===----------------------------------------------------------------------===//
#include "lowering/AttnToTT/Passes.h"

#include "dialect/AttnOps.h"
#include "lowering/AttnToTT/TTMetalTarget.h"
#include "lowering/AttnToTT/Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::attn {
#define GEN_PASS_DECL
#define GEN_PASS_DEF_CONVERTATTNTOTTKERNEL
#define GEN_PASS_REGISTRATION
#include "lowering/AttnToTT/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tt;

namespace {

//===----------------------------------------------------------------------===//
// Program modules
//===----------------------------------------------------------------------===//

/// Creates `func.func @name()` marked with its thread kind and returns it;
/// `build` fills its body.
void addKernel(OpBuilder &b, Location loc, StringRef name,
               llvm::function_ref<void()> build) {
  auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType({}, {}));
  fn->setAttr("ttk.thread", b.getStringAttr(name));
  Block *entry = fn.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(entry);
  auto ret = func::ReturnOp::create(b, loc);
  b.setInsertionPoint(ret);
  build();
}

DictionaryAttr programParams(Builder &b, const AttentionConfig &c) {
  return b.getDictionaryAttr({
      b.getNamedAttr("num_heads", b.getI64IntegerAttr(c.numHeads)),
      b.getNamedAttr("num_kv_heads", b.getI64IntegerAttr(c.numKvHeads)),
      b.getNamedAttr("head_size", b.getI64IntegerAttr(c.headSize)),
      b.getNamedAttr("value_size", b.getI64IntegerAttr(c.valueSize)),
      b.getNamedAttr("block_size", b.getI64IntegerAttr(c.blockSize)),
      b.getNamedAttr("kv_parts", b.getI64IntegerAttr(c.kvParts)),
      b.getNamedAttr("kv_lora_rank", b.getI64IntegerAttr(c.kvLoraRank)),
      b.getNamedAttr("key_width", b.getI64IntegerAttr(c.keyWidth)),
      b.getNamedAttr("value_width", b.getI64IntegerAttr(c.valueWidth)),
      b.getNamedAttr("dtype", b.getStringAttr(c.dtypeName())),
      b.getNamedAttr("layout", b.getStringAttr(c.layout)),
      b.getNamedAttr("scale", b.getF64FloatAttr(c.scale)),
      b.getNamedAttr("causal", b.getBoolAttr(c.causal)),
      b.getNamedAttr("window_left", b.getI64IntegerAttr(c.windowLeft)),
      b.getNamedAttr("window_right", b.getI64IntegerAttr(c.windowRight)),
      b.getNamedAttr("soft_cap", b.getF64FloatAttr(c.softCap)),
      b.getNamedAttr("sinks", b.getBoolAttr(c.sinks)),
      b.getNamedAttr("alibi", b.getBoolAttr(c.alibi)),
      b.getNamedAttr("num_kv_splits", b.getI64IntegerAttr(c.numKvSplits)),
      b.getNamedAttr("num_states", b.getI64IntegerAttr(c.numStates)),
  });
}

ModuleOp createProgramModule(OpBuilder &b, Location loc, StringRef name,
                             DictionaryAttr description) {
  auto module = ModuleOp::create(b, loc, name);
  module->setAttr("ttk.program", description);
  return module;
}

/// How a kind of program is made: the op its description names (empty: the
/// config's), its circular buffers, compile-time and runtime arguments, and
/// a builder per kernel thread (no compute kernel for a cache write).
struct ProgramKind {
  StringRef op;
  void (*declareBuffers)(ProgramDescriptionBuilder &, const AttentionConfig &);
  SmallVector<int64_t> (*compileTimeArgs)(const AttentionConfig &);
  ArrayRef<StringRef> runtimeArgs, unitArgs;
  void (*reader)(OpBuilder &, Location, const AttentionConfig &);
  void (*compute)(OpBuilder &, Location, const AttentionConfig &,
                  const ProgramDescriptionBuilder &);
  void (*writer)(OpBuilder &, Location, const AttentionConfig &);
};

const ProgramKind kAttentionProgram = {"",
                                       declareAttentionBuffers,
                                       attentionCompileTimeArgs,
                                       kAttnRuntimeArgs,
                                       kAttnUnitArgs,
                                       buildAttentionReader,
                                       buildAttentionCompute,
                                       buildAttentionWriter};

/// Merges `cfg.numStates` partial states of rows of `cfg.numHeads` heads and
/// `cfg.valueSize` values.
const ProgramKind kMergeProgram = {"merge_states",       declareMergeBuffers,
                                   mergeCompileTimeArgs, kMergeRuntimeArgs,
                                   kMergeUnitArgs,       buildMergeReader,
                                   buildMergeCompute,    buildMergeWriter};

const ProgramKind kCacheProgram = {"",
                                   declareCacheBuffers,
                                   cacheCompileTimeArgs,
                                   kCacheRuntimeArgs,
                                   kCacheUnitArgs,
                                   buildCacheReader,
                                   nullptr,
                                   buildCacheWriter};

/// Builds program `name` of `kind` for `cfg` on a gridX x gridY grid: its
/// description, naming `mergeProgram` (when not empty) as the program that
/// merges its partial states, and its kernels.
void buildProgram(OpBuilder &b, Location loc, StringRef name,
                  const ProgramKind &kind, const AttentionConfig &cfg,
                  int64_t gridX, int64_t gridY, StringRef mergeProgram = "") {
  ProgramDescriptionBuilder desc(b);
  kind.declareBuffers(desc, cfg);
  SmallVector<int64_t> ct = kind.compileTimeArgs(cfg);
  desc.kernel("reader", "reader", "riscv_1", ct);
  if (kind.compute)
    desc.kernel("compute", "compute", "trisc", ct);
  desc.kernel("writer", "writer", "riscv_0", ct);
  StringRef op = kind.op.empty() ? StringRef(cfg.op) : kind.op;
  ModuleOp module = createProgramModule(
      b, loc, name,
      desc.build(name, op, cfg.arch, programParams(b, cfg), gridX, gridY,
                 kind.runtimeArgs, kind.unitArgs, mergeProgram));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  addKernel(b, loc, "reader", [&] { kind.reader(b, loc, cfg); });
  if (kind.compute)
    addKernel(b, loc, "compute", [&] { kind.compute(b, loc, cfg, desc); });
  addKernel(b, loc, "writer", [&] { kind.writer(b, loc, cfg); });
}

//===----------------------------------------------------------------------===//
// Reading the static configuration off the ops
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> staticDims(Operation *op, Value v,
                                           StringRef name,
                                           ArrayRef<unsigned> needed) {
  auto shaped = dyn_cast<ShapedType>(v.getType());
  if (!shaped || !shaped.hasRank())
    return op->emitOpError() << "expects a ranked " << name;
  for (unsigned d : needed)
    if (shaped.isDynamicDim(d))
      return op->emitOpError()
             << "tt lowering needs a static dimension " << d << " of " << name;
  return SmallVector<int64_t>(shaped.getShape());
}

/// bf16, f16 and f32 map to TT-Metalium's Float16_b, Float16 and Float32.
LogicalResult checkElementType(Operation *op, Value v, AttentionConfig &cfg) {
  Type t = cast<ShapedType>(v.getType()).getElementType();
  if (t.isBF16())
    cfg.format = TTDataFormat::Float16_b;
  else if (t.isF16())
    cfg.format = TTDataFormat::Float16;
  else if (t.isF32())
    cfg.format = TTDataFormat::Float32;
  else
    return op->emitOpError()
           << "tt lowering supports bf16, f16 and f32, not " << t;
  return success();
}

/// Block sizes that divide the 32-row tile or are whole tiles; below a face
/// (16 rows) each block's rows are read face by face, so they must fill the
/// architecture's DRAM read alignment.
LogicalResult checkBlockSize(Operation *op, const AttentionConfig &cfg) {
  int64_t bs = cfg.blockSize;
  if (bs <= 0 || (32 % bs != 0 && bs % 32 != 0))
    return op->emitOpError() << "tt lowering needs a block size that divides "
                                "32 or is a multiple of 32, got "
                             << bs;
  if (bs < 16 && (bs * 16 * cfg.esz()) % cfg.arch.dramReadAlignment != 0)
    return op->emitOpError()
           << "tt lowering needs blocks below 16 rows to span a multiple of "
              "the "
           << cfg.arch.dramReadAlignment << "-byte DRAM read alignment of "
           << cfg.arch.name << " per face row group, got " << bs
           << " rows of " << cfg.esz() * 16 << " bytes";
  return success();
}

/// Head sizes are padded to whole tiles on the device; the kernels move rows
/// in pieces of whole 16-byte L1 words.
LogicalResult checkHeadSize(Operation *op, int64_t size) {
  if (size % kRowGranule == 0)
    return success();
  return op->emitOpError()
         << "tt lowering needs head sizes that are multiples of " << kRowGranule
         << " (rows move in pieces of whole 16-byte words), got " << size;
}

LogicalResult checkTileShape(Operation *op, const AttentionConfig &cfg) {
  if (failed(checkHeadSize(op, cfg.headSize)) ||
      failed(checkHeadSize(op, cfg.valueSize)))
    return failure();
  return checkBlockSize(op, cfg);
}

FailureOr<AttentionConfig> configure(PagedAttentionOp op, const TTArch &arch) {
  AttentionConfig cfg;
  cfg.op = "paged_attention";
  cfg.arch = arch;
  auto q = staticDims(op, op.getQuery(), "query", {1, 2});
  bool nhd = op.getLayout() == KVLayout::nhd;
  auto kv = staticDims(op, op.getKvCache(), "kv_cache", {1, 2, 3, 4});
  if (failed(q) || failed(kv) ||
      failed(checkElementType(op, op.getQuery(), cfg)))
    return failure();
  cfg.numHeads = (*q)[1];
  cfg.headSize = cfg.valueSize = (*q)[2];
  cfg.blockSize = nhd ? (*kv)[2] : (*kv)[3];
  cfg.numKvHeads = nhd ? (*kv)[3] : (*kv)[2];
  cfg.layout = nhd ? "nhd" : "hnd";
  cfg.kvParts = 2;
  auto md = op.getMetadata().getDefiningOp<MetadataOp>();
  if (!md)
    return op.emitOpError()
           << "tt lowering needs the metadata from an attn.metadata op";
  cfg.causal = md.getCausal();
  cfg.windowLeft = op.getWindowLeftValue();
  cfg.windowRight = op.getWindowRightValue();
  cfg.softCap = op.getSoftCap().convertToDouble();
  cfg.sinks = bool(op.getSinks());
  cfg.alibi = bool(op.getAlibiSlopes());
  cfg.scale = op.getScale().convertToDouble();
  if (failed(checkTileShape(op, cfg)))
    return failure();
  return cfg;
}

FailureOr<AttentionConfig> configure(MlaDecodeOp op, const TTArch &arch) {
  AttentionConfig cfg;
  cfg.op = "mla_decode";
  cfg.arch = arch;
  auto q = staticDims(op, op.getQ(), "q", {1, 2});
  auto kv = staticDims(op, op.getKvCache(), "kv_cache", {1, 2});
  if (failed(q) || failed(kv) || failed(checkElementType(op, op.getQ(), cfg)))
    return failure();
  cfg.numHeads = (*q)[1];
  cfg.numKvHeads = 1;
  cfg.headSize = (*q)[2];
  cfg.valueSize = op.getKvLoraRank();
  cfg.kvLoraRank = op.getKvLoraRank();
  cfg.blockSize = (*kv)[1];
  cfg.kvParts = 1;
  cfg.causal = false;
  cfg.scale = op.getScale().convertToDouble();
  cfg.numKvSplits = op.getNumKvSplits();
  if (cfg.numKvSplits < 1)
    return op.emitOpError() << "tt lowering needs num_kv_splits >= 1";
  if (failed(checkTileShape(op, cfg)))
    return failure();
  return cfg;
}

FailureOr<AttentionConfig> configure(MergeStatesOp op, const TTArch &arch) {
  AttentionConfig cfg;
  cfg.op = "merge_states";
  cfg.arch = arch;
  auto out = staticDims(op, op.getOutA(), "out_a", {1, 2});
  if (failed(out) || failed(checkElementType(op, op.getOutA(), cfg)))
    return failure();
  cfg.numHeads = (*out)[1];
  cfg.numKvHeads = 1;
  cfg.headSize = cfg.valueSize = (*out)[2];
  cfg.numStates = 2;
  if (failed(checkHeadSize(op, cfg.valueSize)))
    return failure();
  return cfg;
}

FailureOr<AttentionConfig> configure(ReshapeAndCacheOp op, const TTArch &arch) {
  AttentionConfig cfg;
  cfg.op = "reshape_and_cache";
  cfg.arch = arch;
  if (failed(checkElementType(op, op.getKey(), cfg)))
    return failure();
  if (op.isLatentCache()) {
    // MLA: key kv_c [T, L] and value k_pe [T, P] form one row of L + P.
    auto key = staticDims(op, op.getKey(), "key", {1});
    auto value = staticDims(op, op.getValue(), "value", {1});
    auto kv = staticDims(op, op.getKvCache(), "kv_cache", {1, 2});
    if (failed(key) || failed(value) || failed(kv))
      return failure();
    cfg.keyWidth = (*key)[1];
    cfg.valueWidth = (*value)[1];
    cfg.numKvHeads = cfg.numHeads = 1;
    cfg.headSize = cfg.valueSize = (*kv)[2];
    cfg.blockSize = (*kv)[1];
    cfg.kvParts = 1;
    if (cfg.keyWidth % 16 != 0 || cfg.valueWidth % 16 != 0)
      return op.emitOpError()
             << "tt lowering needs the latent and rope widths to be "
                "multiples of 16 (half a tile row), got "
             << cfg.keyWidth << " and " << cfg.valueWidth;
  } else {
    auto key = staticDims(op, op.getKey(), "key", {1, 2});
    bool nhd = *op.getLayout() == KVLayout::nhd;
    auto kv = staticDims(op, op.getKvCache(), "kv_cache", {1, 2, 3, 4});
    if (failed(key) || failed(kv))
      return failure();
    cfg.numKvHeads = cfg.numHeads = (*key)[1];
    cfg.headSize = cfg.valueSize = cfg.keyWidth = cfg.valueWidth = (*key)[2];
    cfg.blockSize = nhd ? (*kv)[2] : (*kv)[3];
    cfg.layout = nhd ? "nhd" : "hnd";
    cfg.kvParts = 2;
  }
  if (failed(checkTileShape(op, cfg)))
    return failure();
  return cfg;
}

struct ConvertAttnToTTKernelPass
    : public mlir::attn::impl::ConvertAttnToTTKernelBase<
          ConvertAttnToTTKernelPass> {
  using ConvertAttnToTTKernelBase::ConvertAttnToTTKernelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<TTArch> target = parseTTArch(arch);
    if (!target) {
      module.emitError() << "unknown TT architecture '" << arch
                         << "' (wormhole_b0 or blackhole)";
      return signalPassFailure();
    }
    if (failed(checkNoFp8Cache(module)))
      return signalPassFailure();
    OpBuilder b(module.getContext());
    SmallVector<func::FuncOp> hosts;
    bool failedAny = false;
    for (auto fn : module.getOps<func::FuncOp>()) {
      SmallVector<Operation *> ops;
      fn.walk([&](Operation *op) {
        if (isa<PagedAttentionOp, MlaDecodeOp, ReshapeAndCacheOp,
                MergeStatesOp>(op))
          ops.push_back(op);
      });
      if (ops.empty())
        continue;
      hosts.push_back(fn);
      for (auto [i, op] : llvm::enumerate(ops)) {
        std::string name = fn.getName().str();
        if (ops.size() > 1)
          name += "_" + std::to_string(i);
        b.setInsertionPointToEnd(module.getBody());
        FailureOr<AttentionConfig> cfg =
            llvm::TypeSwitch<Operation *, FailureOr<AttentionConfig>>(op)
                .Case<PagedAttentionOp, MlaDecodeOp, ReshapeAndCacheOp,
                      MergeStatesOp>(
                    [&](auto typed) { return configure(typed, *target); });
        if (failed(cfg)) {
          failedAny = true;
          continue;
        }
        Location loc = op->getLoc();
        if (isa<ReshapeAndCacheOp>(op)) {
          buildProgram(b, loc, name, kCacheProgram, *cfg, gridX, gridY);
        } else if (isa<MergeStatesOp>(op)) {
          buildProgram(b, loc, name, kMergeProgram, *cfg, gridX, gridY);
        } else {
          // Split-KV decode: the splits' partial states, then their merge.
          std::string mergeName = cfg->numKvSplits > 1 ? name + "_merge" : "";
          buildProgram(b, loc, name, kAttentionProgram, *cfg, gridX, gridY,
                       mergeName);
          if (!mergeName.empty()) {
            AttentionConfig merge = *cfg;
            merge.numStates = cfg->numKvSplits;
            buildProgram(b, loc, mergeName, kMergeProgram, merge, gridX, gridY);
          }
        }
      }
    }
    if (failedAny)
      return signalPassFailure();
    for (func::FuncOp fn : hosts)
      fn.erase();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::attn::createConvertAttnToTTKernelPass() {
  return createConvertAttnToTTKernel();
}

void mlir::attn::registerAttnToTTLoweringPasses() { registerAttnToTTPasses(); }

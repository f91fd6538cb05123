//===- KernelBuilder.h - Shared pieces of attn's GPU kernels ---*- C++ -*-===//
//
// What every kernel builder of convert-attn-to-gpu needs: the pass options,
// the host side of a launch (flattening operands to 1-D buffers, the params
// buffer, gpu.launch_func), the creation of a gpu.func with attn's ABI, and
// an ImplicitLocOpBuilder with the arithmetic the kernels repeat (element
// conversions, bf16 as i16 words, the lanes' share of a head dimension).
// Only the AttnToGPU sources include it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOGPU_KERNELBUILDER_H
#define ATTN_LOWERING_ATTNTOGPU_KERNELBUILDER_H

#include "core/LaunchBounds.h"
#include "lowering/WordsType.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <array>
#include <utility>
#include <string>

namespace mlir {
namespace attn {

/// Where the tiled prefill kernel computes its products (prefill-matrix).
enum class PrefillMatrix {
  None,        ///< SIMT lanes
  SubgroupMma, ///< gpu.subgroup_mma_* (f16 caches)
  Auto,        ///< SubgroupMma where it applies, silently SIMT elsewhere
  Emulate,     ///< the matrix kernel with SIMT products, to test it anywhere
};

/// The options of convert-attn-to-gpu, as the kernel builders read them.
struct LoweringOptions {
  int64_t subgroupSize = 32;
  int64_t workgroupSize = 0;
  int64_t maxWorkgroupMemory = 16384;
  int64_t vectorWidth = 1;
  /// Widest load a lane may issue, in bytes (16 on NVIDIA: 128-bit loads);
  /// 0 keeps every load scalar. See PagedAttention.cpp for how it tiles.
  int64_t vectorLoadBytes = 0;
  /// Subgroups per workgroup of paged_attention, before the workgroup
  /// memory limit lowers it.
  int64_t attentionSubgroups = 4;
  bool bf16AsI16 = false;
  int64_t splitKv = 0;
  /// Values a lane may keep live (lane-registers); tiles are sized by it.
  int64_t laneRegisters = 128;
  /// paged_attention: the tiled prefill kernel beside the per-token one,
  /// and the query length up to which requests are decodes (-1: the
  /// backend's reorder_batch_threshold, else 1).
  bool tiledPrefill = true;
  int64_t decodeThreshold = -1;
  PrefillMatrix prefillMatrix = PrefillMatrix::None;
  /// Workgroup memory of the matrix-unit prefill kernel (0:
  /// maxWorkgroupMemory).
  int64_t matrixWorkgroupMemory = 0;
  /// paged_attention's per-token kernel with whole rows as vectors and a
  /// cache block of keys per softmax update (one invocation per workgroup).
  bool rowVectors = false;
  /// fp8 cache bytes widen through f16 (fp8ToF32): for devices whose f16 to
  /// f32 conversion is one instruction that keeps subnormals (CPUs).
  bool fp8ViaF16 = false;
  /// The fp8 codec as calls of private functions a target pass replaces
  /// (fp8-calls; lowering/KernelModuleAttrs.h).
  bool fp8Calls = false;

  /// Invocations per workgroup of the element-wise kernels.
  int64_t elementwiseWorkgroupSize() const {
    return workgroupSize > 0 ? workgroupSize : subgroupSize;
  }
};

/// Where kernels go and how they are built, shared by one pass run.
struct LoweringContext {
  /// The top-level module: each kernel gets its own gpu.module in it.
  ModuleOp module;
  LoweringOptions options;
};

/// What a kernel argument holds. The host launch passes each argument under
/// its role and the kernel body reads it by role (KernelArgs), so a kernel's
/// argument order (lowering/AttnToGPU/KernelABI.h) and which optional
/// arguments it has are decided once, where the launch adds them.
enum class Arg {
  Query,
  Cache,
  QueryStartLoc,
  SeqLens,
  BlockTable,
  AlibiSlopes,
  Sinks,
  /// An fp8 cache's scales (f32 [1] or [G]): dequantize keys / values.
  KScale,
  VScale,
  NewKey,
  NewValue,
  SlotMapping,
  OutA,
  LseA,
  OutB,
  LseB,
  PartialOut,
  PartialLse,
  Out,
  Lse,
  Params,
  Count,
};

/// Param `k` (a KernelABI.h enum) and grid dimension `d` in launch bounds.
inline ::attn::LaunchQuantity paramOf(int k) {
  return ::attn::LaunchQuantity::param(k);
}
inline ::attn::LaunchQuantity gridOf(int d) {
  return ::attn::LaunchQuantity::grid(d);
}

/// The name of `role` in messages and launch bounds ("query", "kv_cache").
StringRef argName(Arg role);

/// The kernel argument index of each role one launch passes.
class KernelArgs {
public:
  KernelArgs() { index.fill(-1); }
  void set(Arg role, unsigned i) { index[static_cast<size_t>(role)] = i; }
  bool has(Arg role) const { return index[static_cast<size_t>(role)] >= 0; }
  /// `fn`'s argument of `role`; null when the launch passes none.
  Value of(gpu::GPUFuncOp fn, Arg role) const {
    int i = index[static_cast<size_t>(role)];
    return i < 0 ? Value() : fn.getArgument(i);
  }
  /// Where an attention kernel writes its out and lse: the destinations, or
  /// with split-KV the f32 partials.
  std::pair<Value, Value> outputs(gpu::GPUFuncOp fn) const {
    if (has(Arg::Out))
      return {of(fn, Arg::Out), of(fn, Arg::Lse)};
    return {of(fn, Arg::PartialOut), of(fn, Arg::PartialLse)};
  }

private:
  std::array<int, static_cast<size_t>(Arg::Count)> index;
};

/// The arguments of one kernel launch, gathered on the host.
class HostLaunch {
public:
  HostLaunch(OpBuilder &builder, Location loc, const LoweringOptions &options)
      : builder(builder), loc(loc), options(options) {}

  /// Adds `memref` (identity layout) as the kernel argument of `role`,
  /// flattened to 1-D; bf16 becomes i16 words with bf16-as-i16.
  void addBuffer(Arg role, Value memref);
  /// Adds a host-allocated f32 buffer of `numElements` elements (split-KV
  /// partial results) as the kernel argument of `role` and returns it.
  Value addScratch(Arg role, Value numElements);
  /// Adds where an attention kernel writes its rows: the op's `out` and
  /// `lse` (Out, Lse) when it does not split the keys, and returns nulls;
  /// with split-KV, the scratch of the partials for `rows` (a host index)
  /// rows, f32 out [numSplits, rows, numHeads, headDim] and lse
  /// [numSplits, rows, numHeads] (PartialOut, PartialLse), and returns both.
  std::pair<Value, Value> addResults(Value out, Value lse, Value rows,
                                     int64_t numSplits, int64_t numHeads,
                                     int64_t headDim);
  /// Where the kernel finds each role, the params buffer (last) included.
  KernelArgs arguments() const;
  /// Adds field `index` (a KernelABI.h enum: fields go in its order) of the
  /// params buffer, an i32 named `name`.
  void addParam(int index, StringRef name, Value indexValue);

  /// `memref.dim` of a host operand.
  Value dim(Value memref, int64_t i);

  /// The kernel argument types: buffers, then the params buffer.
  SmallVector<Type> getKernelArgTypes() const;
  ArrayRef<std::string> getParamNames() const { return paramNames; }

  /// Bounds (core/LaunchBounds.h): what the kernel's accesses to the
  /// argument of `role` assume of its params and grid, said where the
  /// kernel is built. The argument holds `perProduct` elements times the
  /// product of `of` (params, ::attn::LaunchQuantity::param(k), and grid
  /// dimensions), plus `plus` elements; the product is at least
  /// `minProduct`.
  void bound(Arg role, ArrayRef<::attn::LaunchQuantity> of, int64_t perProduct,
             int64_t plus = 0, int64_t minProduct = 0);
  /// bound() in rows of the argument's operand (its dimension 0; the
  /// others static).
  void boundRows(Arg role, ArrayRef<::attn::LaunchQuantity> of,
                 int64_t plusRows = 0, int64_t minProduct = 0);
  /// `lhs` <= `max`, between params and grid dimensions.
  void boundBy(::attn::LaunchQuantity lhs, ::attn::LaunchQuantity max);
  /// Grid dimension `d` needs no bound: the kernel clamps what it derives
  /// from it.
  void gridChecked(int d) { checkedGrid[d] = true; }

  /// Emits the params buffer and `gpu.launch_func` of `kernel`, and sets
  /// its `attn.bounds` (the JSON of its launch bounds): the relations
  /// declared, plus those launch() derives itself (the params buffer holds
  /// every param, a constant grid dimension is at most its value, an
  /// argument of static shape holds it). Every param, every dynamic grid
  /// dimension (unless gridChecked) and every argument of dynamic shape
  /// must be in a declared relation.
  void launch(gpu::GPUFuncOp kernel, std::array<Value, 3> grid,
              int64_t blockSize);
  /// Deallocates the scratch buffers once the last launch is emitted.
  void releaseScratch();

  OpBuilder &builder;
  Location loc;
  const LoweringOptions &options;

private:
  void push(Arg role, Value buffer);

  /// The bytes of one element of argument `i`, and its operand's type.
  int64_t elementBytes(unsigned i) const;
  int64_t indexOf(Arg role) const;
  /// The relations launch() adds and the check that every size is bound.
  void completeBounds(std::array<Value, 3> grid);

  SmallVector<Value> buffers;
  /// Each buffer's operand type (before flattening) and role.
  SmallVector<MemRefType> operandTypes;
  SmallVector<Arg> roles;
  ::attn::LaunchBounds bounds;
  std::array<bool, 3> checkedGrid = {false, false, false};
  KernelArgs args;
  SmallVector<Value> scratch;
  SmallVector<std::string> paramNames;
  SmallVector<Value> paramValues;
};

/// Creates a `gpu.module` holding one empty kernel `gpu.func`, both named
/// `name` (made unique in `module`), with `argTypes`, `known_block_size` =
/// [blockSize, 1, 1], the `attn.params` names and the `attn.op` it comes
/// from, and returns the kernel; its body holds only the terminator. One
/// module per kernel makes every target's binary one kernel.
gpu::GPUFuncOp createKernel(ModuleOp module, Location loc,
                            StringRef name, ArrayRef<Type> argTypes,
                            int64_t blockSize, ArrayRef<std::string> params,
                            StringRef opName);

/// With fp8-calls: defines, in each gpu.module of `module`, the fp8 codec
/// functions its kernels call (KernelBuilder::callFp8Codec), private and
/// marked as lowering/KernelModuleAttrs.h says, with the codec of `options`
/// without fp8Calls as their bodies.
void defineFp8Codecs(ModuleOp module, const LoweringOptions &options);

/// Adds a workgroup-memory buffer of `numElements` elements of `element`
/// (f32 unless given) to `kernel` (a workgroup attribution) and returns it.
Value addWorkgroupBuffer(gpu::GPUFuncOp kernel, int64_t numElements,
                         Type element = Type());


/// The element type a kernel sees for a host element type: bf16 as i16
/// words with bf16-as-i16, an fp8 type as i8 bytes (no target here has fp8
/// types; KernelBuilder decodes and encodes them).
Type getKernelElementType(Type hostElementType, const LoweringOptions &options);

/// `hostElementType` when it is an fp8 type (f8E4M3FN, f8E5M2), else null:
/// what the i8 bytes of a kernel's fp8 buffer hold.
Type getFp8Format(Type hostElementType);

/// A lane's share of a contiguous vector of `dim` elements: chunks of
/// `vectorWidth` elements dealt round-robin to `lanes` lanes (a subgroup or
/// an aligned part of one), so lane l owns elements
/// ((i / w) * lanes + l) * w + i % w for i < perLane(). With `vectorLoads`
/// each chunk is read by one vector load aligned to its size, which needs
/// `vectorWidth` to divide `dim` and the buffers to be aligned to a chunk.
struct LaneLayout {
  int64_t dim;
  int64_t lanes;
  int64_t vectorWidth;
  bool vectorLoads = false;

  int64_t perLane() const {
    int64_t chunk = lanes * vectorWidth;
    return (dim + chunk - 1) / chunk * vectorWidth;
  }
  /// Whether some lane's element i lies past `dim` (lanes mask such slots):
  /// only in the last round of chunks, and only when the row does not fill
  /// it.
  bool needsMask(int64_t i) const {
    return (i / vectorWidth + 1) * lanes * vectorWidth > dim;
  }
  /// The offset of element i of the lane whose first element is `laneBase`.
  int64_t offset(int64_t i) const {
    return (i / vectorWidth) * lanes * vectorWidth + i % vectorWidth;
  }
};

/// How wide a lane's chunks of a row are: with `vector-load-bytes` and
/// 8-, 16- or 32-bit elements, as many elements as one such load holds
/// (vector loads); else
/// `vector-width` (scalar loads). Either way the widest power of two not
/// above that which divides `dim`, so that chunks never straddle rows.
struct LaneChunks {
  int64_t width = 1;
  bool vectorLoads = false;
};
LaneChunks chooseLaneChunks(const LoweringOptions &options, Type element,
                            int64_t dim);

/// Fast-math flags of the row-vectors kernels' dot products and sums: they
/// may be reassociated (a tree instead of a chain) and contracted into FMAs.
inline arith::FastMathFlags dotFlags() {
  return arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;
}

/// The cache line of the CPUs the row-vectors kernels are for (x86-64 and
/// AArch64 cores), in bytes: the stride of their prefetches.
constexpr int64_t kCacheLineBytes = 64;

/// An ImplicitLocOpBuilder with the arithmetic the kernels repeat. Index
/// math is on `index`; values are computed in f32.
class KernelBuilder : public ImplicitLocOpBuilder {
public:
  KernelBuilder(Location loc, OpBuilder &b, const LoweringOptions &options)
      : ImplicitLocOpBuilder(loc, b), options(options) {}

  Value idx(int64_t v) { return create<arith::ConstantIndexOp>(v); }
  Value f32(double v) {
    return create<arith::ConstantOp>(getF32FloatAttr(static_cast<float>(v)));
  }
  Value addi(Value a, Value b) { return create<arith::AddIOp>(a, b); }
  Value subi(Value a, Value b) { return create<arith::SubIOp>(a, b); }
  Value muli(Value a, Value b) { return create<arith::MulIOp>(a, b); }
  Value divui(Value a, Value b) { return create<arith::DivUIOp>(a, b); }
  Value remui(Value a, Value b) { return create<arith::RemUIOp>(a, b); }
  Value minsi(Value a, Value b) { return create<arith::MinSIOp>(a, b); }
  Value maxsi(Value a, Value b) { return create<arith::MaxSIOp>(a, b); }
  Value cmpi(arith::CmpIPredicate p, Value a, Value b) {
    return create<arith::CmpIOp>(p, a, b);
  }
  Value select(Value c, Value a, Value b) {
    return create<arith::SelectOp>(c, a, b);
  }
  Value addf(Value a, Value b) { return create<arith::AddFOp>(a, b); }
  Value subf(Value a, Value b) { return create<arith::SubFOp>(a, b); }
  Value mulf(Value a, Value b) { return create<arith::MulFOp>(a, b); }
  Value divf(Value a, Value b) { return create<arith::DivFOp>(a, b); }
  /// max, NaN if either is NaN.
  Value maxf(Value a, Value b) { return create<arith::MaximumFOp>(a, b); }
  /// max, the other operand if one is NaN: one instruction on most targets.
  Value maxnumf(Value a, Value b) { return create<arith::MaxNumFOp>(a, b); }
  /// The maxnumf of a 1-D vector's elements (NaNs left out; NaN only when
  /// all are), as a tree of halves: log2(n) vector maxnumf ops. The
  /// `vector.reduction <maxnumf>` LLVM lowering keeps a serial chain of n - 1
  /// scalar steps, each several instructions for its NaN rule.
  Value maxnumReduce(Value vector);
  /// a * b + c, rounded once.
  Value fma(Value a, Value b, Value c);
  /// tanh of an f32 to a few ulp on every target: an odd polynomial near 0,
  /// (1 - e^-2|x|) / (1 + e^-2|x|) with the sign of x elsewhere. Vulkan
  /// lets a device's tanh err far more (lavapipe's is off by about 1e-4
  /// relative), which a soft cap multiplies into every score.
  Value tanhF32(Value x);
  /// ceil(a / b) for non-negative a and positive b.
  Value ceilDiv(Value a, Value b) {
    return divui(addi(a, subi(b, idx(1))), b);
  }

  /// Loads element `i` of an i32 or i64 buffer as an index.
  Value loadIndex(Value buffer, Value i);
  /// The fp8 scale of kv head `g` from `scales` (f32, `count` = 1: one for
  /// all heads, else one per head); null when `scales` is.
  Value loadScale(Value scales, int64_t count, Value g);
  /// Loads element `i` of a float buffer (f32, f16, bf16 or bf16 as i16, or
  /// fp8 bytes of `fp8Format`) and extends it to f32.
  Value loadF32(Value buffer, Value i, Type fp8Format = Type());
  /// Extends a loaded element (f32, f16, bf16 or bf16 as i16, or an i8 byte
  /// of `fp8Format`), or a vector of them, to f32.
  Value toF32(Value element, Type fp8Format = Type());
  /// The f32 value of fp8 byte `byte` (i8, or a vector of them: then
  /// element-wise) of `format`, exactly: NaN stays NaN and e5m2's
  /// infinities stay infinite. With integer operations only (subnormals
  /// included, which a device may flush in float arithmetic), or with
  /// options.fp8ViaF16 through fp8ViaF16ToF32; with options.fp8Calls, a
  /// call of that codec (callFp8Codec).
  Value fp8ToF32(Value byte, Type format);
  /// `element`, or a vector of it shaped as `like` when that is a vector.
  Type shapedLike(Value like, Type element);
  /// `scalar`, broadcast to the shape of `like` when that is a vector.
  Value splatLike(Value like, Value scalar);
  /// The fp8 byte (i8) of `format` nearest the f32 quotient `x / scale` (f32,
  /// `scale` > 0): the division rounds to f32 first, then to nearest even,
  /// saturated to the largest finite value (infinities too); NaN stays NaN.
  /// vLLM's cache write and the reference's (core/DType.h) bit for bit.
  Value quantizeFp8(Value x, Value scale, Type format);
  /// The fp8 byte (i8) of `format` nearest `q` (f32), as quantizeFp8 rounds
  /// its quotient; with options.fp8Calls, a call of that codec.
  Value f32ToFp8(Value q, Type format);
  /// The f32 values of the elements of type `element` packed in `words` (as
  /// getWordsType makes them), lowest address first. `element` is the host
  /// type: f32, f16, bf16 (or i16 words of bf16) or fp8.
  SmallVector<Value> unpackWords(Value words, Type element);
  /// Reads `bytes` bytes (4, 8, 16 or 32) of `buffer` starting at element `i`
  /// with one vector load aligned to its size, as 32-bit words
  /// (getWordsType). `i` must be a multiple of the elements it reads.
  Value loadWords(Value buffer, Value i, int64_t bytes);
  /// Rounds `value` (f32, or a vector of f32: then stored from `i` on) to
  /// the element type of `buffer` (to nearest even) and stores it at `i`.
  void storeF32(Value value, Value buffer, Value i);
  /// Asks the memory system for elements [start, start + count) of
  /// `buffer`, one prefetch per cache line, ahead of their loads.
  void prefetchLines(Value buffer, Value start, int64_t count);

  /// The lane's elements of the row of `layout.dim` values that starts at
  /// `rowBase` of `buffer`, in f32, scaled by `scale` when given. Slots past
  /// the row read 0. An i8 buffer holds fp8 bytes of `fp8Format`.
  SmallVector<Value> loadLaneRow(Value buffer, Value rowBase, Value laneBase,
                                 const LaneLayout &layout,
                                 Value scale = nullptr,
                                 Type fp8Format = Type());
  /// loadLaneRow with one vector load per chunk (`layout.vectorLoads`).
  SmallVector<Value> loadLaneRowVectors(Value buffer, Value rowBase,
                                        Value laneBase,
                                        const LaneLayout &layout, Value scale,
                                        Type fp8Format);
  /// The index in its row of the lane's element `i`, from `laneBase`; where
  /// the layout pads past the row, clamped to `last` with `inRow` set to
  /// whether it was inside.
  Value laneElement(Value laneBase, const LaneLayout &layout, int64_t i,
                    int64_t last, Value &inRow);
  /// A loaded `v` scaled by `scale` and zeroed outside the row (`inRow`),
  /// each when given.
  Value scaleInRow(Value v, Value scale, Value inRow);
  /// Stores the lane's `values` of a row; slots past the row are skipped.
  void storeLaneRow(ArrayRef<Value> values, Value buffer, Value rowBase,
                    Value laneBase, const LaneLayout &layout);

  /// The lane-local partial dot products of every row of `rows` with `key`
  /// (same lane share), element-major with the rows inside, so each key
  /// element is read once for all rows.
  SmallVector<Value> partialDots(ArrayRef<SmallVector<Value>> rows,
                                 ArrayRef<Value> key);
  /// A subgroup-wide sum: every lane gets the total.
  Value subgroupSum(Value v);
  /// The value of `v` in lane `lane ^ mask` of the subgroup.
  Value shuffleXor(Value v, int64_t mask);
  /// The sum over the aligned group of `lanes` lanes (a power of two that
  /// divides the subgroup size) a lane belongs to, by butterfly shuffles;
  /// every lane of the group gets it.
  Value clusterSum(Value v, int64_t lanes);

  const LoweringOptions &options;

private:
  /// fp8ToF32 through f16: the byte's fields moved into an f16's (e5m2 is
  /// an f16's high byte; e4m3's exponent is rebiased by a factor 2^8 after
  /// the conversion), then one f16 to f32 conversion.
  Value fp8ViaF16ToF32(Value byte, Type format);
  /// `arg` through a call of the fp8 codec function that `marker`
  /// (kFp8ToF32Attr or kF32ToFp8Attr), `format` and the type of `arg`
  /// name; the call carries `marker` = `format` until defineFp8Codecs
  /// defines its callee (a kernel body may be built before it is in its
  /// gpu.module).
  Value callFp8Codec(StringRef marker, Type format, Value arg,
                     Type resultType);
};

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_ATTNTOGPU_KERNELBUILDER_H

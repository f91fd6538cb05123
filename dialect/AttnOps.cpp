//===- AttnOps.cpp - attn operations: verifiers and interfaces -----------===//
//
// Verifiers enforce every rule that can be checked without running the op:
// ranks, static dimensions that must agree, element types, attribute ranges
// and the rules of the backend descriptor. Rules that depend on the metadata
// values (query_start_loc, seq_lens, block tables, slots) are checked by the
// reference and the runtime when the op runs.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "dialect/Limits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Verification helpers
//===----------------------------------------------------------------------===//

namespace {

/// A shaped operand, named as in the op's syntax for diagnostics.
struct Named {
  StringRef name;
  ShapedType type;

  int64_t dim(int64_t i) const { return type.getDimSize(i); }
  bool isStatic(int64_t i) const { return !type.isDynamicDim(i); }
};

bool isActivationType(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

bool isFp8CacheType(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }

/// Checks that `v` has rank `rank` and returns it as a named shaped value.
FailureOr<Named> getRanked(Operation *op, StringRef name, Value v,
                           int64_t rank) {
  auto type = cast<ShapedType>(v.getType());
  if (type.getRank() != rank)
    return op->emitOpError() << "expects " << name << " to have rank " << rank
                             << ", got " << type;
  return Named{name, type};
}

/// Like getRanked, and the element type must be f32, f16 or bf16.
FailureOr<Named> getActivation(Operation *op, StringRef name, Value v,
                               int64_t rank) {
  FailureOr<Named> n = getRanked(op, name, v, rank);
  if (failed(n))
    return failure();
  if (!isActivationType(n->type.getElementType()))
    return op->emitOpError()
           << "expects " << name << " element type to be f32, f16 or bf16, got "
           << n->type.getElementType();
  return n;
}

/// Like getRanked, and the element type must be the integer of `width` bits.
FailureOr<Named> getIndexTensor(Operation *op, StringRef name, Value v,
                                int64_t rank, unsigned width) {
  FailureOr<Named> n = getRanked(op, name, v, rank);
  if (failed(n))
    return failure();
  if (!n->type.getElementType().isSignlessInteger(width))
    return op->emitOpError() << "expects " << name << " element type to be i"
                             << width << ", got " << n->type.getElementType();
  return n;
}

LogicalResult expectElementType(Operation *op, const Named &n, Type expected,
                                StringRef because) {
  if (n.type.getElementType() == expected)
    return success();
  return op->emitOpError() << "expects " << n.name << " element type to be "
                           << expected << " " << because << ", got "
                           << n.type.getElementType();
}

/// A cache's element type: the model dtype `expected` (`because` says
/// whose it is) or an fp8 type.
LogicalResult expectCacheElementType(Operation *op, const Named &cache,
                                     Type expected, StringRef because) {
  Type got = cache.type.getElementType();
  if (got == expected || isFp8CacheType(got))
    return success();
  return op->emitOpError() << "expects " << cache.name << " element type to be "
                           << expected << " " << because
                           << " or fp8 (f8E4M3FN, f8E5M2), got " << got;
}

/// The scales of a cache. An fp8 cache needs k_scale and, unless it is an
/// MLA latent cache (one scale), v_scale: f32 [1] (per layer) or
/// [num_kv_heads]. Any other cache takes none.
LogicalResult verifyCacheScales(Operation *op, const Named &cache,
                                Value kScale, Value vScale,
                                int64_t numKvHeads, bool latent) {
  Type element = cache.type.getElementType();
  if (!isFp8CacheType(element)) {
    if (kScale || vScale)
      return op->emitOpError()
             << "expects no k_scale or v_scale with a " << element
             << " kv_cache (scales are for fp8 caches)";
    return success();
  }
  if (latent && vScale)
    return op->emitOpError()
           << "expects no v_scale with an MLA latent cache (one scale, "
              "k_scale)";
  if (!kScale || (!latent && !vScale))
    return op->emitOpError() << "expects " << (latent ? "k_scale" : "k_scale "
                                                        "and v_scale")
                             << " with an fp8 kv_cache (" << element << ")";
  for (auto [name, scale] :
       {std::pair<StringRef, Value>{"k_scale", kScale}, {"v_scale", vScale}}) {
    if (!scale)
      continue;
    FailureOr<Named> n = getRanked(op, name, scale, 1);
    if (failed(n) ||
        failed(expectElementType(op, *n, Float32Type::get(op->getContext()),
                                 "(scales are f32)")))
      return failure();
    if (n->isStatic(0) && n->dim(0) != 1 &&
        (ShapedType::isDynamic(numKvHeads) || n->dim(0) != numKvHeads))
      return op->emitOpError()
             << "expects " << name << " to have 1 element (per layer)"
             << (latent ? "" : " or num_kv_heads (per kv head)") << ", got "
             << n->dim(0);
  }
  return success();
}

/// Static dimensions `a[i]` and `b[j]` must agree where both are known.
LogicalResult expectSameDim(Operation *op, const Named &a, int64_t i,
                            const Named &b, int64_t j, StringRef what) {
  if (!a.isStatic(i) || !b.isStatic(j) || a.dim(i) == b.dim(j))
    return success();
  return op->emitOpError() << "expects " << a.name << " and " << b.name
                           << " to agree on " << what << ", got " << a.dim(i)
                           << " and " << b.dim(j);
}

/// A static dimension must equal `value` when known.
LogicalResult expectDimEquals(Operation *op, const Named &n, int64_t i,
                              int64_t value, StringRef what) {
  if (!n.isStatic(i) || n.dim(i) == value)
    return success();
  return op->emitOpError() << "expects " << n.name << " dimension " << i
                           << " (" << what << ") to be " << value << ", got "
                           << n.dim(i);
}

/// A static size in [1, max]. Zero sizes leave kernels nothing to divide by
/// (a head size of 0 once crashed the lowering) and sizes past the limits of
/// dialect/Limits.h overflow the kernels' 32-bit indices. Dynamic sizes are
/// checked when the op runs.
LogicalResult expectSize(Operation *op, StringRef what, int64_t size,
                         int64_t max) {
  if (ShapedType::isDynamic(size))
    return success();
  if (size < 1)
    return op->emitOpError() << "expects " << what << " >= 1, got " << size;
  if (size > max)
    return op->emitOpError() << "expects " << what << " <= " << max
                             << " (dialect/Limits.h), got " << size;
  return success();
}

/// A softmax scale: finite and positive.
LogicalResult expectScale(Operation *op, APFloat scale) {
  float v = scale.convertToFloat();
  if (!(v > 0.0f) || !std::isfinite(v))
    return op->emitOpError() << "expects a finite scale > 0, got " << v;
  return success();
}

/// Every shaped operand is a tensor, or every one is a memref. (For
/// destination-style ops, the interface's verifier ties results to tensor
/// destinations, so ops on memrefs have no results.)
LogicalResult verifyTensorOrMemRefSemantics(Operation *op) {
  bool anyTensor = false, anyMemRef = false;
  for (Type t : op->getOperandTypes()) {
    anyTensor |= isa<RankedTensorType>(t);
    anyMemRef |= isa<MemRefType>(t);
  }
  if (anyTensor && anyMemRef)
    return op->emitOpError()
           << "expects operands to be all tensors or all memrefs";
  return success();
}

/// The dimensions of a paged KV cache, by layout.
struct CacheDims {
  int64_t blockSize;
  int64_t numKvHeads;
  int64_t headSize;
};

FailureOr<CacheDims> getPagedCache(Operation *op, const Named &cache,
                                   KVLayout layout) {
  if (cache.isStatic(1) && cache.dim(1) != 2)
    return op->emitOpError() << "expects " << cache.name
                             << " dimension 1 to be 2 (keys, values), got "
                             << cache.dim(1);
  bool nhd = layout == KVLayout::nhd;
  return CacheDims{cache.dim(nhd ? 2 : 3), cache.dim(nhd ? 3 : 2),
                   cache.dim(4)};
}

/// Rules a backend descriptor imposes on an op's cache and shapes.
LogicalResult verifyBackend(Operation *op, BackendAttr backend,
                            std::optional<KVLayout> layout, int64_t blockSize,
                            int64_t headSize) {
  if (!backend)
    return success();
  StringRef name = backend.getName();
  if (layout && backend.getLayout() != *layout)
    return op->emitOpError()
           << "expects layout " << stringifyKVLayout(*layout)
           << " to match the layout of backend " << name << " ("
           << stringifyKVLayout(backend.getLayout()) << ")";
  if (!ShapedType::isDynamic(blockSize)) {
    if (backend.requiresBlockMultipleOf16() && blockSize % 16 != 0)
      return op->emitOpError() << "expects block size " << blockSize
                               << " to be a multiple of 16, as backend "
                               << name << " requires";
    if (blockSize % backend.getBlockSizeMultiple() != 0)
      return op->emitOpError()
             << "expects block size " << blockSize << " to be a multiple of "
             << backend.getBlockSizeMultiple() << " (backend " << name
             << " block_size_multiple)";
  }
  ArrayRef<int64_t> headSizes = backend.getHeadSizes();
  if (!ShapedType::isDynamic(headSize) && !headSizes.empty() &&
      !llvm::is_contained(headSizes, headSize))
    return op->emitOpError() << "expects head size " << headSize
                             << " to be one of the head sizes of backend "
                             << name;
  return success();
}

/// Memory effects of a destination-style op on memrefs: inputs are read,
/// destinations are written (and read, for in-place updates).
void addDpsEffects(
    Operation *op, DestinationStyleOpInterface dps, bool readsInits,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (!dps.isDpsInit(&operand) || readsInits)
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
    if (dps.isDpsInit(&operand))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

/// The destinations of an attention op: `outInit` and the lse_init after it.
MutableOperandRange getOutAndLse(OpOperand &outInit) {
  return MutableOperandRange(outInit.getOwner(), outInit.getOperandNumber(),
                             /*length=*/2);
}

/// Verifies an attention op's log-sum-exp operand `name`: [rows, heads] f32,
/// with the rows and heads of `rows` (an input or output of the op), where
/// `rowsWhat` says what a row is.
LogicalResult verifyLse(Operation *op, StringRef name, Value lse,
                        const Named &rows, StringRef rowsWhat) {
  FailureOr<Named> n = getRanked(op, name, lse, 2);
  Type f32 = Float32Type::get(op->getContext());
  if (failed(n) ||
      failed(expectElementType(op, *n, f32, "(log-sum-exp is always f32)")))
    return failure();
  if (failed(expectSameDim(op, rows, 0, *n, 0, rowsWhat)) ||
      failed(expectSameDim(op, rows, 1, *n, 1, "the number of heads")))
    return failure();
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Custom assembly: `layout(nhd)`
//===----------------------------------------------------------------------===//

static ParseResult parseLayout(OpAsmParser &parser, KVLayoutAttr &attr) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<KVLayout> layout = symbolizeKVLayout(keyword);
  if (!layout)
    return parser.emitError(loc)
           << "expected kv cache layout 'nhd' or 'hnd', got '" << keyword
           << "'";
  attr = KVLayoutAttr::get(parser.getContext(), *layout);
  return success();
}

static void printLayout(OpAsmPrinter &printer, Operation *,
                        KVLayoutAttr attr) {
  printer << stringifyKVLayout(attr.getValue());
}

//===----------------------------------------------------------------------===//
// MetadataOp
//===----------------------------------------------------------------------===//

LogicalResult MetadataOp::verify() {
  Operation *op = getOperation();
  FailureOr<Named> qsl =
      getIndexTensor(op, "query_start_loc", getQueryStartLoc(), 1, 32);
  if (failed(qsl))
    return failure();
  FailureOr<Named> lens = getIndexTensor(op, "seq_lens", getSeqLens(), 1, 32);
  if (failed(lens))
    return failure();
  FailureOr<Named> table =
      getIndexTensor(op, "block_table", getBlockTable(), 2, 32);
  if (failed(table))
    return failure();
  if (Value slots = getSlotMapping())
    if (failed(getIndexTensor(op, "slot_mapping", slots, 1, 64)))
      return failure();
  if (failed(verifyTensorOrMemRefSemantics(op)))
    return failure();

  if (qsl->isStatic(0) && lens->isStatic(0) && qsl->dim(0) != lens->dim(0) + 1)
    return emitOpError() << "expects query_start_loc to have one more entry "
                            "than seq_lens, got "
                         << qsl->dim(0) << " and " << lens->dim(0);
  return expectSameDim(op, *table, 0, *lens, 0, "the number of requests");
}

//===----------------------------------------------------------------------===//
// PagedAttentionOp
//===----------------------------------------------------------------------===//

MutableOperandRange PagedAttentionOp::getDpsInitsMutable() {
  return getOutAndLse(getOutInitMutable());
}

/// Shared by paged attention's ALiBi slopes and sinks: [num_heads] f32.
static LogicalResult verifyPerHead(Operation *op, StringRef name, Value v,
                                   const Named &query) {
  if (!v)
    return success();
  FailureOr<Named> n = getRanked(op, name, v, 1);
  if (failed(n))
    return failure();
  Type f32 = Float32Type::get(op->getContext());
  if (failed(expectElementType(op, *n, f32, "(one value per query head)")))
    return failure();
  return expectSameDim(op, *n, 0, query, 1, "the number of query heads");
}

LogicalResult PagedAttentionOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyTensorOrMemRefSemantics(op)))
    return failure();
  FailureOr<Named> query = getActivation(op, "query", getQuery(), 3);
  if (failed(query))
    return failure();
  FailureOr<Named> cache = getRanked(op, "kv_cache", getKvCache(), 5);
  if (failed(cache))
    return failure();
  Type elementType = query->type.getElementType();
  if (failed(expectCacheElementType(op, *cache, elementType, "(the query's)")))
    return failure();
  FailureOr<CacheDims> dims = getPagedCache(op, *cache, getLayout());
  if (failed(dims) ||
      failed(verifyCacheScales(op, *cache, getKScale(), getVScale(),
                               dims->numKvHeads, /*latent=*/false)))
    return failure();

  int64_t numHeads = query->dim(1), headSize = query->dim(2);
  if (failed(expectSize(op, "num_heads", numHeads, kMaxHeads)) ||
      failed(expectSize(op, "num_kv_heads", dims->numKvHeads, kMaxHeads)) ||
      failed(expectSize(op, "head size", headSize, kMaxHeadSize)) ||
      failed(expectSize(op, "block size", dims->blockSize, kMaxBlockSize)))
    return failure();
  if (!ShapedType::isDynamic(numHeads) &&
      !ShapedType::isDynamic(dims->numKvHeads) &&
      (dims->numKvHeads == 0 || numHeads % dims->numKvHeads != 0))
    return emitOpError() << "expects num_heads (" << numHeads
                         << ") to be a multiple of num_kv_heads ("
                         << dims->numKvHeads << ")";
  if (!ShapedType::isDynamic(headSize) &&
      !ShapedType::isDynamic(dims->headSize) && headSize != dims->headSize)
    return emitOpError() << "expects kv_cache head size (" << dims->headSize
                         << ") to equal query head size (" << headSize << ")";

  FailureOr<Named> out = getRanked(op, "out_init", getOutInit(), 3);
  if (failed(out) ||
      failed(expectElementType(op, *out, elementType, "(the query's)")))
    return failure();
  for (int64_t i = 0; i < 3; ++i)
    if (failed(expectSameDim(op, *query, i, *out, i, "the output shape")))
      return failure();
  if (failed(verifyLse(op, "lse_init", getLseInit(), *query,
                       "the number of tokens")))
    return failure();

  if (failed(verifyPerHead(op, "alibi_slopes", getAlibiSlopes(), *query)) ||
      failed(verifyPerHead(op, "sinks", getSinks(), *query)))
    return failure();

  if (failed(expectScale(op, getScale())))
    return failure();
  for (auto [name, window] :
       {std::pair<StringRef, int64_t>{"window_left", getWindowLeftValue()},
        {"window_right", getWindowRightValue()}}) {
    if (window < -1)
      return emitOpError() << "expects " << name
                           << " >= -1 (-1: unbounded), got " << window;
    if (window > kMaxWindow)
      return emitOpError() << "expects " << name << " <= " << kMaxWindow
                           << " (positions are i32), got " << window;
  }
  float softCap = getSoftCap().convertToFloat();
  if (!(softCap >= 0.0f) || !std::isfinite(softCap))
    return emitOpError() << "expects a finite soft_cap >= 0 (0: no cap), got "
                         << softCap;

  if (std::optional<BackendAttr> backend = getBackend()) {
    if (backend->isMla()) {
      if (!ShapedType::isDynamic(dims->numKvHeads) && dims->numKvHeads != 1)
        return emitOpError() << "expects one kv head for MLA backend "
                             << backend->getName() << ", got "
                             << dims->numKvHeads;
      if (getWindowLeftValue() >= 0 || getWindowRightValue() >= 0)
        return emitOpError() << "expects no sliding window for MLA backend "
                             << backend->getName();
    }
    return verifyBackend(op, *backend, getLayout(), dims->blockSize,
                         headSize);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeAndCacheOp
//===----------------------------------------------------------------------===//

/// The MLA form: key = kv_c [T, L], value = k_pe [T, P], one latent row
/// [L + P] per slot of a [num_blocks, B, L + P] cache.
static LogicalResult verifyLatentCacheWrite(ReshapeAndCacheOp op) {
  Operation *operation = op.getOperation();
  if (op.getLayout())
    return op.emitOpError()
           << "expects no layout with an MLA latent cache (rank-3 kv_cache)";
  FailureOr<Named> key = getActivation(operation, "key", op.getKey(), 2);
  if (failed(key))
    return failure();
  Type elementType = key->type.getElementType();
  FailureOr<Named> value = getRanked(operation, "value", op.getValue(), 2);
  if (failed(value) ||
      failed(expectElementType(operation, *value, elementType,
                               "(the key's)")) ||
      failed(expectSameDim(operation, *key, 0, *value, 0,
                           "the number of tokens")))
    return failure();
  FailureOr<Named> slots =
      getIndexTensor(operation, "slot_mapping", op.getSlotMapping(), 1, 64);
  if (failed(slots) || failed(expectSameDim(operation, *key, 0, *slots, 0,
                                            "the number of tokens")))
    return failure();
  FailureOr<Named> cache = getRanked(operation, "kv_cache", op.getKvCache(), 3);
  if (failed(cache) ||
      failed(expectCacheElementType(operation, *cache, elementType,
                                    "(the key's)")) ||
      failed(verifyCacheScales(operation, *cache, op.getKScale(),
                               op.getVScale(), 1, /*latent=*/true)))
    return failure();
  if (failed(expectSize(operation, "kv_lora_rank (key size)", key->dim(1),
                        kMaxHeadSize)) ||
      failed(expectSize(operation, "rope dim (value size)", value->dim(1),
                        kMaxHeadSize)) ||
      failed(expectSize(operation, "latent row size", cache->dim(2),
                        kMaxHeadSize)) ||
      failed(expectSize(operation, "block size", cache->dim(1),
                        kMaxBlockSize)))
    return failure();
  if (key->isStatic(1) && value->isStatic(1) &&
      failed(expectDimEquals(operation, *cache, 2, key->dim(1) + value->dim(1),
                             "the latent row: key size + value size")))
    return failure();
  if (std::optional<BackendAttr> backend = op.getBackend()) {
    if (!backend->isMla())
      return op.emitOpError()
             << "expects an MLA backend with a latent cache, got "
             << backend->getName();
    return verifyBackend(operation, *backend, std::nullopt, cache->dim(1),
                         cache->dim(2));
  }
  return success();
}

LogicalResult ReshapeAndCacheOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyTensorOrMemRefSemantics(op)))
    return failure();
  auto cacheType = cast<ShapedType>(getKvCache().getType());
  if (cacheType.getRank() == 3)
    return verifyLatentCacheWrite(*this);
  if (cacheType.getRank() != 5)
    return emitOpError() << "expects kv_cache to have rank 5 (paged) or 3 "
                            "(MLA latent cache), got "
                         << cacheType;
  std::optional<KVLayout> layout = getLayout();
  if (!layout)
    return emitOpError()
           << "expects a layout (nhd or hnd) with a paged (rank-5) kv_cache";
  FailureOr<Named> key = getActivation(op, "key", getKey(), 3);
  if (failed(key))
    return failure();
  if (getValue().getType() != getKey().getType())
    return emitOpError() << "expects value type " << getValue().getType()
                         << " to equal key type " << getKey().getType();
  FailureOr<Named> slots =
      getIndexTensor(op, "slot_mapping", getSlotMapping(), 1, 64);
  if (failed(slots) ||
      failed(expectSameDim(op, *key, 0, *slots, 0, "the number of tokens")))
    return failure();
  FailureOr<Named> cache = getRanked(op, "kv_cache", getKvCache(), 5);
  if (failed(cache) || failed(expectCacheElementType(op, *cache,
                                                     key->type.getElementType(),
                                                     "(the key's)")))
    return failure();
  FailureOr<CacheDims> dims = getPagedCache(op, *cache, *layout);
  if (failed(dims) ||
      failed(verifyCacheScales(op, *cache, getKScale(), getVScale(),
                               dims->numKvHeads, /*latent=*/false)))
    return failure();
  if (failed(expectSize(op, "num_kv_heads", key->dim(1), kMaxHeads)) ||
      failed(expectSize(op, "head size", key->dim(2), kMaxHeadSize)) ||
      failed(expectSize(op, "block size", dims->blockSize, kMaxBlockSize)))
    return failure();
  Named cacheView = *cache;
  bool nhd = *layout == KVLayout::nhd;
  if (failed(expectSameDim(op, *key, 1, cacheView, nhd ? 3 : 2,
                           "the number of kv heads")) ||
      failed(expectSameDim(op, *key, 2, cacheView, 4, "the head size")))
    return failure();
  if (std::optional<BackendAttr> backend = getBackend())
    return verifyBackend(op, *backend, *layout, dims->blockSize,
                         key->dim(2));
  return success();
}

//===----------------------------------------------------------------------===//
// MlaDecodeOp
//===----------------------------------------------------------------------===//

MutableOperandRange MlaDecodeOp::getDpsInitsMutable() {
  return getOutAndLse(getOutInitMutable());
}

LogicalResult MlaDecodeOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyTensorOrMemRefSemantics(op)))
    return failure();
  FailureOr<Named> q = getActivation(op, "q", getQ(), 3);
  if (failed(q))
    return failure();
  FailureOr<Named> cache = getRanked(op, "kv_cache", getKvCache(), 3);
  if (failed(cache) ||
      failed(expectCacheElementType(op, *cache, q->type.getElementType(),
                                    "(q's)")) ||
      failed(verifyCacheScales(op, *cache, getKScale(), Value(), 1,
                               /*latent=*/true)))
    return failure();
  if (failed(expectSameDim(op, *q, 2, *cache, 2,
                           "the latent row size (kv_lora_rank + rope dim)")))
    return failure();
  FailureOr<Named> table =
      getIndexTensor(op, "block_table", getBlockTable(), 2, 32);
  if (failed(table))
    return failure();
  FailureOr<Named> lens = getIndexTensor(op, "seq_lens", getSeqLens(), 1, 32);
  if (failed(lens))
    return failure();
  if (failed(expectSameDim(op, *q, 0, *lens, 0, "the number of requests")) ||
      failed(expectSameDim(op, *q, 0, *table, 0, "the number of requests")))
    return failure();

  if (failed(expectSize(op, "num_heads", q->dim(1), kMaxHeads)) ||
      failed(expectSize(op, "latent row size", q->dim(2), kMaxHeadSize)) ||
      failed(expectSize(op, "block size", cache->dim(1), kMaxBlockSize)))
    return failure();
  int64_t rank = getKvLoraRankAttr().getInt();
  int64_t rowSize = q->dim(2);
  if (rank <= 0 || (!ShapedType::isDynamic(rowSize) && rank >= rowSize))
    return emitOpError() << "expects kv_lora_rank in (0, " << rowSize
                         << "), got " << rank;

  FailureOr<Named> out = getRanked(op, "out_init", getOutInit(), 3);
  if (failed(out) || failed(expectElementType(op, *out,
                                              q->type.getElementType(),
                                              "(q's)")))
    return failure();
  if (failed(expectSameDim(op, *q, 0, *out, 0, "the number of requests")) ||
      failed(expectSameDim(op, *q, 1, *out, 1, "the number of heads")) ||
      failed(expectDimEquals(op, *out, 2, rank, "kv_lora_rank")))
    return failure();
  if (failed(verifyLse(op, "lse_init", getLseInit(), *q,
                       "the number of requests")))
    return failure();

  if (failed(expectScale(op, getScale())) ||
      failed(expectSize(op, "num_kv_splits", getNumKvSplitsAttr().getInt(),
                        kMaxKvSplits)))
    return failure();
  if (std::optional<BackendAttr> backend = getBackend()) {
    if (!backend->isMla())
      return emitOpError() << "expects an MLA backend, got "
                           << backend->getName();
    return verifyBackend(op, *backend, std::nullopt, cache->dim(1),
                         cache->dim(2));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// MergeStatesOp
//===----------------------------------------------------------------------===//

MutableOperandRange MergeStatesOp::getDpsInitsMutable() {
  return getOutAndLse(getOutInitMutable());
}

LogicalResult MergeStatesOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyTensorOrMemRefSemantics(op)))
    return failure();
  FailureOr<Named> outA = getActivation(op, "out_a", getOutA(), 3);
  if (failed(outA))
    return failure();
  if (failed(expectSize(op, "num_heads", outA->dim(1), kMaxHeads)) ||
      failed(expectSize(op, "head size", outA->dim(2), kMaxHeadSize)))
    return failure();
  for (auto [name, value] : {std::pair<StringRef, Value>{"out_b", getOutB()},
                             {"out_init", getOutInit()}}) {
    FailureOr<Named> n = getRanked(op, name, value, 3);
    if (failed(n))
      return failure();
    if (failed(expectElementType(op, *n, outA->type.getElementType(),
                                 "(out_a's)")))
      return failure();
    for (int64_t i = 0; i < 3; ++i)
      if (failed(expectSameDim(op, *outA, i, *n, i, "the output shape")))
        return failure();
  }
  for (auto [name, value] : {std::pair<StringRef, Value>{"lse_a", getLseA()},
                             {"lse_b", getLseB()},
                             {"lse_init", getLseInit()}})
    if (failed(verifyLse(op, name, value, *outA, "the number of tokens")))
      return failure();
  return success();
}

#define GET_OP_CLASSES
#include "dialect/AttnOps.cpp.inc"

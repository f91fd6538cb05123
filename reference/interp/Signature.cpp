//===- Signature.cpp - What a function expects of its arguments ----------===//

#include "reference/interp/Signature.h"

#include "core/Metadata.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <sstream>

using namespace attn;

//===----------------------------------------------------------------------===//
// TensorSpec
//===----------------------------------------------------------------------===//

std::string TensorSpec::str() const {
  std::ostringstream os;
  os << "tensor<";
  for (int64_t d : shape) {
    if (d == kDynamic)
      os << "?";
    else
      os << d;
    os << "x";
  }
  os << toString(dtype) << ">";
  return os.str();
}

std::optional<std::string> TensorSpec::mismatch(const Tensor &t) const {
  if (t.dtype() != dtype)
    return llvm::formatv("expected {0}, got {1}", toString(dtype),
                         toString(t.dtype()))
        .str();
  if (t.rank() != static_cast<int64_t>(shape.size()))
    return llvm::formatv("expected rank {0} ({1}), got {2}", shape.size(),
                         str(), t.describe())
        .str();
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != kDynamic && shape[i] != t.dim(i))
      return llvm::formatv("expected {0}, got {1} (dimension {2} is {3}, not "
                           "{4})",
                           str(), t.describe(), i, t.dim(i), shape[i])
          .str();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Roles
//===----------------------------------------------------------------------===//

std::string_view attn::toString(ArgRole role) {
  switch (role) {
  case ArgRole::Unknown:
    return "";
  case ArgRole::Query:
    return "query";
  case ArgRole::KvCache:
    return "kv_cache";
  case ArgRole::BlockTable:
    return "block_table";
  case ArgRole::SeqLens:
    return "seq_lens";
  case ArgRole::QueryStartLoc:
    return "query_start_loc";
  case ArgRole::SlotMapping:
    return "slot_mapping";
  case ArgRole::AlibiSlopes:
    return "alibi_slopes";
  case ArgRole::Sinks:
    return "sinks";
  case ArgRole::KScale:
    return "k_scale";
  case ArgRole::VScale:
    return "v_scale";
  case ArgRole::Key:
    return "key";
  case ArgRole::Value:
    return "value";
  case ArgRole::OutA:
    return "out_a";
  case ArgRole::LseA:
    return "lse_a";
  case ArgRole::OutB:
    return "out_b";
  case ArgRole::LseB:
    return "lse_b";
  case ArgRole::OutInit:
    return "out_init";
  case ArgRole::LseInit:
    return "lse_init";
  }
  return "";
}

std::string ArgumentInfo::describe(size_t index) const {
  std::string s = "argument #" + std::to_string(index);
  if (role != ArgRole::Unknown)
    s += " (" + std::string(toString(role)) + ")";
  return s;
}

std::optional<DType> attn::dtypeOf(mlir::Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isSignlessInteger(32))
    return DType::I32;
  if (t.isSignlessInteger(64))
    return DType::I64;
  if (llvm::isa<mlir::Float8E4M3FNType>(t))
    return DType::F8E4M3FN;
  if (llvm::isa<mlir::Float8E5M2Type>(t))
    return DType::F8E5M2;
  return std::nullopt;
}

llvm::Expected<TensorSpec> attn::specOf(mlir::Type type,
                                        const llvm::Twine &what) {
  auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type);
  std::optional<DType> dtype =
      ranked ? dtypeOf(ranked.getElementType()) : std::nullopt;
  if (!dtype) {
    std::string typeStr;
    llvm::raw_string_ostream os(typeStr);
    type.print(os);
    return llvm::createStringError(
        what + " has type " + typeStr +
        "; only ranked tensors of f32, f16, bf16, f8E4M3FN, f8E5M2, i32 or "
        "i64 are supported");
  }
  TensorSpec spec;
  spec.dtype = *dtype;
  for (int64_t d : ranked.getShape())
    spec.shape.push_back(mlir::ShapedType::isDynamic(d) ? TensorSpec::kDynamic
                                                        : d);
  return spec;
}

std::string attn::describeOp(mlir::Operation *op) {
  std::string where;
  mlir::Location loc = op->getLoc();
  if (auto fileLoc = loc->findInstanceOf<mlir::FileLineColLoc>()) {
    where = llvm::formatv("{0}:{1}:{2}", fileLoc.getFilename().getValue(),
                          fileLoc.getLine(), fileLoc.getColumn())
                .str();
  } else {
    llvm::raw_string_ostream os(where);
    loc.print(os);
  }
  return where + ": '" + op->getName().getStringRef().str() + "'";
}

namespace {

KvLayout toKvLayout(mlir::attn::KVLayout layout) {
  return layout == mlir::attn::KVLayout::nhd ? KvLayout::NHD : KvLayout::HND;
}

/// Assigns roles to the entry-block arguments that attn ops use directly.
class RoleFinder {
public:
  RoleFinder(mlir::func::FuncOp func, Signature &signature)
      : entry(&func.getBody().front()), signature(signature) {}

  void visit(mlir::Operation *op) {
    using namespace mlir::attn;
    if (auto md = llvm::dyn_cast<MetadataOp>(op)) {
      set(md.getQueryStartLoc(), ArgRole::QueryStartLoc);
      set(md.getSeqLens(), ArgRole::SeqLens);
      set(md.getBlockTable(), ArgRole::BlockTable);
      set(md.getSlotMapping(), ArgRole::SlotMapping);
    } else if (auto pa = llvm::dyn_cast<PagedAttentionOp>(op)) {
      set(pa.getQuery(), ArgRole::Query);
      if (ArgumentInfo *cache = set(pa.getKvCache(), ArgRole::KvCache))
        cache->layout = toKvLayout(pa.getLayout());
      set(pa.getAlibiSlopes(), ArgRole::AlibiSlopes);
      set(pa.getSinks(), ArgRole::Sinks);
      set(pa.getKScale(), ArgRole::KScale);
      set(pa.getVScale(), ArgRole::VScale);
      set(pa.getOutInit(), ArgRole::OutInit);
      set(pa.getLseInit(), ArgRole::LseInit);
      widenWindow(pa.getWindowLeftValue());
      addPagedBatch(pa);
    } else if (auto rc = llvm::dyn_cast<ReshapeAndCacheOp>(op)) {
      set(rc.getKey(), ArgRole::Key);
      set(rc.getValue(), ArgRole::Value);
      set(rc.getSlotMapping(), ArgRole::SlotMapping);
      set(rc.getKScale(), ArgRole::KScale);
      set(rc.getVScale(), ArgRole::VScale);
      ArgumentInfo *cache = set(rc.getKvCache(), ArgRole::KvCache);
      if (rc.isLatentCache())
        signature.isMla = true;
      else if (cache)
        cache->layout = toKvLayout(*rc.getLayout());
      BatchUse use{BatchUse::Kind::CacheWrite, describeOp(rc)};
      use.key = index(rc.getKey());
      use.kvCache = index(rc.getKvCache());
      use.slotMapping = index(rc.getSlotMapping());
      if (!rc.isLatentCache())
        use.layout = toKvLayout(*rc.getLayout());
      addBatch(use, {use.key, use.kvCache, use.slotMapping});
    } else if (auto mla = llvm::dyn_cast<MlaDecodeOp>(op)) {
      signature.isMla = true;
      int64_t rank = mla.getKvLoraRankAttr().getInt();
      if (ArgumentInfo *q = set(mla.getQ(), ArgRole::Query))
        q->kvLoraRank = rank;
      if (ArgumentInfo *cache = set(mla.getKvCache(), ArgRole::KvCache))
        cache->kvLoraRank = rank;
      set(mla.getBlockTable(), ArgRole::BlockTable);
      set(mla.getSeqLens(), ArgRole::SeqLens);
      set(mla.getKScale(), ArgRole::KScale);
      set(mla.getOutInit(), ArgRole::OutInit);
      set(mla.getLseInit(), ArgRole::LseInit);
      BatchUse use{BatchUse::Kind::MlaDecode, describeOp(mla)};
      use.query = index(mla.getQ());
      use.kvCache = index(mla.getKvCache());
      use.blockTable = index(mla.getBlockTable());
      use.seqLens = index(mla.getSeqLens());
      addBatch(use, {use.query, use.kvCache, use.blockTable, use.seqLens});
    } else if (auto ms = llvm::dyn_cast<MergeStatesOp>(op)) {
      set(ms.getOutA(), ArgRole::OutA);
      set(ms.getLseA(), ArgRole::LseA);
      set(ms.getOutB(), ArgRole::OutB);
      set(ms.getLseB(), ArgRole::LseB);
      set(ms.getOutInit(), ArgRole::OutInit);
      set(ms.getLseInit(), ArgRole::LseInit);
    }
  }

private:
  /// Folds one op's window_left into the signature's widest one.
  void widenWindow(int64_t windowLeft) {
    std::optional<int64_t> &widest = signature.windowLeft;
    if (widest && (*widest < 0 || windowLeft < 0))
      widest = -1;
    else
      widest = std::max(widest.value_or(windowLeft), windowLeft);
  }

  /// The argument number of `v` when it is an argument of the function.
  std::optional<size_t> index(mlir::Value v) const {
    auto arg = llvm::dyn_cast_or_null<mlir::BlockArgument>(v);
    if (!arg || arg.getOwner() != entry)
      return std::nullopt;
    return arg.getArgNumber();
  }

  /// Records `use` when every operand it checks is an argument: one computed
  /// in the function is not known before it runs.
  void addBatch(const BatchUse &use,
                std::initializer_list<std::optional<size_t>> operands) {
    if (llvm::all_of(operands, [](auto i) { return i.has_value(); }))
      signature.batches.push_back(use);
  }

  void addPagedBatch(mlir::attn::PagedAttentionOp pa) {
    auto md = pa.getMetadata().getDefiningOp<mlir::attn::MetadataOp>();
    if (!md)
      return;
    BatchUse use{BatchUse::Kind::PagedAttention, describeOp(pa),
                 describeOp(md)};
    use.query = index(pa.getQuery());
    use.kvCache = index(pa.getKvCache());
    use.layout = toKvLayout(pa.getLayout());
    use.queryStartLoc = index(md.getQueryStartLoc());
    use.seqLens = index(md.getSeqLens());
    use.blockTable = index(md.getBlockTable());
    use.causal = md.getCausal();
    // paged_attention reads no slot; its metadata checks them when given.
    if (mlir::Value slots = md.getSlotMapping())
      use.slotMapping = index(slots);
    addBatch(use, {use.query, use.kvCache, use.queryStartLoc, use.seqLens,
                   use.blockTable});
  }

  /// Gives `v` the role when it is an argument without one yet; the first
  /// use wins.
  ArgumentInfo *set(mlir::Value v, ArgRole role) {
    auto arg = llvm::dyn_cast_or_null<mlir::BlockArgument>(v);
    if (!arg || arg.getOwner() != entry)
      return nullptr;
    ArgumentInfo &info = signature.arguments[arg.getArgNumber()];
    if (info.role != ArgRole::Unknown && info.role != role)
      return nullptr;
    info.role = role;
    return &info;
  }

  mlir::Block *entry;
  Signature &signature;
};

} // namespace

llvm::Expected<Signature> attn::describeSignature(mlir::func::FuncOp func) {
  Signature signature;
  signature.name = func.getSymName().str();
  if (func.isExternal())
    return llvm::createStringError("@" + signature.name +
                                   " is a declaration without a body");
  mlir::FunctionType type = func.getFunctionType();
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    llvm::Expected<TensorSpec> spec =
        specOf(t, "argument #" + llvm::Twine(i) + " of @" + signature.name);
    if (!spec)
      return spec.takeError();
    signature.arguments.push_back(ArgumentInfo{ArgRole::Unknown, *spec, {}, 0});
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    llvm::Expected<TensorSpec> spec =
        specOf(t, "result #" + llvm::Twine(i) + " of @" + signature.name);
    if (!spec)
      return spec.takeError();
    signature.results.push_back(*spec);
  }
  RoleFinder finder(func, signature);
  func.walk([&](mlir::Operation *op) { finder.visit(op); });
  return signature;
}

namespace {

/// The block count and block size of the cache `use` reads: a paged cache
/// in its layout, or the MLA latent cache [num_blocks, B, L + P].
Result<std::pair<int64_t, int64_t>> cacheBlocks(const BatchUse &use,
                                                const Tensor &cache) {
  if (use.layout) {
    Result<KvCacheGeometry> g =
        KvCacheGeometry::ofShape(cache.shape(), *use.layout, cache.describe());
    if (!g)
      return g.status();
    return std::pair<int64_t, int64_t>{g->numBlocks, g->blockSize};
  }
  if (cache.rank() != 3)
    return errorf("kv_cache is ", cache.describe(),
                  ", expected [num_blocks, B, L + P]");
  return std::pair<int64_t, int64_t>{cache.dim(0), cache.dim(1)};
}

/// One op's batch checks, in the order the reference makes them; the
/// message is that of the op (or of its metadata) that would refuse it.
llvm::Error checkBatch(const BatchUse &use, llvm::ArrayRef<Tensor> args) {
  auto fail = [](const std::string &where, const Status &status) {
    return llvm::createStringError(where + ": " + status.message());
  };
  auto rows = [&](std::optional<size_t> i) {
    return args[*i].rank() > 0 ? args[*i].dim(0) : 0;
  };
  const Tensor *slots = use.slotMapping ? &args[*use.slotMapping] : nullptr;
  if (use.kind == BatchUse::Kind::PagedAttention) {
    Result<CommonAttentionMetadata> md = makeCommonAttentionMetadata(
        args[*use.queryStartLoc], args[*use.seqLens], &args[*use.blockTable],
        slots, use.causal);
    if (!md)
      return fail(use.metadataWhere, md.status());
  }
  Result<std::pair<int64_t, int64_t>> blocks =
      cacheBlocks(use, args[*use.kvCache]);
  if (!blocks)
    return fail(use.where, blocks.status());
  auto [numBlocks, blockSize] = *blocks;
  Status status = Status::ok();
  switch (use.kind) {
  case BatchUse::Kind::PagedAttention:
    status = checkPagedBatch(args[*use.queryStartLoc], args[*use.seqLens],
                             args[*use.blockTable], use.causal, rows(use.query),
                             numBlocks, blockSize)
                 .status();
    break;
  case BatchUse::Kind::MlaDecode:
    status = checkDecodeBatch(args[*use.seqLens], args[*use.blockTable],
                              rows(use.query), numBlocks, blockSize)
                 .status();
    break;
  case BatchUse::Kind::CacheWrite:
    status = checkSlotMapping(*slots, rows(use.key), numBlocks, blockSize);
    break;
  }
  return status ? llvm::Error::success() : fail(use.where, status);
}

} // namespace

llvm::Error attn::checkBatches(const Signature &signature,
                               llvm::ArrayRef<Tensor> args) {
  if (args.size() != signature.arguments.size())
    return llvm::Error::success();
  for (const BatchUse &use : signature.batches)
    if (llvm::Error err = checkBatch(use, args))
      return err;
  return llvm::Error::success();
}

llvm::Error attn::checkArguments(const Signature &signature,
                                 llvm::ArrayRef<Tensor> args,
                                 llvm::ArrayRef<std::string> sources) {
  if (args.size() != signature.arguments.size())
    return llvm::createStringError(
        llvm::formatv("@{0} takes {1} arguments, got {2} inputs",
                      signature.name, signature.arguments.size(), args.size())
            .str());
  for (auto [i, arg] : llvm::enumerate(args)) {
    const ArgumentInfo &info = signature.arguments[i];
    std::optional<std::string> why = info.type.mismatch(arg);
    if (!why)
      continue;
    std::string message = info.describe(i) + ": " + *why;
    if (i < sources.size() && !sources[i].empty())
      message += " from " + sources[i];
    return llvm::createStringError(message);
  }
  return llvm::Error::success();
}

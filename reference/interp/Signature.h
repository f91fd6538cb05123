//===- Signature.h - What a function expects of its arguments ------*- C++ -*-===//
//
// The interpreter and attn-run check inputs against the signature of the
// function they run, and attn-run makes random inputs for it. Both need to
// know more than the types: which role each argument plays for the attn ops
// that use it (query, kv_cache, block_table, ...), so messages can name it
// and generators can make consistent values. This header is MLIR-free so
// that the code using it stays cheap to compile; describeSignature is the
// one function that reads MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_INTERP_SIGNATURE_H
#define ATTN_REFERENCE_INTERP_SIGNATURE_H

#include "core/KvCache.h"
#include "core/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class Operation;
class Type;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace attn {

/// A ranked tensor type without MLIR: a dtype and a shape whose dynamic
/// dimensions are kDynamic.
struct TensorSpec {
  static constexpr int64_t kDynamic = -1;

  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  /// "tensor<?x32x128xbf16>".
  std::string str() const;
  /// Why `t` does not have this type ("expected i32, got i64"), or nullopt
  /// when it does.
  std::optional<std::string> mismatch(const Tensor &t) const;
};

/// What an argument is to the attn ops that use it.
enum class ArgRole {
  Unknown,
  Query,
  KvCache,
  BlockTable,
  SeqLens,
  QueryStartLoc,
  SlotMapping,
  AlibiSlopes,
  Sinks,
  /// An fp8 cache's scales.
  KScale,
  VScale,
  Key,
  Value,
  OutA,
  LseA,
  OutB,
  LseB,
  /// A destination passed in by the caller (`outs` operands).
  OutInit,
  LseInit,
};

/// The operand name of the role ("query", "block_table", ...); "" for
/// Unknown.
std::string_view toString(ArgRole role);

struct ArgumentInfo {
  ArgRole role = ArgRole::Unknown;
  TensorSpec type;
  /// For a paged kv_cache: its layout.
  std::optional<KvLayout> layout;
  /// For MLA operands (q, the latent cache): L of the op using them.
  int64_t kvLoraRank = 0;

  /// "argument #2 (block_table)" or "argument #2".
  std::string describe(size_t index) const;
};

/// An attn op that reads a batch from the function's arguments, and which
/// argument holds each operand it checks (none where the op has no such
/// operand): what a host checks before a device runs the function
/// (checkBatches), as the reference checks it when it runs the op.
struct BatchUse {
  enum class Kind { PagedAttention, MlaDecode, CacheWrite };
  Kind kind = Kind::PagedAttention;
  /// "<loc>: 'attn.paged_attention'", as the interpreter's messages start,
  /// and for paged_attention the same of its attn.metadata.
  std::string where;
  std::string metadataWhere;
  std::optional<size_t> query, key, kvCache, queryStartLoc, seqLens, blockTable,
      slotMapping;
  /// A paged cache's layout; none for the MLA latent cache.
  std::optional<KvLayout> layout;
  bool causal = true;
};

struct Signature {
  std::string name;
  std::vector<ArgumentInfo> arguments;
  std::vector<TensorSpec> results;
  /// Whether the function uses the MLA latent cache (mla_decode, or
  /// reshape_and_cache on a rank-3 cache): q, the cache, key (kv_c) and value
  /// (k_pe) are latent.
  bool isMla = false;
  /// The widest window_left of the paged_attention ops (-1 when one has no
  /// window), so that generated problems know which slots no op reads;
  /// none without such an op.
  std::optional<int64_t> windowLeft;
  /// The ops whose batch operands all are arguments, in program order.
  std::vector<BatchUse> batches;
};

/// The dtype of an MLIR element type, if the reference supports it.
std::optional<DType> dtypeOf(mlir::Type elementType);

/// The spec of a ranked tensor type of a supported element type; otherwise an
/// error saying that `what` (e.g. "argument #2 of @f") has an unsupported
/// type.
llvm::Expected<TensorSpec> specOf(mlir::Type type, const llvm::Twine &what);

/// "<file:line:col>: 'attn.paged_attention'": where `op` is and what it is,
/// as messages about it start.
std::string describeOp(mlir::Operation *op);

/// Reads the signature of `func` and the roles of its arguments. Arguments
/// and results must be ranked tensors of f32, f16, bf16, i32 or i64.
llvm::Expected<Signature> describeSignature(mlir::func::FuncOp func);

/// Checks each batch of `args` the function's ops read (signature.batches)
/// as the reference does before it runs them (core/Metadata.h): the
/// metadata, the query's rows, the block table and the slots against the
/// cache. The message starts as the interpreter's would. Arguments missing
/// from `args` are left to the run, which reports them.
llvm::Error checkBatches(const Signature &signature,
                         llvm::ArrayRef<Tensor> args);

/// Checks `args` against the signature: count, rank, static dimensions and
/// dtype. `sources[i]` says where argument i came from ("out/arg2.npy") and
/// ends its messages; it may be empty.
llvm::Error checkArguments(const Signature &signature,
                           llvm::ArrayRef<Tensor> args,
                           llvm::ArrayRef<std::string> sources);

} // namespace attn

#endif // ATTN_REFERENCE_INTERP_SIGNATURE_H

//===- Variant.cpp - Attention variants from key=value lists -------------===//

#include "compiler/Variant.h"
#include "compiler/PlanBuilder.h"

#include "dialect/AttnOps.h"
#include "dialect/Limits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

StringRef Variant::functionName() const { return ::attn::toString(op); }

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error badValue(StringRef key, StringRef value, StringRef expected) {
  return makeError("bad value '" + value + "' for variant key '" + key +
                   "': expected " + expected);
}

/// Parses the value of a key into the variant.
using ValueParser = llvm::Error (*)(StringRef key, StringRef value, Variant &v);

/// How a value of a Variant field's type parses, and what a bad one should
/// have been.
template <typename T> struct FieldSyntax;
template <> struct FieldSyntax<int64_t> {
  static constexpr const char *expected = "an integer";
  static std::optional<int64_t> parse(StringRef s) {
    return ::attn::parseIntValue(s);
  }
};
template <> struct FieldSyntax<double> {
  static constexpr const char *expected = "a finite number";
  static std::optional<double> parse(StringRef s) {
    std::optional<double> d = ::attn::parseFloatValue(s);
    return d && std::isfinite(*d) ? d : std::nullopt;
  }
};
template <> struct FieldSyntax<bool> {
  static constexpr const char *expected = "true, false, 1 or 0";
  static std::optional<bool> parse(StringRef s) {
    return ::attn::parseBoolValue(s);
  }
};

/// Parses the value of a key into the Variant field `field`.
template <auto field>
llvm::Error fieldValue(StringRef key, StringRef value, Variant &v) {
  using T = std::remove_reference_t<decltype(v.*field)>;
  std::optional<T> parsed = FieldSyntax<T>::parse(value);
  if (!parsed)
    return badValue(key, value, FieldSyntax<T>::expected);
  v.*field = *parsed;
  return llvm::Error::success();
}

/// The op is parsed before every other key (parseOp): it decides which keys
/// apply.
llvm::Error opValue(StringRef, StringRef, Variant &) {
  return llvm::Error::success();
}

llvm::Error dtypeValue(StringRef key, StringRef value, Variant &v) {
  std::optional<::attn::DType> dtype = ::attn::parseDType(value);
  if (!dtype || !::attn::isModelDType(*dtype))
    return badValue(key, value, "f32, f16 or bf16");
  v.dtype = *dtype;
  return llvm::Error::success();
}

llvm::Error kvCacheDtypeValue(StringRef key, StringRef value, Variant &v) {
  std::optional<CacheDType> dtype = ::attn::parseCacheDType(value);
  if (!dtype)
    return badValue(key, value, "auto, fp8, fp8_e4m3 or fp8_e5m2");
  v.kvCacheDtype = *dtype;
  return llvm::Error::success();
}

llvm::Error kvScaleStrategyValue(StringRef key, StringRef value, Variant &v) {
  std::optional<::attn::KvScaleStrategy> strategy =
      ::attn::parseKvScaleStrategy(value);
  if (!strategy)
    return badValue(key, value, "tensor or attn_head");
  v.kvScaleStrategy = *strategy;
  return llvm::Error::success();
}

llvm::Error layoutValue(StringRef key, StringRef value, Variant &v) {
  std::optional<::attn::KvLayout> layout = ::attn::parseKvLayout(value);
  if (!layout)
    return badValue(key, value, "nhd or hnd");
  v.layout = *layout;
  return llvm::Error::success();
}

/// How each key's value is read into a Variant, in the order of core's
/// table (core/VariantKeys.h), which holds the names, ops and help.
constexpr std::pair<std::string_view, ValueParser> kParsers[] = {
    {"op", opValue},
    {"num_heads", fieldValue<&Variant::numHeads>},
    {"num_kv_heads", fieldValue<&Variant::numKvHeads>},
    {"head_size", fieldValue<&Variant::headSize>},
    {"block_size", fieldValue<&Variant::blockSize>},
    {"dtype", dtypeValue},
    {"kv_cache_dtype", kvCacheDtypeValue},
    {"kv_scale_strategy", kvScaleStrategyValue},
    {"layout", layoutValue},
    {"causal", fieldValue<&Variant::causal>},
    {"window_left", fieldValue<&Variant::windowLeft>},
    {"window_right", fieldValue<&Variant::windowRight>},
    {"soft_cap", fieldValue<&Variant::softCap>},
    {"alibi", fieldValue<&Variant::alibi>},
    {"sinks", fieldValue<&Variant::sinks>},
    {"scale", fieldValue<&Variant::scale>},
    {"kv_lora_rank", fieldValue<&Variant::kvLoraRank>},
    {"rope_dim", fieldValue<&Variant::ropeDim>},
    {"num_kv_splits", fieldValue<&Variant::numKvSplits>},
};

constexpr bool parsersFollowTheKeys() {
  if (std::size(kParsers) != std::size(::attn::kVariantKeys))
    return false;
  for (size_t i = 0; i < std::size(kParsers); ++i)
    if (kParsers[i].first != ::attn::kVariantKeys[i].name ||
        !kParsers[i].second)
      return false;
  return true;
}
static_assert(parsersFollowTheKeys(),
              "kParsers must give a parser for each key of kVariantKeys, in "
              "its order");

/// The parser of `key`, an entry of kVariantKeys.
ValueParser parserOf(const ::attn::VariantKey &key) {
  return kParsers[&key - ::attn::kVariantKeys].second;
}

/// Keys of reshape_and_cache that only its paged form has, and those that
/// only its latent (MLA) form has.
bool isPagedCacheKey(StringRef key) {
  return key == "num_kv_heads" || key == "head_size" || key == "layout" ||
         key == "kv_scale_strategy";
}
bool isLatentCacheKey(StringRef key) {
  return key == "kv_lora_rank" || key == "rope_dim";
}

/// Whether `key` is one of the variant's parameters: it applies to the op
/// and, for reshape_and_cache, to the cache form.
bool keyApplies(const ::attn::VariantKey &key, const Variant &v) {
  if (!key.appliesTo(v.op))
    return false;
  if (v.op != VariantOp::ReshapeAndCache)
    return true;
  return v.latentCache ? !isPagedCacheKey(key.name)
                       : !isLatentCacheKey(key.name);
}

/// `key` must be in [min, max].
llvm::Error expectInRange(StringRef key, int64_t value, int64_t min,
                          int64_t max) {
  if (value < min)
    return makeError(llvm::formatv(
        "variant key '{0}' must be >= {1}, got {2}", key, min, value));
  if (value > max)
    return makeError(llvm::formatv(
        "variant key '{0}' must be <= {1}, got {2}", key, max, value));
  return llvm::Error::success();
}

} // namespace

bool mlir::attn::variantKeyApplies(StringRef key, StringRef op) {
  const ::attn::VariantKey *info = ::attn::findVariantKey(key);
  std::optional<VariantOp> candidate = ::attn::parseVariantOp(op);
  return info && candidate && info->appliesTo(*candidate);
}

llvm::Error mlir::attn::checkVariantKey(StringRef key) {
  if (::attn::findVariantKey(key))
    return llvm::Error::success();
  return makeError("unknown variant key '" + key +
                   "' (known keys: " + ::attn::variantKeyNames() + ")");
}

std::map<std::string, std::string>
mlir::attn::variantParameters(const Variant &v) {
  using ::attn::boolText;
  using ::attn::f32Text;
  using ::attn::intText;
  std::map<std::string, std::string> all = {
      {"op", std::string(::attn::toString(v.op))},
      {"num_heads", intText(v.numHeads)},
      {"num_kv_heads", intText(v.numKvHeads)},
      {"head_size", intText(v.headSize)},
      {"block_size", intText(v.blockSize)},
      {"dtype", std::string(::attn::toString(v.dtype))},
      {"kv_cache_dtype", std::string(::attn::toString(v.kvCacheDtype))},
      {"kv_scale_strategy", std::string(::attn::toString(v.kvScaleStrategy))},
      {"layout", std::string(::attn::toString(v.layout))},
      {"causal", boolText(v.causal)},
      {"window_left", intText(v.windowLeft)},
      {"window_right", intText(v.windowRight)},
      {"soft_cap", f32Text(v.softCap)},
      {"alibi", boolText(v.alibi)},
      {"sinks", boolText(v.sinks)},
      {"scale", f32Text(v.scale)},
      {"kv_lora_rank", intText(v.kvLoraRank)},
      {"rope_dim", intText(v.ropeDim)},
      {"num_kv_splits", intText(v.numKvSplits)},
  };
  std::map<std::string, std::string> params;
  for (const ::attn::VariantKey &k : ::attn::kVariantKeys) {
    if (!keyApplies(k, v))
      continue;
    const std::string &value = all.at(std::string(k.name));
    if (k.omittedAtAbsentValue() && value == k.absentValue)
      continue;
    params[std::string(k.name)] = value;
  }
  return params;
}

std::string mlir::attn::variantName(const Variant &v) {
  std::map<std::string, std::string> p = variantParameters(v);
  // Short tags in a fixed order; keys at their defaults are left out.
  static const std::pair<const char *, const char *> kTags[] = {
      {"num_heads", "h"},     {"num_kv_heads", "g"},  {"head_size", "d"},
      {"kv_lora_rank", "l"},  {"rope_dim", "p"},      {"block_size", "b"},
      {"dtype", ""},          {"kv_cache_dtype", ""},
      {"kv_scale_strategy", ""},                      {"layout", ""},
      {"causal", "causal"},
      {"window_left", "wl"},  {"window_right", "wr"}, {"soft_cap", "cap"},
      {"alibi", "alibi"},     {"sinks", "sinks"},     {"scale", "s"},
      {"num_kv_splits", "splits"},
  };
  std::string name(::attn::toString(v.op));
  for (auto [key, tag] : kTags) {
    auto it = p.find(key);
    if (it == p.end())
      continue;
    const std::string &value = it->second;
    std::string t = tag;
    if (t == "causal" || t == "alibi" || t == "sinks") {
      bool isDefault = (t == "causal") == (value == "true");
      if (!isDefault)
        name += "." + std::string(t == "causal" ? "noncausal" : t);
      continue;
    }
    if ((t == "wl" || t == "wr") && value == "-1")
      continue;
    if ((t == "cap" && value == "0") || value == "auto")
      continue;
    if (t == "s" || (t == "splits" && value == "1"))
      continue;
    name += "." + t + value;
  }
  return name;
}

std::string mlir::attn::variantKeysHelp() {
  std::string help;
  llvm::raw_string_ostream os(help);
  // One column past the longest name, so that no name runs into its help.
  size_t width = 0;
  for (const ::attn::VariantKey &key : ::attn::kVariantKeys)
    width = std::max(width, key.name.size() + 1);
  for (const ::attn::VariantKey &key : ::attn::kVariantKeys) {
    os << "  " << llvm::left_justify(key.name, width) << key.help;
    if (key.name != "op") {
      os << "; for ";
      bool first = true;
      for (VariantOp op : ::attn::kVariantOps) {
        if (!key.appliesTo(op))
          continue;
        os << (first ? "" : ", ") << ::attn::toString(op);
        first = false;
      }
    }
    os << "\n";
  }
  return help;
}

namespace {

/// The entries of `spec` as key -> value and the keys in the order given,
/// rejecting malformed entries, unknown keys and repeated keys.
llvm::Error splitEntries(StringRef spec, llvm::StringMap<StringRef> &values,
                         SmallVectorImpl<StringRef> &order) {
  SmallVector<StringRef> entries;
  spec.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef entry : entries) {
    entry = entry.trim();
    auto [key, value] = entry.split('=');
    key = key.trim();
    value = value.trim();
    if (!entry.contains('=') || key.empty())
      return makeError("variant entry '" + entry +
                       "' is not of the form key=value");
    if (llvm::Error err = checkVariantKey(key))
      return err;
    if (!values.try_emplace(key, value).second)
      return makeError("variant key '" + key + "' is given twice");
    order.push_back(key);
  }
  return llvm::Error::success();
}

/// The op of the variant, which decides the keys that apply.
llvm::Expected<VariantOp> parseOp(const llvm::StringMap<StringRef> &values) {
  auto opIt = values.find("op");
  if (opIt == values.end())
    return makeError("the variant has no 'op' key (one of paged_attention, "
                     "reshape_and_cache, mla_decode, merge_states)");
  std::optional<VariantOp> op = ::attn::parseVariantOp(opIt->second);
  if (!op)
    return badValue("op", opIt->second,
                    "paged_attention, reshape_and_cache, mla_decode or "
                    "merge_states");
  return *op;
}

/// Reads the value of every key, in `order`, into `v`, whose op is set.
llvm::Error parseValues(const llvm::StringMap<StringRef> &values,
                        ArrayRef<StringRef> order, Variant &v) {
  for (StringRef key : order) {
    const ::attn::VariantKey *info = ::attn::findVariantKey(key);
    if (!info->appliesTo(v.op))
      return makeError("variant key '" + key + "' does not apply to op=" +
                       ::attn::toString(v.op));
    if (llvm::Error err = parserOf(*info)(key, values.lookup(key), v))
      return err;
  }
  return llvm::Error::success();
}

/// The bounds of each key. Keys that do not apply keep their defaults, which
/// are valid. `latentGiven`: kv_lora_rank is given; `scaleGiven`: scale is.
llvm::Error checkRanges(const Variant &v, bool latentGiven, bool scaleGiven) {
  for (auto [key, value, min, max] : {
           std::tuple<StringRef, int64_t, int64_t, int64_t>{
               "num_heads", v.numHeads, 1, kMaxHeads},
           {"num_kv_heads", v.numKvHeads, 1, kMaxHeads},
           {"head_size", v.headSize, 1, kMaxHeadSize},
           {"block_size", v.blockSize, 1, kMaxBlockSize},
           {"window_left", v.windowLeft, -1, kMaxWindow},
           {"window_right", v.windowRight, -1, kMaxWindow},
           {"kv_lora_rank", v.kvLoraRank, 1, kMaxHeadSize},
           {"rope_dim", v.ropeDim, 1, kMaxHeadSize},
           {"num_kv_splits", v.numKvSplits, 1, kMaxKvSplits},
       })
    if (llvm::Error err = expectInRange(key, value, min, max))
      return err;
  if (v.op == VariantOp::MlaDecode || latentGiven)
    if (llvm::Error err = expectInRange("kv_lora_rank + rope_dim",
                                        v.kvLoraRank + v.ropeDim, 2,
                                        kMaxHeadSize))
      return err;
  if (v.softCap < 0)
    return makeError(llvm::formatv(
        "variant key 'soft_cap' must be >= 0 (0: no cap), got {0}", v.softCap));
  if (scaleGiven && !(v.scale > 0))
    return makeError(
        llvm::formatv("variant key 'scale' must be > 0, got {0}", v.scale));
  return llvm::Error::success();
}

/// reshape_and_cache: kv_lora_rank and rope_dim together select the MLA
/// latent cache, which has no kv heads, head size or layout.
llvm::Error selectCacheForm(const llvm::StringMap<StringRef> &values,
                            ArrayRef<StringRef> order, Variant &v) {
  bool rank = values.count("kv_lora_rank"), rope = values.count("rope_dim");
  if (rank != rope)
    return makeError("variant keys 'kv_lora_rank' and 'rope_dim' go "
                     "together for op=reshape_and_cache (its MLA latent "
                     "cache form)");
  v.latentCache = rank;
  if (v.latentCache)
    for (StringRef key : order)
      if (isPagedCacheKey(key))
        return makeError("variant key '" + key +
                         "' does not apply to op=reshape_and_cache with "
                         "kv_lora_rank and rope_dim (the MLA latent "
                         "cache)");
  return llvm::Error::success();
}

/// paged_attention's keys that must agree with each other.
llvm::Error checkCombinations(const Variant &v) {
  if (v.op == VariantOp::PagedAttention && v.numHeads % v.numKvHeads != 0)
    return makeError(llvm::formatv(
        "variant key 'num_heads' ({0}) must be a multiple of 'num_kv_heads' "
        "({1})",
        v.numHeads, v.numKvHeads));
  if (v.kvScaleStrategy == ::attn::KvScaleStrategy::AttnHead) {
    if (v.kvCacheDtype == CacheDType::Auto)
      return makeError("variant key 'kv_scale_strategy=attn_head' needs an "
                       "fp8 kv_cache_dtype (a cache in the model dtype has "
                       "no scales)");
    if (v.numKvHeads == 1)
      return makeError("variant key 'kv_scale_strategy=attn_head' needs "
                       "num_kv_heads > 1 (with one kv head it is "
                       "kv_scale_strategy=tensor)");
  }
  if (v.op == VariantOp::PagedAttention && v.causal && v.windowRight >= 0)
    return makeError("variant key 'window_right' applies only with "
                     "causal=false (causal attention sees no key to the "
                     "right)");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<Variant> mlir::attn::parseVariant(StringRef spec) {
  llvm::StringMap<StringRef> values;
  SmallVector<StringRef> order;
  if (llvm::Error err = splitEntries(spec, values, order))
    return std::move(err);
  Variant v;
  llvm::Expected<VariantOp> op = parseOp(values);
  if (!op)
    return op.takeError();
  v.op = *op;
  if (llvm::Error err = parseValues(values, order, v))
    return std::move(err);

  // Ranges, then combinations.
  bool scaleGiven = values.count("scale");
  if (llvm::Error err =
          checkRanges(v, values.count("kv_lora_rank"), scaleGiven))
    return std::move(err);
  if (v.op == VariantOp::ReshapeAndCache)
    if (llvm::Error err = selectCacheForm(values, order, v))
      return std::move(err);
  if (!values.count("num_kv_heads"))
    v.numKvHeads = v.op == VariantOp::ReshapeAndCache ? 8 : v.numHeads;
  if (llvm::Error err = checkCombinations(v))
    return std::move(err);
  if (!scaleGiven) {
    int64_t dim = v.op == VariantOp::MlaDecode ? v.kvLoraRank + v.ropeDim
                                               : v.headSize;
    v.scale = 1.0 / std::sqrt(static_cast<double>(dim));
  }
  return v;
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// Builds the body of one variant function.
class VariantBuilder {
public:
  VariantBuilder(const Variant &v, OpBuilder &b, Location loc)
      : v(v), b(b), loc(loc), f32(b.getF32Type()),
        i32(b.getIntegerType(32)), i64(b.getIntegerType(64)) {
    act = elementTypeOf(v.dtype, b.getContext());
    cacheElement = elementTypeOf(
        ::attn::cacheElementType(v.kvCacheDtype, v.dtype), b.getContext());
  }

  func::FuncOp build() {
    switch (v.op) {
    case VariantOp::PagedAttention:
      return buildPagedAttention();
    case VariantOp::ReshapeAndCache:
      return buildReshapeAndCache();
    case VariantOp::MlaDecode:
      return buildMlaDecode();
    case VariantOp::MergeStates:
      return buildMergeStates();
    }
    llvm_unreachable("unknown variant op");
  }

private:
  RankedTensorType tensor(ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  }

  /// The paged cache: [NB, 2, B, G, D] (nhd) or [NB, 2, G, B, D] (hnd).
  RankedTensorType pagedCacheType() {
    if (v.layout == ::attn::KvLayout::NHD)
      return tensor({kDyn, 2, v.blockSize, v.numKvHeads, v.headSize},
                    cacheElement);
    return tensor({kDyn, 2, v.numKvHeads, v.blockSize, v.headSize},
                  cacheElement);
  }

  /// With an fp8 cache, appends the scales' types to `inputs`: k_scale and,
  /// unless `latent`, v_scale, f32 [1] each (one per layer) or [G] each
  /// (kv_scale_strategy=attn_head).
  void addScaleInputs(SmallVectorImpl<Type> &inputs, bool latent) {
    if (v.kvCacheDtype == CacheDType::Auto)
      return;
    bool perHead = v.kvScaleStrategy == ::attn::KvScaleStrategy::AttnHead;
    auto scales = tensor({perHead ? v.numKvHeads : 1}, f32);
    inputs.push_back(scales);
    if (!latent)
      inputs.push_back(scales);
  }

  /// The scale arguments addScaleInputs added from argument `first` on (null
  /// values without them).
  std::pair<Value, Value> scaleArguments(func::FuncOp fn, unsigned first,
                                         bool latent) {
    if (v.kvCacheDtype == CacheDType::Auto)
      return {};
    Block &body = fn.getBody().front();
    return {body.getArgument(first),
            latent ? Value() : body.getArgument(first + 1)};
  }

  KVLayout layout() {
    return v.layout == ::attn::KvLayout::NHD ? KVLayout::nhd : KVLayout::hnd;
  }

  /// Creates the function with its entry block and sets the insertion point.
  func::FuncOp makeFunction(TypeRange inputs, TypeRange results) {
    auto fn = func::FuncOp::create(b, loc, v.functionName(),
                                   b.getFunctionType(inputs, results));
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    return fn;
  }

  /// The number of tokens (requests for MLA): dimension 0 of `like`.
  Value leadingDim(Value like) {
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    return tensor::DimOp::create(b, loc, like, c0);
  }

  /// An empty destination of `type`, whose only dynamic size is dimension 0.
  Value empty(RankedTensorType type, Value size) {
    return tensor::EmptyOp::create(b, loc, type, ValueRange{size});
  }

  func::FuncOp buildPagedAttention() {
    auto query = tensor({kDyn, v.numHeads, v.headSize}, act);
    auto table = tensor({kDyn, kDyn}, i32);
    auto lens = tensor({kDyn}, i32);
    auto perHead = tensor({v.numHeads}, f32);
    SmallVector<Type> inputs = {query, pagedCacheType(), table, lens, lens};
    if (v.alibi)
      inputs.push_back(perHead);
    if (v.sinks)
      inputs.push_back(perHead);
    addScaleInputs(inputs, /*latent=*/false);
    auto lse = tensor({kDyn, v.numHeads}, f32);
    func::FuncOp fn = makeFunction(inputs, {query, lse});

    Block &body = fn.getBody().front();
    Value q = body.getArgument(0), cache = body.getArgument(1);
    unsigned next = 5;
    Value alibi = v.alibi ? body.getArgument(next++) : Value();
    Value sinks = v.sinks ? body.getArgument(next++) : Value();
    auto [kScale, vScale] = scaleArguments(fn, next, /*latent=*/false);
    Value metadata = MetadataOp::create(
        b, loc, MetadataType::get(b.getContext()),
        /*query_start_loc=*/body.getArgument(4),
        /*seq_lens=*/body.getArgument(3), /*block_table=*/body.getArgument(2),
        /*slot_mapping=*/Value(), b.getBoolAttr(v.causal));
    Value numTokens = leadingDim(q);
    Value outInit = empty(query, numTokens);
    Value lseInit = empty(lse, numTokens);
    auto op = PagedAttentionOp::create(
        b, loc, TypeRange{query, lse}, q, cache, metadata, alibi, sinks,
        outInit, lseInit, kScale, vScale,
        KVLayoutAttr::get(b.getContext(), layout()),
        b.getF32FloatAttr(static_cast<float>(v.scale)),
        b.getI64IntegerAttr(v.windowLeft), b.getI64IntegerAttr(v.windowRight),
        b.getF32FloatAttr(static_cast<float>(v.softCap)), BackendAttr());
    func::ReturnOp::create(b, loc, op.getResults());
    return fn;
  }

  func::FuncOp buildReshapeAndCache() {
    if (v.latentCache)
      return buildLatentCacheWrite();
    auto kv = tensor({kDyn, v.numKvHeads, v.headSize}, act);
    auto slots = tensor({kDyn}, i64);
    RankedTensorType cacheType = pagedCacheType();
    SmallVector<Type> inputs = {kv, kv, cacheType, slots};
    addScaleInputs(inputs, /*latent=*/false);
    func::FuncOp fn = makeFunction(inputs, {cacheType});
    Block &body = fn.getBody().front();
    auto [kScale, vScale] = scaleArguments(fn, 4, /*latent=*/false);
    auto op = ReshapeAndCacheOp::create(
        b, loc, TypeRange{cacheType}, body.getArgument(0), body.getArgument(1),
        body.getArgument(3), body.getArgument(2), kScale, vScale,
        KVLayoutAttr::get(b.getContext(), layout()), BackendAttr());
    func::ReturnOp::create(b, loc, op.getResults());
    return fn;
  }

  /// reshape_and_cache on the MLA latent cache: (kv_c, k_pe, cache, slots).
  func::FuncOp buildLatentCacheWrite() {
    auto kvC = tensor({kDyn, v.kvLoraRank}, act);
    auto kPe = tensor({kDyn, v.ropeDim}, act);
    auto slots = tensor({kDyn}, i64);
    auto cache =
        tensor({kDyn, v.blockSize, v.kvLoraRank + v.ropeDim}, cacheElement);
    SmallVector<Type> inputs = {kvC, kPe, cache, slots};
    addScaleInputs(inputs, /*latent=*/true);
    func::FuncOp fn = makeFunction(inputs, {cache});
    Block &body = fn.getBody().front();
    auto op = ReshapeAndCacheOp::create(
        b, loc, TypeRange{cache}, body.getArgument(0), body.getArgument(1),
        body.getArgument(3), body.getArgument(2),
        scaleArguments(fn, 4, /*latent=*/true).first, Value(), KVLayoutAttr(),
        BackendAttr());
    func::ReturnOp::create(b, loc, op.getResults());
    return fn;
  }

  func::FuncOp buildMlaDecode() {
    int64_t row = v.kvLoraRank + v.ropeDim;
    auto q = tensor({kDyn, v.numHeads, row}, act);
    auto cache = tensor({kDyn, v.blockSize, row}, cacheElement);
    auto table = tensor({kDyn, kDyn}, i32);
    auto lens = tensor({kDyn}, i32);
    auto out = tensor({kDyn, v.numHeads, v.kvLoraRank}, act);
    auto lse = tensor({kDyn, v.numHeads}, f32);
    SmallVector<Type> inputs = {q, cache, table, lens};
    addScaleInputs(inputs, /*latent=*/true);
    func::FuncOp fn = makeFunction(inputs, {out, lse});
    Block &body = fn.getBody().front();
    Value query = body.getArgument(0);
    Value numReqs = leadingDim(query);
    Value outInit = empty(out, numReqs);
    Value lseInit = empty(lse, numReqs);
    auto op = MlaDecodeOp::create(
        b, loc, TypeRange{out, lse}, query, body.getArgument(1),
        body.getArgument(2), body.getArgument(3), outInit, lseInit,
        scaleArguments(fn, 4, /*latent=*/true).first,
        b.getI64IntegerAttr(v.kvLoraRank),
        b.getF32FloatAttr(static_cast<float>(v.scale)),
        b.getI64IntegerAttr(v.numKvSplits), BackendAttr());
    func::ReturnOp::create(b, loc, op.getResults());
    return fn;
  }

  func::FuncOp buildMergeStates() {
    auto out = tensor({kDyn, v.numHeads, v.headSize}, act);
    auto lse = tensor({kDyn, v.numHeads}, f32);
    func::FuncOp fn = makeFunction({out, lse, out, lse}, {out, lse});
    Block &body = fn.getBody().front();
    Value outA = body.getArgument(0);
    Value numTokens = leadingDim(outA);
    Value outInit = empty(out, numTokens);
    Value lseInit = empty(lse, numTokens);
    auto op = MergeStatesOp::create(b, loc, TypeRange{out, lse}, outA,
                                    body.getArgument(1), body.getArgument(2),
                                    body.getArgument(3), outInit, lseInit);
    func::ReturnOp::create(b, loc, op.getResults());
    return fn;
  }

  const Variant &v;
  OpBuilder &b;
  Location loc;
  Type f32, i32, i64, act;
  /// The KV cache's element type: act, or fp8.
  Type cacheElement;
};

} // namespace

llvm::Error mlir::attn::buildVariant(const Variant &variant, ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  ctx->loadDialect<AttnDialect, arith::ArithDialect, func::FuncDialect,
                   tensor::TensorDialect>();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = NameLoc::get(b.getStringAttr(variant.functionName()));
  func::FuncOp fn = VariantBuilder(variant, b, loc).build();

  // The dialect's verifiers have the last word on what a variant may be.
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        diagnostics += (diagnostics.empty() ? "" : "; ") + diag.str();
      return success();
    });
    if (succeeded(verify(fn)))
      return llvm::Error::success();
  }
  fn.erase();
  return makeError("the variant does not verify: " + diagnostics);
}

//===----------------------------------------------------------------------===//
// Recovering the variant of a function
//===----------------------------------------------------------------------===//

namespace {

/// The element type of `value`'s shaped type as a dtype; none for one the
/// runtime has no dtype for.
std::optional<::attn::DType> dtypeOf(Value value) {
  return planElementType(cast<ShapedType>(value.getType()).getElementType());
}

/// The kv_cache_dtype of `cache`: fp8 by its element type, else auto (the
/// verifier has checked that it is the activations' then).
CacheDType cacheDtypeOf(Value cache) {
  return ::attn::cacheDTypeOf(dtypeOf(cache).value_or(::attn::DType::F32));
}

int64_t dimOf(Value value, int64_t i) {
  return cast<ShapedType>(value.getType()).getDimSize(i);
}

/// attn_head when `kScale` holds more than one scale (one per kv head; the
/// verifier has checked the count), else tensor. A v_scale of another shape
/// shows when the rebuilt function type is compared.
::attn::KvScaleStrategy scaleStrategyOf(Value kScale) {
  return kScale && dimOf(kScale, 0) != 1 ? ::attn::KvScaleStrategy::AttnHead
                                         : ::attn::KvScaleStrategy::Tensor;
}

/// The knobs of `op` in a Variant. Shapes are checked to be static later,
/// by comparing the function type with the rebuilt one.
llvm::Expected<Variant> variantOfOp(Operation *op) {
  Variant v;
  Value typed;
  if (auto pa = dyn_cast<PagedAttentionOp>(op)) {
    v.op = VariantOp::PagedAttention;
    typed = pa.getQuery();
    v.kvCacheDtype = cacheDtypeOf(pa.getKvCache());
    v.kvScaleStrategy = scaleStrategyOf(pa.getKScale());
    v.numHeads = dimOf(pa.getQuery(), 1);
    v.headSize = dimOf(pa.getQuery(), 2);
    v.layout = pa.getLayout() == KVLayout::nhd ? ::attn::KvLayout::NHD
                                               : ::attn::KvLayout::HND;
    bool nhd = v.layout == ::attn::KvLayout::NHD;
    v.blockSize = dimOf(pa.getKvCache(), nhd ? 2 : 3);
    v.numKvHeads = dimOf(pa.getKvCache(), nhd ? 3 : 2);
    auto metadata = pa.getMetadata().getDefiningOp<MetadataOp>();
    if (!metadata)
      return makeError("its metadata does not come from an attn.metadata op "
                       "of the function");
    v.causal = metadata.getCausal();
    v.windowLeft = pa.getWindowLeftValue();
    v.windowRight = pa.getWindowRightValue();
    v.softCap = pa.getSoftCap().convertToFloat();
    v.scale = pa.getScale().convertToFloat();
    v.alibi = static_cast<bool>(pa.getAlibiSlopes());
    v.sinks = static_cast<bool>(pa.getSinks());
  } else if (auto rc = dyn_cast<ReshapeAndCacheOp>(op)) {
    v.op = VariantOp::ReshapeAndCache;
    typed = rc.getKey();
    v.kvCacheDtype = cacheDtypeOf(rc.getKvCache());
    v.kvScaleStrategy = scaleStrategyOf(rc.getKScale());
    v.latentCache = rc.isLatentCache();
    if (v.latentCache) {
      v.kvLoraRank = dimOf(rc.getKey(), 1);
      v.ropeDim = dimOf(rc.getValue(), 1);
      v.blockSize = dimOf(rc.getKvCache(), 1);
    } else {
      v.numKvHeads = dimOf(rc.getKey(), 1);
      v.headSize = dimOf(rc.getKey(), 2);
      v.layout = rc.getLayout() == KVLayout::hnd ? ::attn::KvLayout::HND
                                                 : ::attn::KvLayout::NHD;
      v.blockSize =
          dimOf(rc.getKvCache(), v.layout == ::attn::KvLayout::NHD ? 2 : 3);
    }
  } else if (auto mla = dyn_cast<MlaDecodeOp>(op)) {
    v.op = VariantOp::MlaDecode;
    typed = mla.getQ();
    v.kvCacheDtype = cacheDtypeOf(mla.getKvCache());
    v.numHeads = dimOf(mla.getQ(), 1);
    v.kvLoraRank = mla.getKvLoraRank();
    v.ropeDim = dimOf(mla.getQ(), 2) - v.kvLoraRank;
    v.blockSize = dimOf(mla.getKvCache(), 1);
    v.scale = mla.getScale().convertToFloat();
    v.numKvSplits = mla.getNumKvSplits();
  } else {
    auto merge = cast<MergeStatesOp>(op);
    v.op = VariantOp::MergeStates;
    typed = merge.getOutA();
    v.numHeads = dimOf(merge.getOutA(), 1);
    v.headSize = dimOf(merge.getOutA(), 2);
  }
  std::optional<::attn::DType> dtype = dtypeOf(typed);
  if (!dtype || !::attn::isModelDType(*dtype))
    return makeError("its element type is not f32, f16 or bf16");
  v.dtype = *dtype;
  return v;
}

/// How the function's arguments reach its attn op and how the op's results
/// leave it: for each operand of the op, then of the attn.metadata op it
/// reads, the index of the function argument it is (-1: something else);
/// then, per returned value, the index of the op result it is (-1: other).
SmallVector<int64_t> argumentRoles(func::FuncOp fn, Operation *op) {
  SmallVector<int64_t> roles;
  auto add = [&](Operation *user) {
    for (Value operand : user->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      roles.push_back(arg && arg.getOwner()->isEntryBlock()
                          ? static_cast<int64_t>(arg.getArgNumber())
                          : -1);
    }
  };
  add(op);
  for (Value operand : op->getOperands())
    if (auto metadata = operand.getDefiningOp<MetadataOp>())
      add(metadata);
  fn.walk([&](func::ReturnOp ret) {
    for (Value v : ret.getOperands()) {
      auto result = dyn_cast<OpResult>(v);
      roles.push_back(result && result.getOwner() == op
                          ? static_cast<int64_t>(result.getResultNumber())
                          : -1);
    }
  });
  return roles;
}

bool isAttnComputeOp(Operation *op) {
  return isa<PagedAttentionOp, ReshapeAndCacheOp, MlaDecodeOp, MergeStatesOp>(
      op);
}

} // namespace

llvm::Expected<Variant> mlir::attn::variantOfFunction(func::FuncOp fn) {
  std::string where = "function @" + fn.getSymName().str();
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) {
    if (isAttnComputeOp(op))
      ops.push_back(op);
  });
  if (ops.size() != 1)
    return makeError(where + " has " + Twine(ops.size()) +
                     " attn ops; the runtime calls functions of exactly one "
                     "(the form attn-compile --emit=mlir --variant prints)");
  llvm::Expected<Variant> variant = variantOfOp(ops.front());
  if (!variant)
    return makeError(where + ": " + llvm::toString(variant.takeError()));

  // Rebuild the function the runtime expects and compare.
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(fn.getLoc());
  if (llvm::Error err = buildVariant(*variant, *scratch))
    return makeError(where + ": " + llvm::toString(std::move(err)));
  auto canonical = *scratch->getOps<func::FuncOp>().begin();
  if (canonical.getFunctionType() != fn.getFunctionType()) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << where << " has type " << fn.getFunctionType()
       << ", but the runtime calls its variant as "
       << canonical.getFunctionType();
    return makeError(message);
  }
  Operation *canonicalOp = nullptr;
  canonical.walk([&](Operation *op) {
    if (isAttnComputeOp(op))
      canonicalOp = op;
  });
  if (argumentRoles(fn, ops.front()) != argumentRoles(canonical, canonicalOp))
    return makeError(where + ": its arguments do not reach the " +
                     ops.front()->getName().getStringRef() +
                     " op (or its results the return) in the order the "
                     "runtime passes them; write it as attn-compile "
                     "--emit=mlir --variant prints it");
  return variant;
}

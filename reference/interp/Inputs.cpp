//===- Inputs.cpp - Where a run's inputs come from and its outputs go ----===//

#include "reference/interp/Inputs.h"

#include "reference/interp/StatusError.h"
#include "reference/testing/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

using namespace attn;

//===----------------------------------------------------------------------===//
// --random-options
//===----------------------------------------------------------------------===//

const char *const attn::kRandomOptionsHelp =
    "num_requests=N (requests in the batch, default 4), "
    "min_context=N and max_context=N (tokens cached before the step, "
    "default 1 and 256), decode_fraction=F (share of decode requests, "
    "default 0.5), max_query_len=N (longest prefill query, default 64), "
    "cross_fraction=F (share of cross-attention requests, fewer keys than "
    "queries, for non-causal attention; default 0), "
    "shared_prefix=N (cache blocks every request shares, default 0), "
    "extra_blocks=N (unused cache blocks, default 4), unread_fill=X (a "
    "number, nan, inf or -inf: the value of every cache slot no request "
    "reads, the slots before a sliding window among them, with block-table "
    "entries past a request's blocks pointing at "
    "unused blocks; default: random values and entries 0); at most 65536 "
    "requests, "
    "2^20 tokens of context or query and 2^20 blocks";

llvm::Expected<ProblemOptions>
attn::parseRandomOptions(llvm::StringRef spec, ProblemOptions base) {
  llvm::SmallVector<llvm::StringRef> entries;
  spec.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef entry : entries) {
    auto [key, value] = entry.split('=');
    key = key.trim();
    value = value.trim();
    if (!entry.contains('='))
      return llvm::createStringError("random option '" + entry +
                                     "' is not of the form key=value");
    auto badValue = [&](llvm::StringRef expected) {
      return llvm::createStringError("bad value '" + value +
                                     "' for random option '" + key +
                                     "': expected " + expected);
    };
    if (key == "decode_fraction" || key == "cross_fraction") {
      double f;
      if (value.getAsDouble(f) || !(f >= 0.0 && f <= 1.0))
        return badValue("a number in [0, 1]");
      (key == "decode_fraction" ? base.decodeFraction : base.crossFraction) =
          f;
      continue;
    }
    if (key == "unread_fill") {
      double x;
      if (value.getAsDouble(x, /*AllowInexact=*/true))
        return badValue("a number, nan, inf or -inf");
      base.unreadFill = x;
      continue;
    }
    // Bounds keep a generated step something the reference runs in seconds
    // to minutes and the host can hold.
    struct Field {
      int64_t *value;
      int64_t max;
    };
    std::optional<Field> field =
        llvm::StringSwitch<std::optional<Field>>(key)
            .Case("num_requests", Field{&base.numReqs, kMaxRandomRequests})
            .Case("min_context", Field{&base.minContextLen, kMaxRandomTokens})
            .Case("max_context", Field{&base.maxContextLen, kMaxRandomTokens})
            .Case("max_query_len",
                  Field{&base.maxPrefillQueryLen, kMaxRandomTokens})
            .Case("shared_prefix",
                  Field{&base.sharedPrefixBlocks, kMaxRandomBlocks})
            .Case("extra_blocks", Field{&base.extraFreeBlocks, kMaxRandomBlocks})
            .Default(std::nullopt);
    if (!field)
      return llvm::createStringError(
          "unknown random option '" + key +
          "' (known: num_requests, min_context, max_context, "
          "decode_fraction, cross_fraction, max_query_len, shared_prefix, "
          "extra_blocks, unread_fill)");
    int64_t n;
    if (value.getAsInteger(10, n) || n < 0 || n > field->max)
      return badValue("an integer in [0, " + std::to_string(field->max) + "]");
    *field->value = n;
  }
  return base;
}

//===----------------------------------------------------------------------===//
// Random inputs
//===----------------------------------------------------------------------===//

namespace {

/// Dimension `i` of an argument's type, when static.
std::optional<int64_t> staticDim(const ArgumentInfo &arg, size_t i) {
  if (i >= arg.type.shape.size() || arg.type.shape[i] == TensorSpec::kDynamic)
    return std::nullopt;
  return arg.type.shape[i];
}

/// Sets `field` from a static dimension, if there is one.
void take(int64_t &field, const ArgumentInfo &arg, size_t i) {
  if (std::optional<int64_t> d = staticDim(arg, i))
    field = *d;
}

/// The model shape implied by the argument types. Dimensions a type leaves
/// dynamic keep the generator's defaults.
ProblemShape inferShape(const Signature &signature) {
  ProblemShape shape;
  bool haveKvHeads = false, haveDType = false;
  std::optional<int64_t> numHeads;
  // A latent cache write alone has no q to take L + P from.
  std::optional<int64_t> latentRowSize;
  int64_t latentKeySize = 0, latentValueSize = 0;
  for (const ArgumentInfo &arg : signature.arguments) {
    switch (arg.role) {
    case ArgRole::Query:
      numHeads = numHeads ? numHeads : staticDim(arg, 1);
      if (signature.isMla) {
        shape.kvLoraRank = arg.kvLoraRank;
        shape.ropeDim =
            staticDim(arg, 2).value_or(arg.kvLoraRank + 64) - arg.kvLoraRank;
      } else {
        take(shape.headSize, arg, 2);
      }
      break;
    case ArgRole::OutA:
    case ArgRole::OutB:
      numHeads = numHeads ? numHeads : staticDim(arg, 1);
      take(shape.headSize, arg, 2);
      break;
    case ArgRole::LseA:
    case ArgRole::LseB:
      numHeads = numHeads ? numHeads : staticDim(arg, 1);
      break;
    case ArgRole::AlibiSlopes:
    case ArgRole::Sinks:
      numHeads = numHeads ? numHeads : staticDim(arg, 0);
      break;
    case ArgRole::KvCache:
      if (signature.isMla) {
        take(shape.blockSize, arg, 1);
        latentRowSize = staticDim(arg, 2);
        break;
      }
      shape.layout = arg.layout.value_or(KvLayout::NHD);
      take(shape.blockSize, arg, shape.layout == KvLayout::NHD ? 2 : 3);
      take(shape.numKvHeads, arg, shape.layout == KvLayout::NHD ? 3 : 2);
      take(shape.headSize, arg, 4);
      haveKvHeads = true;
      break;
    case ArgRole::Key:
    case ArgRole::Value:
      if (signature.isMla) {
        // The latent cache's write: key = kv_c [T, L], value = k_pe [T, P].
        take(arg.role == ArgRole::Key ? latentKeySize : latentValueSize, arg,
             1);
        break;
      }
      take(shape.numKvHeads, arg, 1);
      take(shape.headSize, arg, 2);
      haveKvHeads = true;
      break;
    default:
      break;
    }
    bool activation = arg.role == ArgRole::Query ||
                      arg.role == ArgRole::KvCache ||
                      arg.role == ArgRole::Key || arg.role == ArgRole::OutA;
    if (activation && !haveDType && isModelDType(arg.type.dtype)) {
      shape.dtype = arg.type.dtype;
      haveDType = true;
    }
  }
  if (signature.isMla && shape.kvLoraRank == 0) {
    // A latent cache write without mla_decode: L from kv_c, P from k_pe, one
    // of them from the cache row when only the other is static, and
    // DeepSeek-V3's L = 512, P = 64 where the types leave them open.
    int64_t &l = shape.kvLoraRank, &p = shape.ropeDim;
    l = latentKeySize;
    p = latentValueSize;
    int64_t row = latentRowSize.value_or(0);
    if (!l && p && row > p)
      l = row - p;
    if (l && !p && row > l)
      p = row - l;
    l = l ? l : 512;
    p = p ? p : 64;
  }
  // A cache update alone has no query heads, and a merge alone no kv heads:
  // pick what keeps the generated problem small and valid.
  if (numHeads)
    shape.numHeads = *numHeads;
  else if (haveKvHeads)
    shape.numHeads = shape.numKvHeads;
  if (!haveKvHeads)
    shape.numKvHeads = 1;
  shape.windowLeft = signature.windowLeft.value_or(-1);
  return shape;
}

/// Uniform values in [-1, 1) for an attention output of `shape`.
Tensor randomOutput(Random &random, DType dtype, std::vector<int64_t> shape) {
  Tensor t(dtype, std::move(shape));
  random.fill(t, -1.0, 1.0);
  return t;
}

/// Log-sum-exps in [-4, 4), one in eight -inf (a side that saw no key).
Tensor randomLse(Random &random, std::vector<int64_t> shape) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i) {
    bool empty = random.uniformInt(0, 7) == 0;
    double v = random.uniform(-4.0, 4.0);
    t.setFloat(i, empty ? -std::numeric_limits<double>::infinity() : v);
  }
  return t;
}

} // namespace

llvm::Expected<std::vector<Tensor>>
attn::makeRandomInputs(const Signature &signature,
                       const ProblemOptions &options) {
  for (auto [i, arg] : llvm::enumerate(signature.arguments))
    if (arg.role == ArgRole::Unknown)
      return llvm::createStringError(
          arg.describe(i) + " of @" + signature.name +
          " is not an operand of an attn op, so --random cannot make a value "
          "for it; pass --inputs DIR instead");

  ProblemShape shape = inferShape(signature);
  Result<Problem> problem = generateProblem(shape, options);
  if (!problem)
    return llvm::createStringError("cannot make a random problem for @" +
                                   signature.name + ": " + problem.message());
  Problem &p = *problem;
  // Tokens (requests for MLA): the leading size of every per-token tensor.
  int64_t leading = p.query.dim(0);
  int64_t headDim = shape.isMla() ? shape.kvLoraRank : shape.headSize;
  // A separate stream for what the problem does not contain, so that adding
  // such an argument does not change the problem itself.
  Random random(options.seed ^ 0x9e3779b97f4a7c15ull);
  // An fp8 cache's scales: f32 values of full precision, so that a device
  // rounding the products differently shows; the cache holds values up to
  // about 1 / scale, well inside e4m3's range.
  const double kScale = roundToDType(random.uniform(0.01, 0.03), DType::F32);
  const double vScale = roundToDType(random.uniform(0.01, 0.03), DType::F32);

  std::vector<Tensor> inputs;
  for (const ArgumentInfo &arg : signature.arguments) {
    switch (arg.role) {
    case ArgRole::Unknown:
      llvm_unreachable("rejected above");
    case ArgRole::Query:
      inputs.push_back(p.query);
      break;
    case ArgRole::KvCache:
      inputs.push_back(isFp8(arg.type.dtype)
                           ? quantizeCache(p.kvCache, arg.type.dtype, kScale,
                                           vScale)
                           : p.kvCache);
      break;
    case ArgRole::BlockTable:
      inputs.push_back(p.blockTable);
      break;
    case ArgRole::SeqLens:
      inputs.push_back(p.seqLens);
      break;
    case ArgRole::QueryStartLoc:
      inputs.push_back(p.queryStartLoc);
      break;
    case ArgRole::SlotMapping:
      inputs.push_back(p.slotMapping);
      break;
    case ArgRole::AlibiSlopes:
      inputs.push_back(p.alibiSlopes);
      break;
    case ArgRole::Sinks:
      inputs.push_back(p.sinks);
      break;
    case ArgRole::KScale:
    case ArgRole::VScale: {
      // [1], or one per kv head ([G]): the first is the cache's scale, the
      // others differ, so a kernel that reads the wrong head's shows.
      int64_t count = arg.type.shape.size() == 1 && arg.type.shape[0] > 0
                          ? arg.type.shape[0]
                          : 1;
      Tensor scale(DType::F32, {count});
      scale.setFloat(0, arg.role == ArgRole::KScale ? kScale : vScale);
      for (int64_t g = 1; g < count; ++g)
        scale.setFloat(
            g, roundToDType(random.uniform(0.01, 0.03), DType::F32));
      inputs.push_back(std::move(scale));
      break;
    }
    case ArgRole::Key:
      inputs.push_back(p.key);
      break;
    case ArgRole::Value:
      inputs.push_back(p.value);
      break;
    case ArgRole::OutA:
    case ArgRole::OutB:
      inputs.push_back(randomOutput(random, arg.type.dtype,
                                    {leading, shape.numHeads, headDim}));
      break;
    case ArgRole::LseA:
    case ArgRole::LseB:
      inputs.push_back(randomLse(random, {leading, shape.numHeads}));
      break;
    case ArgRole::OutInit:
      inputs.emplace_back(arg.type.dtype,
                          std::vector<int64_t>{leading, shape.numHeads,
                                               headDim});
      break;
    case ArgRole::LseInit:
      inputs.emplace_back(DType::F32,
                          std::vector<int64_t>{leading, shape.numHeads});
      break;
    }
  }
  std::vector<std::string> sources(inputs.size(), "--random");
  if (llvm::Error err = checkArguments(signature, inputs, sources))
    return std::move(err);
  return inputs;
}

//===----------------------------------------------------------------------===//
// .npy directories
//===----------------------------------------------------------------------===//

namespace {

std::string fileIn(llvm::StringRef dir, const llvm::Twine &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// Rounds an f32 tensor once to `dtype` (bf16 or fp8, which .npy files hold
/// as f32), as readNpy does.
Tensor roundTo(DType dtype, const Tensor &t) {
  Tensor out(dtype, t.shape());
  for (int64_t i = 0; i < t.numElements(); ++i)
    out.setFloat(i, t.getFloat(i));
  return out;
}

} // namespace

llvm::Expected<std::vector<Tensor>>
attn::readInputs(const Signature &signature, llvm::StringRef dir) {
  size_t n = signature.arguments.size();
  std::string expected =
      n == 0 ? std::string("no arguments")
             : llvm::formatv("{0} argument{1}: arg0.npy .. arg{2}.npy", n,
                             n == 1 ? "" : "s", n - 1)
                   .str();
  std::vector<Tensor> inputs;
  std::vector<std::string> sources;
  for (size_t i = 0; i < n; ++i) {
    const ArgumentInfo &arg = signature.arguments[i];
    std::string path = fileIn(dir, "arg" + llvm::Twine(i) + ".npy");
    if (!llvm::sys::fs::exists(path))
      return llvm::createStringError(arg.describe(i) + ": " + path +
                                     " does not exist (@" + signature.name +
                                     " takes " + expected + ")");
    Result<Tensor> tensor = readNpy(path);
    if (!tensor)
      return llvm::createStringError(arg.describe(i) + ": " +
                                     tensor.message());
    if ((arg.type.dtype == DType::BF16 || isFp8(arg.type.dtype)) &&
        tensor->dtype() == DType::F32)
      *tensor = roundTo(arg.type.dtype, *tensor);
    inputs.push_back(std::move(*tensor));
    sources.push_back(path);
  }
  std::string extra = fileIn(dir, "arg" + llvm::Twine(n) + ".npy");
  if (llvm::sys::fs::exists(extra))
    return llvm::createStringError(extra + " exists, but @" + signature.name +
                                   " takes " + expected);
  if (llvm::Error err = checkArguments(signature, inputs, sources))
    return std::move(err);
  return inputs;
}

llvm::Error attn::writeTensors(llvm::StringRef dir, llvm::StringRef prefix,
                               llvm::ArrayRef<Tensor> tensors) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create directory " + dir + ": " +
                                   ec.message());
  for (auto [i, t] : llvm::enumerate(tensors)) {
    std::string path = fileIn(dir, prefix + llvm::Twine(i) + ".npy");
    if (llvm::Error err = toError(writeNpy(path, t)))
      return err;
  }
  return llvm::Error::success();
}

//===- Backend.cpp - Attention backends, impls and layer parameters -------===//

#include "runtime/host/Backend.h"

#include "runtime/host/OperandChecks.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace attn::runtime {

std::string_view toString(AttentionType type) {
  switch (type) {
  case AttentionType::Decoder:
    return "decoder";
  case AttentionType::EncoderDecoder:
    return "encoder_decoder";
  }
  return "?";
}

namespace {

Status checkPositiveDims(std::string_view who, int64_t numBlocks,
                         int64_t blockSize, int64_t numKvHeads,
                         int64_t headSize) {
  if (numBlocks < 1 || blockSize < 1 || numKvHeads < 1 || headSize < 1)
    return errorf(who,
                  ": kv cache dimensions must be positive, got "
                  "num_blocks = ",
                  numBlocks, ", block_size = ", blockSize,
                  ", num_kv_heads = ", numKvHeads, ", head_size = ", headSize);
  // Even at one byte per element, the cache must be a size a host can hold
  // and index without overflow.
  Result<uint64_t> bytes =
      tensorBytes(1, {numBlocks, 2, blockSize, numKvHeads, headSize});
  if (!bytes)
    return errorf(who, ": kv cache too large: ", bytes.message());
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// Layer parameters
//===----------------------------------------------------------------------===//

PerLayerParameters getPerLayerParameters(const AttentionLayer &layer) {
  PerLayerParameters p;
  p.windowLeft = layer.slidingWindow ? *layer.slidingWindow - 1 : -1;
  p.logitsSoftCap = layer.logitsSoftCap;
  p.smScale = layer.scale;
  p.hasSinks = !layer.sinks.empty();
  return p;
}

Result<PerLayerParameters>
inferGlobalHyperparameters(const std::vector<AttentionLayer> &layers,
                           bool requireSame) {
  if (layers.empty())
    return errorf("no attention layers found in the model");
  PerLayerParameters global = getPerLayerParameters(layers.front());
  const std::string &firstName = layers.front().name;
  bool sameWindowLefts = true;
  bool sameAll = true;
  auto optionalText = [](const std::optional<double> &v) {
    return v ? std::to_string(*v) : std::string("none");
  };
  for (const AttentionLayer &layer : layers) {
    PerLayerParameters p = getPerLayerParameters(layer);
    sameWindowLefts &= p.windowLeft == global.windowLeft;
    sameAll &= p == global;
    if (!requireSame || p == global)
      continue;
    std::ostringstream field;
    if (p.windowLeft != global.windowLeft)
      field << "window_left " << p.windowLeft << " but layer '" << firstName
            << "' has " << global.windowLeft;
    else if (p.logitsSoftCap != global.logitsSoftCap)
      field << "logits_soft_cap " << optionalText(p.logitsSoftCap)
            << " but layer '" << firstName << "' has "
            << optionalText(global.logitsSoftCap);
    else if (p.smScale != global.smScale)
      field << "sm_scale " << p.smScale << " but layer '" << firstName
            << "' has " << global.smScale;
    else
      field << "has_sinks " << (p.hasSinks ? "true" : "false") << " but layer '"
            << firstName << "' has " << (global.hasSinks ? "true" : "false");
    return errorf("layer '", layer.name, "' has ", field.str(),
                  "; all layers must share window_left, logits_soft_cap, "
                  "sm_scale and has_sinks");
  }
  global.hasSameWindowLefts = sameWindowLefts;
  global.hasSameAllParams = sameAll;
  return global;
}

//===----------------------------------------------------------------------===//
// AttentionBackend
//===----------------------------------------------------------------------===//

std::vector<DType> AttentionBackend::supportedDtypes() const {
  return {DType::F32, DType::F16, DType::BF16};
}

Status AttentionBackend::checkBlockSize(int64_t blockSize) const {
  if (blockSize <= 0 || blockSize % 16 != 0)
    return errorf("block size ", blockSize, " is not a multiple of 16");
  return Status::ok();
}

bool AttentionBackend::supportsDtype(DType dtype) const {
  std::vector<DType> dtypes = supportedDtypes();
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

bool AttentionBackend::supportsHeadSize(int64_t headSize) const {
  std::vector<int64_t> sizes = supportedHeadSizes();
  return std::find(sizes.begin(), sizes.end(), headSize) != sizes.end();
}

Result<DType> kvCacheElementType(std::string_view kvCacheDtype, DType dtype) {
  if (kvCacheDtype == "auto")
    return dtype;
  if (kvCacheDtype == "fp8" || kvCacheDtype == "fp8_e4m3")
    return DType::F8E4M3FN;
  if (kvCacheDtype == "fp8_e5m2")
    return DType::F8E5M2;
  return errorf("kv cache dtype '", kvCacheDtype,
                "' is none of auto, fp8, fp8_e4m3, fp8_e5m2");
}

/// The element type of `layer`'s cache; checkLayer has accepted its name.
DType layerCacheDtype(const AttentionLayer &layer) {
  Result<DType> dtype = kvCacheElementType(layer.kvCacheDtype, layer.dtype);
  return dtype ? *dtype : layer.dtype;
}

std::optional<Tensor> layerScale(const AttentionLayer &layer, float scale,
                                 const std::vector<float> &perHead) {
  if (layer.kvCacheDtype == "auto")
    return std::nullopt;
  if (perHead.empty()) {
    Tensor t(DType::F32, {1});
    t.setFloat(0, scale);
    return t;
  }
  Tensor t(DType::F32, {static_cast<int64_t>(perHead.size())});
  for (size_t g = 0; g < perHead.size(); ++g)
    t.setFloat(static_cast<int64_t>(g), perHead[g]);
  return t;
}

bool AttentionBackend::supportsKvCacheDtype(
    std::string_view kvCacheDtype) const {
  std::vector<std::string> dtypes = supportedKvCacheDtypes();
  return std::find(dtypes.begin(), dtypes.end(), kvCacheDtype) != dtypes.end();
}

std::vector<std::string>
AttentionBackend::validateConfiguration(const SelectionRequest &request) const {
  std::vector<std::string> reasons;
  auto add = [&](auto &&...parts) {
    std::ostringstream os;
    (os << ... << parts);
    reasons.push_back(os.str());
  };
  if (request.useMla && !isMla())
    add("use_mla is true but ", name(), " is not an MLA backend");
  if (!request.useMla && isMla())
    add("use_mla is false");
  if (!supportsHeadSize(request.headSize))
    add("head size ", request.headSize,
        " is not supported (supported: ", joined(supportedHeadSizes()), ")");
  if (!supportsDtype(request.dtype))
    add("dtype ", toString(request.dtype),
        " is not supported (supported: ", joined(supportedDtypes()), ")");
  if (!supportsKvCacheDtype(request.kvCacheDtype))
    add("kv cache dtype '", request.kvCacheDtype,
        "' is not supported (supported: ", joined(supportedKvCacheDtypes()),
        ")");
  if (Status s = checkBlockSize(request.blockSize); !s)
    add(s.message());
  if (request.hasSinks && !supportsSinks())
    add("attention sinks are not supported");
  if (request.useSlidingWindow && !supportsSlidingWindow())
    add("sliding window is not supported");
  if (request.useAlibi && !supportsAlibi())
    add("ALiBi is not supported");
  if (!supportsAttnType(request.attnType))
    add("attention type ", toString(request.attnType), " is not supported");
  if (request.usePerHeadQuantScales && !supportsPerHeadQuantScales())
    add("per-head quant scales are not supported");
  return reasons;
}

Result<std::unique_ptr<AttentionImpl>>
AttentionBackend::getImpl(const AttentionLayer &layer, KernelExecutor &executor,
                          const KvCacheSpec *cache) const {
  ATTN_RETURN_IF_ERROR(checkLayer(layer));
  Result<std::unique_ptr<AttentionImpl>> impl = makeImpl(layer, executor);
  if (!impl || !cache)
    return impl;
  for (const VariantQuery &call : (*impl)->calls(layer, *cache))
    if (Status s = executor.checkServes(call); !s)
      return errorf(name(), ": layer '", layer.name, "': ", s.message());
  return impl;
}

Result<std::unique_ptr<AttentionMetadataBuilder>>
AttentionBackend::getBuilder(const KvCacheSpec &spec,
                             std::vector<std::string> layerNames,
                             const BuilderConfig &config) const {
  if (Status s = checkBlockSize(spec.blockSize); !s)
    return errorf(name(), ": ", s.message());
  return makeBuilder(spec, std::move(layerNames), config);
}

Status AttentionBackend::checkHeadScales(const AttentionLayer &layer) const {
  if (layer.kHeadScales.empty() && layer.vHeadScales.empty())
    return Status::ok();
  if (!supportsPerHeadQuantScales())
    return errorf("per-kv-head k_scale / v_scale are not supported");
  if (layer.kvCacheDtype == "auto")
    return errorf("per-kv-head scales are given but the kv cache dtype is "
                  "'auto' (only an fp8 cache has scales)");
  for (auto [name, scales] : {std::pair{"k_scale", &layer.kHeadScales},
                              {"v_scale", &layer.vHeadScales}}) {
    if (static_cast<int64_t>(scales->size()) != layer.numKvHeads)
      return errorf("per-kv-head ", name, " has ", scales->size(),
                    " values for ", layer.numKvHeads, " kv heads");
    for (float s : *scales)
      if (!(s > 0.0f) || std::isinf(s))
        return errorf("per-kv-head ", name, " must be finite and > 0, got ",
                      s);
  }
  return Status::ok();
}

Status AttentionBackend::checkLayer(const AttentionLayer &layer) const {
  auto fail = [&](auto &&...parts) {
    return errorf(name(), ": layer '", layer.name, "': ", parts...);
  };
  if (layer.numHeads < 1 || layer.numKvHeads < 1)
    return fail("num_heads (", layer.numHeads, ") and num_kv_heads (",
                layer.numKvHeads, ") must be positive");
  if (layer.numHeads % layer.numKvHeads != 0)
    return fail("num_heads ", layer.numHeads,
                " is not a multiple of num_kv_heads ", layer.numKvHeads);
  if (!supportsHeadSize(layer.headSize))
    return fail("head size ", layer.headSize,
                " is not supported (supported: ", joined(supportedHeadSizes()),
                ")");
  if (!supportsDtype(layer.dtype))
    return fail("dtype ", toString(layer.dtype),
                " is not supported (supported: ", joined(supportedDtypes()),
                ")");
  if (!supportsKvCacheDtype(layer.kvCacheDtype))
    return fail("kv cache dtype '", layer.kvCacheDtype,
                "' is not supported (supported: ",
                joined(supportedKvCacheDtypes()), ")");
  if (layer.kvCacheDtype != "auto")
    for (auto [name, s] : {std::pair{"k_scale", layer.kScale},
                           {"v_scale", layer.vScale}})
      if (!(s > 0.0f) || std::isinf(s))
        return fail(name, " must be finite and > 0 with kv cache dtype '",
                    layer.kvCacheDtype, "', got ", s);
  if (Status s = checkHeadScales(layer); !s)
    return fail(s.message());
  if (layer.slidingWindow && !supportsSlidingWindow())
    return fail("sliding window is not supported");
  if (layer.slidingWindow && *layer.slidingWindow < 1)
    return fail("sliding window ", *layer.slidingWindow, " must be positive");
  if (!layer.sinks.empty() && !supportsSinks())
    return fail("attention sinks are not supported");
  if (!layer.alibiSlopes.empty() && !supportsAlibi())
    return fail("ALiBi is not supported");
  if (layer.logitsSoftCap && !supportsLogitsSoftCap())
    return fail("logits soft cap is not supported");
  if (!supportsAttnType(layer.attnType))
    return fail("attention type ", toString(layer.attnType),
                " is not supported");
  if (!layer.sinks.empty() &&
      static_cast<int64_t>(layer.sinks.size()) != layer.numHeads)
    return fail("sinks has ", layer.sinks.size(), " values for ",
                layer.numHeads, " heads");
  if (!layer.alibiSlopes.empty() &&
      static_cast<int64_t>(layer.alibiSlopes.size()) != layer.numHeads)
    return fail("alibi_slopes has ", layer.alibiSlopes.size(), " values for ",
                layer.numHeads, " heads");
  return Status::ok();
}

Status AttentionBackend::checkKvCacheDims(int64_t numBlocks, int64_t blockSize,
                                          int64_t numKvHeads, int64_t headSize,
                                          std::string_view cacheDtype) const {
  ATTN_RETURN_IF_ERROR(
      checkPositiveDims(name(), numBlocks, blockSize, numKvHeads, headSize));
  if (!supportsKvCacheDtype(cacheDtype))
    return errorf(name(), ": kv cache dtype '", cacheDtype,
                  "' is not supported (supported: ",
                  joined(supportedKvCacheDtypes()), ")");
  return Status::ok();
}

} // namespace attn::runtime

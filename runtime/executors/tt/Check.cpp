//===- Check.cpp - Emulated TT programs against the reference ------------===//
#include "runtime/executors/tt/Check.h"

#include "runtime/executors/tt/AttentionOps.h"

#include <cmath>
#include <sstream>

namespace attn::tt {

Tolerance toleranceFor(DType computeType) {
  if (computeType == DType::F32)
    return {1e-5, 1.3e-6};
  return {4e-3, 1.6e-2};
}

Comparison compare(const Tensor &reference, const Tensor &device,
                   Tolerance tol) {
  Comparison c;
  double worstExcess = -1;
  for (int64_t i = 0; i < reference.numElements(); ++i) {
    double r = reference.getFloat(i), d = device.getFloat(i);
    bool bothInf = std::isinf(r) && std::isinf(d) && (r > 0) == (d > 0);
    double err = bothInf ? 0 : std::fabs(d - r);
    if (std::isnan(err))
      err = INFINITY;
    c.maxAbsError = std::max(c.maxAbsError, err);
    if (r != 0)
      c.maxRelError = std::max(c.maxRelError, err / std::fabs(r));
    double allowed = tol.atol + tol.rtol * std::fabs(r);
    if (err > allowed) {
      ++c.mismatches;
      if (err - allowed > worstExcess) {
        worstExcess = err - allowed;
        c.worstIndex = i;
        c.worstDevice = d;
        c.worstReference = r;
      }
    }
  }
  return c;
}

static void describe(std::ostringstream &os, const char *name,
                     const Comparison &c) {
  os << name << ": max abs " << c.maxAbsError << ", max rel " << c.maxRelError
     << ", " << c.mismatches << " mismatch(es)";
  if (!c.ok())
    os << ", worst at " << c.worstIndex << ": device " << c.worstDevice
       << " reference " << c.worstReference;
  os << "\n";
}

Status checkProgram(const Program &program, const CheckOptions &options,
                    std::string &report, bool &passed) {
  const ProgramDescription &d = program.description;
  const JsonValue &p = d.params;
  ProblemShape shape;
  auto num = [&](const char *k) { return int64_t(p.getNumber(k).isOk() ? *p.getNumber(k) : 0); };
  shape.numHeads = num("num_heads");
  shape.numKvHeads = num("num_kv_heads");
  shape.headSize = num("head_size");
  shape.blockSize = num("block_size");
  auto dtypeName = p.getString("dtype");
  if (!dtypeName)
    return dtypeName.status();
  auto dtype = parseDType(*dtypeName);
  if (!dtype)
    return errorf("unknown dtype '", *dtypeName, "'");
  shape.dtype = *dtype;
  shape.layout = options.layout;
  bool mla = d.op == "mla_decode";
  if (mla) {
    shape.kvLoraRank = num("kv_lora_rank");
    shape.ropeDim = shape.headSize - shape.kvLoraRank;
  }
  auto problemOr = generateProblem(shape, options.problem);
  if (!problemOr)
    return problemOr.status();
  Problem &pr = *problemOr;
  Tolerance tol = toleranceFor(shape.dtype);
  std::ostringstream os;
  passed = true;

  if (d.op == "reshape_and_cache") {
    Tensor expected = pr.kvCache;
    ATTN_RETURN_IF_ERROR(reshapeAndCache(pr.key, pr.value, expected,
                                         pr.slotMapping, options.layout));
    Tensor actual = pr.kvCache;
    ATTN_RETURN_IF_ERROR(runReshapeAndCacheProgram(
        program, pr.key, pr.value, actual, pr.slotMapping, options.layout,
        options.parallelCores));
    Comparison c = compare(expected, actual, {0, 0});
    describe(os, "kv_cache", c);
    passed = c.ok();
    report = os.str();
    return Status::ok();
  }

  Result<AttentionOutput> expected = Status::error("unset");
  Result<AttentionOutput> actual = Status::error("unset");
  if (mla) {
    MlaDecodeParams params;
    params.scale = p.getNumber("scale").isOk() ? *p.getNumber("scale") : 1.0;
    params.kvLoraRank = shape.kvLoraRank;
    expected = mlaDecode(pr.query, pr.kvCache, pr.blockTable, pr.seqLens,
                         params);
    if (!expected)
      return expected.status();
    actual = runAttentionProgram(program, pr.query, pr.kvCache, pr.blockTable,
                                 pr.seqLens, nullptr, nullptr, options.layout,
                                 options.parallelCores);
  } else {
    // The cache as attention sees it: the step's keys and values written.
    ATTN_RETURN_IF_ERROR(reshapeAndCache(pr.key, pr.value, pr.kvCache,
                                         pr.slotMapping, options.layout));
    PagedAttentionParams params;
    params.layout = options.layout;
    params.scale = p.getNumber("scale").isOk() ? *p.getNumber("scale") : 1.0;
    const JsonValue *causal = p.get("causal");
    params.causal = !causal || causal->boolean();
    params.windowLeft = num("window_left");
    params.windowRight = num("window_right");
    params.softCap = p.getNumber("soft_cap").isOk() ? *p.getNumber("soft_cap") : 0;
    const JsonValue *sinks = p.get("sinks");
    const Tensor *sinkTensor = sinks && sinks->boolean() ? &pr.sinks : nullptr;
    expected = pagedAttention(pr.query, pr.kvCache, pr.blockTable, pr.seqLens,
                              pr.queryStartLoc, nullptr, sinkTensor, params);
    if (!expected)
      return expected.status();
    actual = runAttentionProgram(program, pr.query, pr.kvCache, pr.blockTable,
                                 pr.seqLens, &pr.queryStartLoc, sinkTensor,
                                 options.layout, options.parallelCores);
  }
  if (!actual)
    return actual.status();
  Comparison out = compare(expected->out, actual->out, tol);
  Comparison lse = compare(expected->lse, actual->lse, tol);
  describe(os, "out", out);
  describe(os, "lse", lse);
  passed = out.ok() && lse.ok();
  report = os.str();
  return Status::ok();
}

} // namespace attn::tt

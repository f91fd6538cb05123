//===- Check.cpp - Emulated TT programs against the reference ------------===//
#include "devices/tt/Check.h"

#include "devices/tt/AttentionOps.h"

#include <cmath>
#include <sstream>

namespace attn::tt {

Tolerance toleranceFor(DType computeType) {
  if (computeType == DType::BF16)
    return {4e-3, 1.6e-2};
  return defaultTolerance(computeType);
}

/// Compares and appends one line for `name` to `os`; false on a mismatch.
static Result<bool> compareInto(std::ostringstream &os, const char *name,
                                const Tensor &device, const Tensor &reference,
                                Tolerance tol) {
  Result<TensorDiff> diff = compareTensors(device, reference, tol);
  if (!diff)
    return errorf(name, ": ", diff.message());
  os << name << ": max abs " << diff->maxAbsError << ", max rel "
     << diff->maxRelError << ", " << diff->numMismatches << " mismatch(es)";
  if (!diff->passed())
    os << ", worst at " << formatIndex(diff->worstIndex) << ": device "
       << diff->worstGot << " reference " << diff->worstWant;
  os << "\n";
  return diff->passed();
}

/// Compares out and lse into `os`; `report` gets what `os` holds.
static Status compareOutputs(std::ostringstream &os,
                             const AttentionOutput &actual,
                             const AttentionOutput &expected, Tolerance tol,
                             std::string &report, bool &passed) {
  Result<bool> out = compareInto(os, "out", actual.out, expected.out, tol);
  if (!out)
    return out.status();
  Result<bool> lse = compareInto(os, "lse", actual.lse, expected.lse, tol);
  if (!lse)
    return lse.status();
  passed = *out && *lse;
  report = os.str();
  return Status::ok();
}

/// merge_states: two random states of T rows (with -inf lse, an empty side,
/// on some rows and both sides empty on others) against the reference.
static Status checkMerge(TTDevice &device, const Program &program,
                         DType dtype, const CheckOptions &options,
                         std::string &report, bool &passed) {
  const ProgramParams &p = program.description.params;
  int64_t H = p.numHeads.value_or(0);
  int64_t Dv = p.valueSize.value_or(0);
  int64_t T = options.problem.numReqs * 3 + 1;
  Random rng(options.problem.seed);
  Tensor outA(dtype, {T, H, Dv}), outB(dtype, {T, H, Dv});
  Tensor lseA(DType::F32, {T, H}), lseB(DType::F32, {T, H});
  rng.fill(outA, -1, 1);
  rng.fill(outB, -1, 1);
  rng.fill(lseA, -8, 8);
  rng.fill(lseB, -8, 8);
  float *la = reinterpret_cast<float *>(lseA.data());
  float *lb = reinterpret_cast<float *>(lseB.data());
  for (int64_t i = 0; i < T * H; ++i) {
    if (i % 7 == 3)
      la[i] = -INFINITY;
    if (i % 11 == 5 || (i % 7 == 3 && i % 2 == 0))
      lb[i] = -INFINITY;
  }
  Result<AttentionOutput> expected = mergeStates(outA, lseA, outB, lseB);
  if (!expected)
    return expected.status();
  Result<AttentionOutput> actual = runMergeStatesProgram(
      device, program, outA, lseA, outB, lseB);
  if (!actual)
    return actual.status();
  std::ostringstream os;
  return compareOutputs(os, *actual, *expected, toleranceFor(dtype), report,
                        passed);
}

Status checkProgram(TTDevice &device, const Program &program,
                    const CheckOptions &options, std::string &report,
                    bool &passed) {
  const ProgramDescription &d = program.description;
  const ProgramParams &p = d.params;
  ProblemShape shape;
  shape.numHeads = p.numHeads.value_or(0);
  shape.numKvHeads = p.numKvHeads.value_or(0);
  shape.headSize = p.headSize.value_or(0);
  shape.blockSize = p.blockSize.value_or(0);
  if (!p.dtype)
    return Status::error("json: expected string member 'dtype'");
  auto dtype = parseDType(*p.dtype);
  if (!dtype)
    return errorf("unknown dtype '", *p.dtype, "'");
  shape.dtype = *dtype;
  shape.layout = options.layout;
  bool mla = d.op == "mla_decode";
  // The MLA cache write: a latent row of key_width (L) + value_width (P).
  bool latent = d.op == "reshape_and_cache" && p.kvParts.value_or(0) == 1;
  if (mla) {
    shape.kvLoraRank = p.kvLoraRank.value_or(0);
    shape.ropeDim = shape.headSize - shape.kvLoraRank;
  } else if (latent) {
    shape.kvLoraRank = p.keyWidth.value_or(0);
    shape.ropeDim = p.valueWidth.value_or(0);
  }
  if (d.op == "merge_states")
    return checkMerge(device, program, shape.dtype, options, report, passed);
  auto problemOr = generateProblem(shape, options.problem);
  if (!problemOr)
    return problemOr.status();
  Problem &pr = *problemOr;
  Tolerance tol = toleranceFor(shape.dtype);
  std::ostringstream os;
  passed = true;

  if (d.op == "reshape_and_cache") {
    Tensor expected = pr.kvCache;
    if (latent)
      ATTN_RETURN_IF_ERROR(
          concatAndCacheMla(pr.key, pr.value, expected, pr.slotMapping));
    else
      ATTN_RETURN_IF_ERROR(reshapeAndCache(pr.key, pr.value, expected,
                                           pr.slotMapping, options.layout));
    Tensor actual = pr.kvCache;
    ATTN_RETURN_IF_ERROR(runReshapeAndCacheProgram(
        device, program, pr.key, pr.value, actual, pr.slotMapping,
        options.layout));
    Result<bool> same = compareInto(os, "kv_cache", actual, expected, {0, 0});
    if (!same)
      return same.status();
    passed = *same;
    report = os.str();
    return Status::ok();
  }

  Result<AttentionOutput> expected = Status::error("unset");
  Result<AttentionOutput> actual = Status::error("unset");
  if (mla) {
    MlaDecodeParams params;
    params.scale = p.scale.value_or(1.0);
    params.kvLoraRank = shape.kvLoraRank;
    expected =
        mlaDecode(pr.query, pr.kvCache, pr.blockTable, pr.seqLens, params);
    if (!expected)
      return expected.status();
    actual = runAttentionProgram(device, program, pr.query, pr.kvCache,
                                 pr.blockTable, pr.seqLens, nullptr, nullptr,
                                 nullptr, options.layout);
  } else {
    // The cache as attention sees it: the step's keys and values written.
    ATTN_RETURN_IF_ERROR(reshapeAndCache(pr.key, pr.value, pr.kvCache,
                                         pr.slotMapping, options.layout));
    PagedAttentionParams params;
    params.layout = options.layout;
    params.scale = p.scale.value_or(1.0);
    params.causal = p.causal.value_or(true);
    params.windowLeft = p.windowLeft.value_or(0);
    params.windowRight = p.windowRight.value_or(0);
    params.softCap = p.softCap.value_or(0);
    const Tensor *sinkTensor = p.sinks.value_or(false) ? &pr.sinks : nullptr;
    const Tensor *slopes =
        p.alibi.value_or(false) ? &pr.alibiSlopes : nullptr;
    expected = pagedAttention(pr.query, pr.kvCache, pr.blockTable, pr.seqLens,
                              pr.queryStartLoc, slopes, sinkTensor, params);
    if (!expected)
      return expected.status();
    actual = runAttentionProgram(device, program, pr.query, pr.kvCache,
                                 pr.blockTable, pr.seqLens, &pr.queryStartLoc,
                                 sinkTensor, slopes, options.layout);
  }
  if (!actual)
    return actual.status();
  return compareOutputs(os, *actual, *expected, tol, report, passed);
}

} // namespace attn::tt

//===- TestUtil.h - Helpers for the reference op tests ------------------===//
//
// Tensor builders, a dense (unpaged) batch that tests write by hand and page
// into a cache, and an attention over it written independently of
// reference/ops: long double, the visible keys as an interval, no shared
// helpers. Tests compare the paged ops against it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_UNIT_REFERENCE_TESTUTIL_H
#define ATTN_TEST_UNIT_REFERENCE_TESTUTIL_H

#include "reference/ops/Ops.h"
#include "core/Tensor.h"

#include <cstdint>
#include <vector>

/// Expects `expr` (a Status or Result) to fail with a message containing
/// `substring`.
#define EXPECT_ERROR(expr, substring)                                          \
  do {                                                                         \
    auto result_ = (expr);                                                     \
    ASSERT_FALSE(result_.isOk())                                               \
        << "expected an error containing '" << (substring) << "'";            \
    EXPECT_NE(result_.message().find(substring), std::string::npos)           \
        << result_.message();                                                  \
  } while (false)

namespace attn::test {

/// A float tensor holding `values` (rounded to `dtype`) in row-major order.
Tensor floats(DType dtype, std::vector<int64_t> shape,
              const std::vector<double> &values);
/// An integer tensor holding `values`.
Tensor ints(DType dtype, std::vector<int64_t> shape,
            const std::vector<int64_t> &values);
/// All elements of a float tensor as doubles.
std::vector<double> toDoubles(const Tensor &t);

/// One request written densely: its queries [q_len, H, D] and all its keys
/// and values [seq_len, G, D], the cached context first.
struct DenseRequest {
  int64_t queryLen = 0;
  int64_t seqLen = 0;
  std::vector<double> queries;
  std::vector<double> keys;
  std::vector<double> values;
};

struct DenseBatch {
  int64_t numHeads = 1;
  int64_t numKvHeads = 1;
  int64_t headSize = 1;
  std::vector<DenseRequest> requests;
};

/// The operands of pagedAttention for a DenseBatch.
struct PagedBatch {
  Tensor query;
  Tensor kvCache;
  Tensor blockTable;
  Tensor seqLens;
  Tensor queryStartLoc;
};

/// Pages `batch` into a cache of `blockSize`-token blocks. Blocks are handed
/// out in reverse order behind one unused block, and unused block table
/// entries hold -7, so a kernel that reads past seq_len or assumes an
/// identity table is caught.
PagedBatch toPaged(const DenseBatch &batch, DType dtype, KvLayout layout,
                   int64_t blockSize);

/// Expected attention of every query token: out [T, H, D], lse [T, H].
struct DenseResult {
  std::vector<long double> out;
  std::vector<long double> lse;
};

/// Attention over the dense batch, written without reference/ops.
DenseResult denseAttention(const DenseBatch &batch,
                           const PagedAttentionParams &params,
                           const std::vector<double> *alibiSlopes = nullptr,
                           const std::vector<double> *sinks = nullptr);

/// softmax(scores) . values over a hand-listed set of keys (scalar values),
/// the form the hand-computed tests write their expectations in.
double softmaxAverage(const std::vector<double> &scores,
                      const std::vector<double> &values, double sink = -1e300);
/// log(sum exp(scores) [+ exp(sink)]).
double logSumExp(const std::vector<double> &scores, double sink = -1e300);

/// Max over elements of |got - want| / (atol + rtol * |want|); <= 1 passes.
double toleranceRatio(const std::vector<double> &got,
                      const std::vector<long double> &want, double atol,
                      double rtol);

} // namespace attn::test

#endif // ATTN_TEST_UNIT_REFERENCE_TESTUTIL_H

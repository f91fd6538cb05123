//===- Report.h - attn-diff's HTML report ---------------------*- C++ -*-===//
//
// attn-diff --report FILE.html: one self-contained page (inline CSS and
// SVG, no script, nothing fetched) that shows where a device fails. Per
// result: the verdict lines attn-diff prints, a request x head heat map of
// the worst error relative to the tolerance (|device - reference| / (atol +
// rtol |reference|), failing cells in reds, passing ones in greens), and
// for each failing request its worst error along the request's positions.
//
// The heat map's cells sit inside a 2-pixel frame of pure blue (#0000ff)
// and fill it in equal columns (heads) and rows (requests), so that a
// screenshot can be read back by colour (test/Tools/Inputs/heatmap-cells.py).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_ATTN_DIFF_REPORT_H
#define ATTN_TOOLS_ATTN_DIFF_REPORT_H

#include "reference/testing/Compare.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::diff {

/// Where a result fails, by request: its heat map and position curves.
struct RequestView {
  int64_t numRequests = 0;
  int64_t numHeads = 0;
  /// numRequests x numHeads, row-major: the worst ratio of the request's
  /// rows at the head.
  std::vector<double> requestHead;
  /// For each request with a failing element: its number and, per position
  /// (its rows in order), the worst ratio over the heads.
  std::vector<std::pair<int64_t, std::vector<double>>> failingPositions;
};

/// One result of one device run.
struct ReportResult {
  /// "result0 [51, 4, 32] bf16".
  std::string title;
  /// The lines attn-diff printed for it.
  std::vector<std::string> lines;
  bool passed = true;
  /// No heat map when the result's rows are not tokens of requests (a
  /// cache write).
  bool hasRequests = false;
  RequestView view;
};

/// One device run against the reference (a --cpu-isa level each).
struct ReportRun {
  /// The run's heading line ("attn-diff: @f on vulkan... against the
  /// reference") and any notes printed under it.
  std::vector<std::string> header;
  std::vector<ReportResult> results;
};

struct Report {
  /// The module and function diffed.
  std::string subject;
  std::vector<ReportRun> runs;
  /// "PASS" or "FAIL".
  std::string verdict;
};

/// The request view of `diff` (a result of dim(1) heads, or one column
/// below rank 2), whose row i belongs to request `requestOfRow[i]` (-1: a
/// padding row, left out). `requestOfRow` must have a row per row of the
/// result.
RequestView viewByRequest(const TensorDiff &diff,
                          const std::vector<int64_t> &requestOfRow);

/// The whole page.
std::string renderReport(const Report &report);

/// Writes the page to `path`.
llvm::Error writeReport(const std::string &path, const Report &report);

} // namespace attn::diff

#endif // ATTN_TOOLS_ATTN_DIFF_REPORT_H

//===- LaunchBounds.h - What a launch may ask of a kernel ------*- C++ -*-===//
//
// A kernel indexes its buffers with its grid position and the integers of
// its params buffer (the last argument, one i32 per parameter): a request
// count bounds the reads of seq_lens, a block count the reads of the cache.
// Plans are data (a crafted or damaged manifest can store any value), so
// the compiler declares, per kernel, the relations its accesses assume
// between those integers and the sizes of the buffers bound to it, and the
// runner checks them at every launch (runtime/device/PlanRunner.cpp) before
// the device sees it. One relation reads
//
//   min <= plus + times * (product of `of`) <= max
//
// where `of` holds parameters (p<k>: element k of the params buffer) and
// grid dimensions (g<d>), and `max` is a parameter, a grid dimension, the
// bytes of an argument (bytes<j>) or a number. Every parameter a relation
// names must also be >= 0. With the relations of a kernel true, every
// address it forms from them lies inside its arguments; values it reads
// from its buffers (block-table entries, slots, query_start_loc) are input
// data, which the host checks against the tensors (runtime/host/
// OperandChecks.h) and the kernels clamp.
//
// In a bundle the relations are the `bounds` object of a kernel's launch
// facts (core/LaunchFacts.h):
//
//   {"params": ["num_tokens", ...], "arguments": ["query", ...],
//    "checks": [{"of": ["p1"], "times": 4, "plus": 4, "min": 0,
//                "max": "bytes2"}, ...]}
//
// `params` and `arguments` name the parameters and arguments in messages.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_LAUNCHBOUNDS_H
#define ATTN_CORE_LAUNCHBOUNDS_H

#include "core/Status.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

/// A value a relation reads at launch.
struct LaunchQuantity {
  enum class Kind { Param, Grid, Bytes, Number };
  Kind kind = Kind::Number;
  /// The parameter, grid dimension or argument; the number itself.
  int64_t index = 0;

  static LaunchQuantity param(int64_t k) { return {Kind::Param, k}; }
  static LaunchQuantity grid(int64_t d) { return {Kind::Grid, d}; }
  static LaunchQuantity bytes(int64_t j) { return {Kind::Bytes, j}; }
  static LaunchQuantity number(int64_t n) { return {Kind::Number, n}; }
  bool operator==(const LaunchQuantity &) const = default;
};

/// min <= plus + times * product(of) <= max.
struct LaunchRelation {
  /// Parameters and grid dimensions only.
  std::vector<LaunchQuantity> of;
  int64_t times = 1;
  int64_t plus = 0;
  int64_t min = 0;
  LaunchQuantity max;
  bool operator==(const LaunchRelation &) const = default;
};

/// The relations of one kernel, with the names its messages use.
struct LaunchBounds {
  std::vector<std::string> params;
  std::vector<std::string> arguments;
  std::vector<LaunchRelation> checks;
  bool operator==(const LaunchBounds &) const = default;
};

/// What a launch binds: its grid, the bytes of each argument (the params
/// buffer last) and the params it holds.
struct LaunchValues {
  std::array<uint32_t, 3> grid = {0, 0, 0};
  std::span<const uint64_t> argBytes;
  std::span<const int32_t> params;
};

/// The `bounds` object of launch facts, and back. Reading checks every
/// index against the names it declares.
std::string writeLaunchBounds(const LaunchBounds &bounds);
Result<LaunchBounds> parseLaunchBounds(std::string_view json);

/// The `bounds` member of a kernel's launch facts (JSON text): nullopt
/// when it has none, an error when it is malformed.
Result<std::optional<LaunchBounds>>
readLaunchBoundsMember(std::string_view launchJson);

/// Checks every relation of `bounds` for a launch of `kernel`: an error
/// naming the kernel, the relation's parameters or grid dimensions and the
/// argument it bounds, with their values, for the first that fails.
Status checkLaunchBounds(const LaunchBounds &bounds, std::string_view kernel,
                         const LaunchValues &launch);

/// "p1 (num_reqs)", "grid.x", "bytes of argument #3 (seq_lens)", "7".
std::string describeQuantity(const LaunchBounds &bounds, LaunchQuantity q);

} // namespace attn

#endif // ATTN_CORE_LAUNCHBOUNDS_H

//===- api/named_compile_time_args.h ----------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Compile-time arguments by name: the JIT build defines
// KERNEL_COMPILE_TIME_ARG_MAP as {"name", value} pairs. No include guard, as
// in the SDK: it declares the API the first time it is included with the map
// defined (TT_METAL_NAMED_CT_ARGS_DEFINED), which api/compile_time_args.h's
// trailing include may be.
//
//===----------------------------------------------------------------------===//

#if defined(KERNEL_COMPILE_TIME_ARG_MAP) &&                                    \
    !defined(TT_METAL_NAMED_CT_ARGS_DEFINED)
#define TT_METAL_NAMED_CT_ARGS_DEFINED

#include <cstdint>
#include <string_view>
#include <utility>

namespace {
constexpr std::pair<std::string_view, uint32_t> named_args_map[] = {
    KERNEL_COMPILE_TIME_ARG_MAP};
} // namespace

/// A name the map lacks is not a constant expression, so a use fails to
/// compile.
constexpr uint32_t get_named_ct_arg(std::string_view name) {
  for (const auto &entry : named_args_map)
    if (entry.first == name)
      return entry.second;
  __builtin_unreachable();
}

constexpr uint32_t get_named_compile_time_arg_val(std::string_view name) {
  return get_named_ct_arg(name);
}

#endif

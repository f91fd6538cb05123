//===- api/compile_time_args.h ----------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Compile-time arguments arrive as -DKERNEL_COMPILE_TIME_ARGS=a,b,c when the
// kernel is JIT-compiled; get_compile_time_arg_val(i) needs a constant index
// and is itself a constant expression, as in the SDK.
//
//===----------------------------------------------------------------------===//
#ifndef TT_METAL_COMPILE_TIME_ARGS_H
#define TT_METAL_COMPILE_TIME_ARGS_H

#include <array>
#include <cstdint>

#include "internal/attn_tt_device.h"

template <class T, class... Ts>
FORCE_INLINE constexpr std::array<T, sizeof...(Ts)> make_array(Ts... values) {
  return {T(values)...};
}

#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS
#endif

constexpr auto kernel_compile_time_args =
    make_array<std::uint32_t>(KERNEL_COMPILE_TIME_ARGS);

template <uint32_t Idx> constexpr uint32_t get_ct_arg() {
  static_assert(Idx < kernel_compile_time_args.size(), "Index out of range");
  return kernel_compile_time_args[Idx];
}

#define get_compile_time_arg_val(arg_idx) get_ct_arg<arg_idx>()

#endif // TT_METAL_COMPILE_TIME_ARGS_H

// Outside the guard, as in the SDK: the named API depends on a macro a
// kernel's generated header may define after a first include.
#include "api/named_compile_time_args.h"

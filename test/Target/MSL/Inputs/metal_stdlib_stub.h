//===- metal_stdlib_stub.h - Metal's declarations, for clang -----*- C++ -*-===//
//
// NOT Metal's standard library. A stand-in that lets clang++ type-check the
// MSL that attn emits (through SPIRV-Cross) as C++, on machines without
// Apple's Metal compiler: lit's %clang_msl_check (test/lit.cfg.py) runs
// clang++ -std=c++14 -fsyntax-only with Inputs/include on the include path,
// where <metal_stdlib> and <simd/simd.h> lead here.
//
// It declares only what the emitted code uses, with Metal's signatures, and
// no definitions: a kernel that calls anything else (a new builtin, a
// misspelled one, a wrong argument type) fails the check, and the
// declaration goes here only after checking it in Apple's Metal Shading
// Language Specification. Metal's attributes ([[buffer(n)]],
// [[thread_position_in_threadgroup]], ...) become clang::annotate, so the
// check runs with -Werror=unknown-attributes: an attribute not listed here
// is an error too. Address spaces are erased (device, threadgroup) or become
// const (constant), which checks less than Metal does.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_METAL_STDLIB_STUB_H
#define ATTN_TEST_METAL_STDLIB_STUB_H

// Function and address-space qualifiers.
#define kernel [[clang::annotate("metal_kernel")]]
#define device
#define threadgroup
#define thread
#define constant const

// Attributes of kernel parameters; each keeps its argument checked as a
// constant expression.
#define buffer(index) clang::annotate("metal_buffer", index)
#define thread_position_in_grid clang::annotate("thread_position_in_grid")
#define thread_position_in_threadgroup                                         \
  clang::annotate("thread_position_in_threadgroup")
#define threadgroup_position_in_grid                                           \
  clang::annotate("threadgroup_position_in_grid")
#define simdgroup_index_in_threadgroup                                         \
  clang::annotate("simdgroup_index_in_threadgroup")
#define thread_index_in_simdgroup                                              \
  clang::annotate("thread_index_in_simdgroup")

namespace metal {

using uint = unsigned int;
using ushort = unsigned short;
using ulong = unsigned long;
using half = _Float16;
template <typename T, uint N> using vec = T __attribute__((ext_vector_type(N)));

struct uint2 {
  uint x, y;
  constexpr uint2() : x(0), y(0) {}
  constexpr uint2(uint x, uint y) : x(x), y(y) {}
};

struct uint3 {
  uint x, y, z;
  constexpr uint3() : x(0), y(0), z(0) {}
  constexpr uint3(uint x, uint y, uint z) : x(x), y(y), z(z) {}
};

// The words of workgroup-memory tiles (16 bytes).
struct uint4 {
  uint x, y, z, w;
  constexpr uint4() : x(0), y(0), z(0), w(0) {}
  constexpr uint4(uint x, uint y, uint z, uint w) : x(x), y(y), z(z), w(w) {}
};

/// Reinterprets the bits of a value of the same size.
template <typename T, typename U> T as_type(U value) {
  static_assert(sizeof(T) == sizeof(U), "as_type needs equal sizes");
  return __builtin_bit_cast(T, value);
}

bool isnan(float x);
bool isnan(half x);
float abs(float x);
float exp(float x);
float exp2(float x);
float fma(float a, float b, float c);
float log(float x);
float min(float x, float y);
int min(int x, int y);
uint min(uint x, uint y);
float max(float x, float y);
int max(int x, int y);
uint max(uint x, uint y);

namespace fast {
float max(float x, float y);
} // namespace fast

namespace precise {
float tanh(float x);
} // namespace precise

// SIMD-group functions (MSL 2.0 shuffles, 2.1 reductions on macOS).
float simd_sum(float x);
// T: any scalar or vector type (SPIRV-Cross's helpers also shuffle bools
// as ushort and bool vectors as ushort vectors).
template <typename T> T simd_shuffle_xor(T data, ushort mask);

// Threadgroup synchronization.
enum class mem_flags {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
};
void threadgroup_barrier(mem_flags flags);

} // namespace metal

#endif // ATTN_TEST_METAL_STDLIB_STUB_H

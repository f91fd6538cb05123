// fp8-calls (what the PTX target sets): the kernels call the fp8 codec as
// private functions of their gpu.module, marked with the format, whose
// bodies are the integer codec, so that the PTX pipeline can give them the
// chip's conversions (test/Conversion/GPUToNVVM/fp8-convert.mlir). The
// cache write divides first, then calls: the call takes the f32 quotient.
// Without the option (every other target) the codec is inline.
// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="fp8-calls" | FileCheck %s
// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu | FileCheck %s --check-prefix=INLINE

// CHECK-LABEL: gpu.module @write_reshape_and_cache
// CHECK: func.func private @__attn_f32_to_fp8_e4m3(%[[Q:.*]]: f32) -> i8 attributes {attn.f32_to_fp8 = f8E4M3FN}
// CHECK: arith.bitcast %[[Q]] : f32 to i32
// CHECK: arith.cmpf uno, %[[Q]], %[[Q]] : f32
// CHECK: return %{{.*}} : i8
// CHECK: gpu.func @write_reshape_and_cache
// CHECK: %[[QUOT:.*]] = arith.divf
// CHECK: %[[BYTE:.*]] = func.call @__attn_f32_to_fp8_e4m3(%[[QUOT]]) : (f32) -> i8
// CHECK-NOT: attn.f32_to_fp8
// CHECK: memref.store %[[BYTE]]
// INLINE-LABEL: gpu.module @write_reshape_and_cache
// INLINE-NOT: func.
// INLINE: gpu.func @write_reshape_and_cache
// INLINE: arith.divf
// INLINE: arith.cmpf uno
// INLINE-NOT: func.call
// INLINE: gpu.return
func.func @write(%k: memref<?x2x64xbf16>, %v: memref<?x2x64xbf16>,
                 %slots: memref<?xi64>, %c: memref<?x2x16x2x64xf8E4M3FN>,
                 %ks: memref<1xf32>, %vs: memref<1xf32>) {
  attn.reshape_and_cache %k, %v, %slots k_scale(%ks : memref<1xf32>)
      v_scale(%vs : memref<1xf32>) outs(%c) layout(nhd)
      : memref<?x2x64xbf16>, memref<?x2x64xbf16>, memref<?xi64>,
        memref<?x2x16x2x64xf8E4M3FN>
  return
}

// -----

// Reads: one function per format and shape converted (here bytes one at a
// time), defined once in each gpu.module that calls it.
// CHECK-LABEL: gpu.module @read_paged_attention
// CHECK-DAG: func.func private @__attn_fp8_e5m2_to_f32(%{{.*}}: i8) -> f32 attributes {attn.fp8_to_f32 = f8E5M2}
// CHECK: gpu.func @read_paged_attention
// CHECK: func.call @__attn_fp8_e5m2_to_f32(%{{.*}}) : (i8) -> f32
// CHECK-NOT: func.func
// CHECK-LABEL: gpu.module @read_paged_attention_prefill
// CHECK: func.func private @__attn_fp8_e5m2_to_f32(%{{.*}}: i8) -> f32
// CHECK-NOT: func.func
// CHECK: gpu.func @read_paged_attention_prefill
// CHECK: func.call @__attn_fp8_e5m2_to_f32
// INLINE-LABEL: gpu.module @read_paged_attention
// INLINE-NOT: func.
// INLINE: gpu.func @read_paged_attention
func.func @read(%q: memref<?x8x64xf16>, %c: memref<?x2x16x2x64xf8E5M2>,
                %qsl: memref<?xi32>, %lens: memref<?xi32>,
                %bt: memref<?x?xi32>, %ks: memref<1xf32>, %vs: memref<1xf32>,
                %o: memref<?x8x64xf16>, %l: memref<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md k_scale(%ks : memref<1xf32>)
      v_scale(%vs : memref<1xf32>) outs(%o, %l) layout(nhd) scale(0.125)
      : memref<?x8x64xf16>, memref<?x2x16x2x64xf8E5M2>,
        memref<?x8x64xf16>, memref<?x8xf32>
  return
}

// fp8-via-f16: an fp8 cache row widens through f16 (a byte shift, the f16 to
// f32 conversion, and for e4m3 the factor 2^8 that rebiases its exponent;
// its magnitude 0x7F stays NaN). Without the option the widening is integer
// operations only. Whether the values are exact is checked by running the
// cpu target against the reference (test/e2e/cpu/fp8.test).
// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="row-vectors subgroup-size=1 attention-subgroups=1 fp8-via-f16" | FileCheck %s
// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="row-vectors subgroup-size=1 attention-subgroups=1" | FileCheck %s --check-prefix=INT

// CHECK-LABEL: gpu.func @e4m3_paged_attention
// CHECK: %[[KEY:.*]] = vector.load %arg1[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK: %[[WIDE:.*]] = arith.extui %[[KEY]] : vector<32xi8> to vector<32xi16>
// CHECK: %[[HIGH:.*]] = arith.shli %[[WIDE]], %{{.*}} : vector<32xi16>
// CHECK: %[[MAG:.*]] = arith.andi %[[WIDE]], %{{.*}} : vector<32xi16>
// CHECK: %[[NAN:.*]] = arith.cmpi eq, %[[MAG]], %{{.*}} : vector<32xi16>
// CHECK: %[[BITS:.*]] = arith.select %[[NAN]], %{{.*}}, %{{.*}} : vector<32xi1>, vector<32xi16>
// CHECK: %[[HALF:.*]] = arith.bitcast %[[BITS]] : vector<32xi16> to vector<32xf16>
// CHECK: %[[F32:.*]] = arith.extf %[[HALF]] : vector<32xf16> to vector<32xf32>
// CHECK: arith.mulf %[[F32]], %{{.*}} : vector<32xf32>
// INT-LABEL: gpu.func @e4m3_paged_attention
// INT-NOT: vector<32xf16>
// INT: gpu.return
func.func @e4m3(%q: memref<?x8x32xbf16>, %c: memref<?x2x16x2x32xf8E4M3FN>,
                %qsl: memref<?xi32>, %lens: memref<?xi32>,
                %bt: memref<?x?xi32>, %ks: memref<1xf32>, %vs: memref<1xf32>,
                %o: memref<?x8x32xbf16>, %l: memref<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md k_scale(%ks : memref<1xf32>)
      v_scale(%vs : memref<1xf32>) outs(%o, %l) layout(nhd) scale(0.125)
      : memref<?x8x32xbf16>, memref<?x2x16x2x32xf8E4M3FN>,
        memref<?x8x32xbf16>, memref<?x8xf32>
  return
}

// -----

// e5m2 is the high byte of an f16: the shift is the whole conversion, NaN and
// infinity included.
// CHECK-LABEL: gpu.func @e5m2_paged_attention
// CHECK: %[[KEY:.*]] = vector.load %arg1[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK: %[[WIDE:.*]] = arith.extui %[[KEY]] : vector<32xi8> to vector<32xi16>
// CHECK: %[[HIGH:.*]] = arith.shli %[[WIDE]], %{{.*}} : vector<32xi16>
// CHECK: %[[HALF:.*]] = arith.bitcast %[[HIGH]] : vector<32xi16> to vector<32xf16>
// CHECK: arith.extf %[[HALF]] : vector<32xf16> to vector<32xf32>
func.func @e5m2(%q: memref<?x8x32xbf16>, %c: memref<?x2x16x2x32xf8E5M2>,
                %qsl: memref<?xi32>, %lens: memref<?xi32>,
                %bt: memref<?x?xi32>, %ks: memref<1xf32>, %vs: memref<1xf32>,
                %o: memref<?x8x32xbf16>, %l: memref<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md k_scale(%ks : memref<1xf32>)
      v_scale(%vs : memref<1xf32>) outs(%o, %l) layout(nhd) scale(0.125)
      : memref<?x8x32xbf16>, memref<?x2x16x2x32xf8E5M2>,
        memref<?x8x32xbf16>, memref<?x8xf32>
  return
}

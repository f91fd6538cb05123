// RUN: attn-opt %s --attn-cpu-bf16-dot --split-input-file | FileCheck %s

// A head-size-128 dot product of bf16 rows: four 32-pair VDPBF16PS into two
// alternating accumulators, then one sum of their lanes.
// CHECK-LABEL: func.func @row128
// CHECK-SAME: (%[[A:.*]]: vector<128xbf16>, %[[B:.*]]: vector<128xbf16>)
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: %[[A0:.*]] = vector.extract_strided_slice %[[A]] {offsets = [0], sizes = [32], strides = [1]}
// CHECK: %[[B0:.*]] = vector.extract_strided_slice %[[B]] {offsets = [0], sizes = [32], strides = [1]}
// CHECK: %[[D0:.*]] = x86vector.avx512.dot %[[ZERO]], %[[A0]], %[[B0]] : vector<32xbf16> -> vector<16xf32>
// CHECK: %[[D1:.*]] = x86vector.avx512.dot %[[ZERO]], %{{.*}}, %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: %[[A2:.*]] = vector.extract_strided_slice %[[A]] {offsets = [64], sizes = [32], strides = [1]}
// CHECK: %[[D2:.*]] = x86vector.avx512.dot %[[D0]], %[[A2]], %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: %[[D3:.*]] = x86vector.avx512.dot %[[D1]], %{{.*}}, %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[D2]], %[[D3]] fastmath<reassoc,contract> : vector<16xf32>
// CHECK: %[[R:.*]] = vector.reduction <add>, %[[SUM]] fastmath<reassoc,contract> : vector<16xf32> into f32
// CHECK: return %[[R]]
// CHECK-NOT: arith.extf
func.func @row128(%a: vector<128xbf16>, %b: vector<128xbf16>) -> f32 {
  %af = arith.extf %a : vector<128xbf16> to vector<128xf32>
  %bf = arith.extf %b : vector<128xbf16> to vector<128xf32>
  %p = arith.mulf %af, %bf fastmath<reassoc,contract> : vector<128xf32>
  %s = vector.reduction <add>, %p fastmath<reassoc,contract> : vector<128xf32> into f32
  return %s : f32
}

// -----

// A row of 24: three 8-pair instructions (128-bit), alternating; the
// reduction's accumulator is kept.
// CHECK-LABEL: func.func @row24
// CHECK-SAME: %[[ACC:[^:]*]]: f32
// CHECK-COUNT-3: x86vector.avx512.dot %{{.*}}, %{{.*}}, %{{.*}} : vector<8xbf16> -> vector<4xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : vector<4xf32>
// CHECK: vector.reduction <add>, %{{.*}}, %[[ACC]] fastmath<reassoc> : vector<4xf32> into f32
func.func @row24(%a: vector<24xbf16>, %b: vector<24xbf16>, %acc: f32) -> f32 {
  %af = arith.extf %a : vector<24xbf16> to vector<24xf32>
  %bf = arith.extf %b : vector<24xbf16> to vector<24xf32>
  %p = arith.mulf %af, %bf : vector<24xf32>
  %s = vector.reduction <add>, %p, %acc fastmath<reassoc> : vector<24xf32> into f32
  return %s : f32
}

// -----

// A row of 16: one 16-pair instruction (256-bit), one accumulator.
// CHECK-LABEL: func.func @row16
// CHECK: %[[D:.*]] = x86vector.avx512.dot %{{.*}}, %{{.*}}, %{{.*}} : vector<16xbf16> -> vector<8xf32>
// CHECK-NOT: x86vector.avx512.dot
// CHECK: vector.reduction <add>, %[[D]] fastmath<reassoc> : vector<8xf32> into f32
func.func @row16(%a: vector<16xbf16>, %b: vector<16xbf16>) -> f32 {
  %af = arith.extf %a : vector<16xbf16> to vector<16xf32>
  %bf = arith.extf %b : vector<16xbf16> to vector<16xf32>
  %p = arith.mulf %af, %bf : vector<16xf32>
  %s = vector.reduction <add>, %p fastmath<reassoc> : vector<16xf32> into f32
  return %s : f32
}

// -----

// Left alone: a sum that may not reassociate (the pairs would change its
// order), a row of no whole register of pairs, f16 rows, a product with a
// row that is not widened from bf16, and a max.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: x86vector
// CHECK-COUNT-5: vector.reduction
func.func @kept(%a: vector<128xbf16>, %b: vector<128xbf16>,
                %c: vector<12xbf16>, %h: vector<16xf16>,
                %f: vector<128xf32>) -> (f32, f32, f32, f32, f32) {
  %af = arith.extf %a : vector<128xbf16> to vector<128xf32>
  %bf = arith.extf %b : vector<128xbf16> to vector<128xf32>
  %p = arith.mulf %af, %bf : vector<128xf32>
  %ordered = vector.reduction <add>, %p : vector<128xf32> into f32
  %cf = arith.extf %c : vector<12xbf16> to vector<12xf32>
  %pc = arith.mulf %cf, %cf : vector<12xf32>
  %odd = vector.reduction <add>, %pc fastmath<reassoc> : vector<12xf32> into f32
  %hf = arith.extf %h : vector<16xf16> to vector<16xf32>
  %ph = arith.mulf %hf, %hf : vector<16xf32>
  %half = vector.reduction <add>, %ph fastmath<reassoc> : vector<16xf32> into f32
  %pf = arith.mulf %af, %f : vector<128xf32>
  %mixed = vector.reduction <add>, %pf fastmath<reassoc> : vector<128xf32> into f32
  %max = vector.reduction <maxnumf>, %p fastmath<reassoc> : vector<128xf32> into f32
  return %ordered, %odd, %half, %mixed, %max : f32, f32, f32, f32, f32
}

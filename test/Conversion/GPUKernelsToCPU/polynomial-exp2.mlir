// RUN: attn-opt %s --attn-cpu-polynomial-exp2 | FileCheck %s

// math.exp2 on f32, scalar or vector, becomes arithmetic: a clamp to
// [-127, 128] with NaN set aside, n = roundeven(x), a degree-7 polynomial
// in x - n by seven FMAs, 2^n from the exponent field, NaN put back.
// Numbers are checked by the cpu e2e grid against the reference.

// CHECK-LABEL: func.func @f32_scalar
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NOT: math.exp2
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[LO:.*]] = arith.maximumf %[[X]], %{{.*}} : f32
// CHECK: %[[HI:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK: %[[C:.*]] = arith.select %[[NAN]], %{{.*}}, %[[HI]] : f32
// CHECK: %[[N:.*]] = math.roundeven %[[C]] : f32
// CHECK: %[[R:.*]] = arith.subf %[[C]], %[[N]] : f32
// CHECK-COUNT-7: math.fma %{{.*}}, %[[R]], %{{.*}} : f32
// CHECK: %[[I:.*]] = arith.fptosi %[[N]] : f32 to i32
// CHECK: %[[E:.*]] = arith.addi %[[I]], %c127_i32 : i32
// CHECK: %[[BITS:.*]] = arith.shli %[[E]], %c23_i32 : i32
// CHECK: %[[SCALE:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK: %[[Y:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: %[[OUT:.*]] = arith.select %[[NAN]], %[[X]], %[[Y]] : f32
// CHECK: return %[[OUT]]
func.func @f32_scalar(%x: f32) -> f32 {
  %y = math.exp2 %x : f32
  return %y : f32
}

// CHECK-LABEL: func.func @f32_vector
// CHECK-NOT: math.exp2
// CHECK: math.roundeven %{{.*}} : vector<16xf32>
// CHECK-COUNT-7: math.fma %{{.*}} : vector<16xf32>
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
func.func @f32_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.exp2 %x : vector<16xf32>
  return %y : vector<16xf32>
}

// Other element types keep math.exp2.
// CHECK-LABEL: func.func @f16_kept
// CHECK: math.exp2 %{{.*}} : vector<8xf16>
func.func @f16_kept(%x: vector<8xf16>) -> vector<8xf16> {
  %y = math.exp2 %x : vector<8xf16>
  return %y : vector<8xf16>
}

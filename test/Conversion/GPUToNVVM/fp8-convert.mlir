// attn-nvvm-fp8-convert: the fp8 codec functions of convert-attn-to-gpu
// (fp8-calls) get PTX's conversions where every #nvvm.target of their
// gpu.module has them (sm_90 on; sm_89 from PTX ISA 8.1) and keep their
// integer bodies elsewhere; both are inlined and the functions erased.
// Which PTX each chip gets: test/Target/PTX/fp8.test.
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-nvvm-fp8-convert | FileCheck %s

// A write: the quotient into the low byte of the pair (operand b), the
// high one a zero; a NaN quotient is selected apart as its sign and 0x7F,
// the reference's byte.
// CHECK-LABEL: gpu.module @write
// CHECK-NOT: func.func
// CHECK: gpu.func @write(%[[Q:.*]]: f32, %[[OUT:.*]]: memref<?xi8>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PAIR:.*]] = nvvm.convert.f32x2.to.f8x2 %[[ZERO]], %[[Q]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: %[[BYTE:.*]] = arith.trunci %[[PAIR]] : i16 to i8
// CHECK: %[[BITS:.*]] = arith.bitcast %[[Q]] : f32 to i32
// CHECK: %[[TOP:.*]] = arith.shrui %[[BITS]], %{{.*}} : i32
// CHECK: %[[OR:.*]] = arith.ori %[[TOP]], %{{.*}} : i32
// CHECK: %[[NANBYTE:.*]] = arith.trunci %[[OR]] : i32 to i8
// CHECK: %[[ISNAN:.*]] = arith.cmpf uno, %[[Q]], %[[Q]] : f32
// CHECK: %[[W:.*]] = arith.select %[[ISNAN]], %[[NANBYTE]], %[[BYTE]] : i8
// CHECK: memref.store %[[W]], %[[OUT]]
// CHECK-NOT: func.call
gpu.module @write [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
  func.func private @__attn_f32_to_fp8_e4m3(%q: f32) -> i8
      attributes {attn.f32_to_fp8 = f8E4M3FN} {
    %b = arith.fptoui %q : f32 to i8
    return %b : i8
  }
  gpu.func @write(%q: f32, %out: memref<?xi8>) kernel {
    %c0 = arith.constant 0 : index
    %b = func.call @__attn_f32_to_fp8_e4m3(%q) : (f32) -> i8
    memref.store %b, %out[%c0] : memref<?xi8>
    gpu.return
  }
}

// -----

// Reads: a byte with a zero beside it, a row of bytes by pairs (the last
// one alone), each pair through cvt.rn.f16x2 and widened to f32.
// CHECK-LABEL: gpu.module @read
// CHECK-NOT: func.func
// CHECK: gpu.func @read(%[[B:.*]]: i8, %[[ROW:.*]]: vector<3xi8>
// CHECK: %[[LONE:.*]] = vector.from_elements %[[B]], %{{.*}} : vector<2xi8>
// CHECK: %[[H:.*]] = nvvm.convert.f8x2.to.f16x2 %[[LONE]] : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK: arith.extf %[[H]] : vector<2xf16> to vector<2xf32>
// CHECK: %[[P0:.*]] = vector.shuffle %[[ROW]], %[[ROW]] [0, 1] : vector<3xi8>, vector<3xi8>
// CHECK: nvvm.convert.f8x2.to.f16x2 %[[P0]] : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK: %[[LAST:.*]] = vector.extract %[[ROW]][2] : i8 from vector<3xi8>
// CHECK: %[[P1:.*]] = vector.from_elements %[[LAST]], %{{.*}} : vector<2xi8>
// CHECK: nvvm.convert.f8x2.to.f16x2 %[[P1]] : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}} : vector<3xf32>
// CHECK-NOT: func.call
gpu.module @read [#nvvm.target<chip = "sm_120", features = "+ptx87">] {
  func.func private @__attn_fp8_e5m2_to_f32(%b: i8) -> f32
      attributes {attn.fp8_to_f32 = f8E5M2} {
    %f = arith.uitofp %b : i8 to f32
    return %f : f32
  }
  func.func private @__attn_fp8_e5m2_to_f32_v3(%b: vector<3xi8>)
      -> vector<3xf32> attributes {attn.fp8_to_f32 = f8E5M2} {
    %f = arith.uitofp %b : vector<3xi8> to vector<3xf32>
    return %f : vector<3xf32>
  }
  gpu.func @read(%b: i8, %row: vector<3xi8>, %out: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %f = func.call @__attn_fp8_e5m2_to_f32(%b) : (i8) -> f32
    %r = func.call @__attn_fp8_e5m2_to_f32_v3(%row)
        : (vector<3xi8>) -> vector<3xf32>
    memref.store %f, %out[%c0] : memref<?xf32>
    vector.store %r, %out[%c0] : memref<?xf32>, vector<3xf32>
    gpu.return
  }
}

// -----

// sm_80 has no fp8 cvt, nor has sm_89 before PTX ISA 8.1 (LLVM cannot
// select it there); one such target among several keeps the integer codec
// for the module.
// CHECK-LABEL: gpu.module @sm80
// CHECK-NOT: func.func
// CHECK: %[[F:.*]] = arith.uitofp %{{.*}} : i8 to f32
// CHECK: memref.store %[[F]]
// CHECK-LABEL: gpu.module @sm89_ptx80
// CHECK-NOT: nvvm.convert
// CHECK: arith.uitofp
// CHECK-LABEL: gpu.module @sm89_ptx81
// CHECK: nvvm.convert.f8x2.to.f16x2
// CHECK-LABEL: gpu.module @two_targets
// CHECK-NOT: nvvm.convert
// CHECK: arith.uitofp
// CHECK-NOT: nvvm.convert
gpu.module @sm80 [#nvvm.target<chip = "sm_80", features = "+ptx80">] {
  func.func private @__attn_fp8_e4m3_to_f32(%b: i8) -> f32
      attributes {attn.fp8_to_f32 = f8E4M3FN} {
    %f = arith.uitofp %b : i8 to f32
    return %f : f32
  }
  gpu.func @k(%b: i8, %out: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %f = func.call @__attn_fp8_e4m3_to_f32(%b) : (i8) -> f32
    memref.store %f, %out[%c0] : memref<?xf32>
    gpu.return
  }
}
gpu.module @sm89_ptx80 [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
  func.func private @__attn_fp8_e4m3_to_f32(%b: i8) -> f32
      attributes {attn.fp8_to_f32 = f8E4M3FN} {
    %f = arith.uitofp %b : i8 to f32
    return %f : f32
  }
  gpu.func @k(%b: i8, %out: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %f = func.call @__attn_fp8_e4m3_to_f32(%b) : (i8) -> f32
    memref.store %f, %out[%c0] : memref<?xf32>
    gpu.return
  }
}
gpu.module @sm89_ptx81 [#nvvm.target<chip = "sm_89", features = "+ptx81">] {
  func.func private @__attn_fp8_e4m3_to_f32(%b: i8) -> f32
      attributes {attn.fp8_to_f32 = f8E4M3FN} {
    %f = arith.uitofp %b : i8 to f32
    return %f : f32
  }
  gpu.func @k(%b: i8, %out: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %f = func.call @__attn_fp8_e4m3_to_f32(%b) : (i8) -> f32
    memref.store %f, %out[%c0] : memref<?xf32>
    gpu.return
  }
}
gpu.module @two_targets [#nvvm.target<chip = "sm_90", features = "+ptx80">,
                         #nvvm.target<chip = "sm_80", features = "+ptx80">] {
  func.func private @__attn_fp8_e4m3_to_f32(%b: i8) -> f32
      attributes {attn.fp8_to_f32 = f8E4M3FN} {
    %f = arith.uitofp %b : i8 to f32
    return %f : f32
  }
  gpu.func @k(%b: i8, %out: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %f = func.call @__attn_fp8_e4m3_to_f32(%b) : (i8) -> f32
    memref.store %f, %out[%c0] : memref<?xf32>
    gpu.return
  }
}

// -----

// expected-error @+1 {{attn-nvvm-fp8-convert expects an #nvvm.target on gpu.module @untargeted, which calls the fp8 codec (run nvvm-attach-target first)}}
gpu.module @untargeted {
  func.func private @__attn_fp8_e4m3_to_f32(%b: i8) -> f32
      attributes {attn.fp8_to_f32 = f8E4M3FN} {
    %f = arith.uitofp %b : i8 to f32
    return %f : f32
  }
}

// -----

gpu.module @bad_signature [#nvvm.target<chip = "sm_90">] {
  // expected-error @+1 {{attn-nvvm-fp8-convert expects an fp8 codec function of one block, i8 (or a vector of i8) to f32 or f32 to i8, got '(f32) -> f32'}}
  func.func private @__attn_fp8_e4m3_to_f32(%b: f32) -> f32
      attributes {attn.fp8_to_f32 = f8E4M3FN} {
    return %b : f32
  }
}

// -----

gpu.module @declared [#nvvm.target<chip = "sm_80">] {
  // expected-error @+1 {{attn-nvvm-fp8-convert expects an fp8 codec function of one block}}
  func.func private @__attn_f32_to_fp8_e5m2(f32) -> i8
      attributes {attn.f32_to_fp8 = f8E5M2}
}

// -----

gpu.module @not_a_call [#nvvm.target<chip = "sm_90">] {
  func.func private @__attn_fp8_e4m3_to_f32(%b: i8) -> f32
      attributes {attn.fp8_to_f32 = f8E4M3FN} {
    %f = arith.uitofp %b : i8 to f32
    return %f : f32
  }
  gpu.func @k() kernel {
    // expected-error @+1 {{attn-nvvm-fp8-convert expects only calls of @__attn_fp8_e4m3_to_f32}}
    %f = func.constant @__attn_fp8_e4m3_to_f32 : (i8) -> f32
    gpu.return
  }
}

// RUN: attn-opt %s --attn-spirv-vector-loads | FileCheck %s
// RUN: attn-opt %s --attn-spirv-vector-loads="alias=false" | FileCheck %s --check-prefix=SCALAR

// Wide loads from kernel arguments. With alias, each (argument, width)
// gets a second argument of 32- or 64-bit words bound to the same buffer
// (binding 0 or 1 of set 0, as the original), the load reads one word
// vector at element index / count, and extracts take their bits from it:
// bf16 element 3 of 8 is the high half of word 1, f32 element 1 is word 1;
// 32 bytes are four i64. The launch passes the same buffers again.
// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[A:.*]]: memref<?xi16>, %[[B:.*]]: memref<?xf32>)
// CHECK: %[[A16:.*]] = builtin.unrealized_conversion_cast %[[A]] : memref<?xi16> to memref<?xvector<4xi32>>
// CHECK: %[[A32:.*]] = builtin.unrealized_conversion_cast %[[A]] : memref<?xi16> to memref<?xvector<4xi64>>
// CHECK: %[[B16:.*]] = builtin.unrealized_conversion_cast %[[B]] : memref<?xf32> to memref<?xvector<4xi32>>
// CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[A]] : memref<?xi16>, %[[B]] : memref<?xf32>, %[[A16]] : memref<?xvector<4xi32>>, %[[A32]] : memref<?xvector<4xi64>>, %[[B16]] : memref<?xvector<4xi32>>)
// CHECK: gpu.func @k(%{{.*}}: memref<?xi16> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 0)>}, %{{.*}}: memref<?xf32> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 1)>}, %[[KA16:.*]]: memref<?xvector<4xi32>> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 0)>}, %[[KA32:.*]]: memref<?xvector<4xi64>> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 0)>}, %[[KB16:.*]]: memref<?xvector<4xi32>> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 1)>})
// CHECK-NOT: vector.load
// CHECK: %[[I8:.*]] = arith.divui %[[I:.*]], %c8
// CHECK: %[[W:.*]] = memref.load %[[KA16]][%[[I8]]] : memref<?xvector<4xi32>>
// CHECK: %[[W1:.*]] = vector.extract %[[W]][1] : i32 from vector<4xi32>
// CHECK: %[[HI:.*]] = arith.shrui %[[W1]], %c16_i32 : i32
// CHECK: arith.trunci %[[HI]] : i32 to i16
// CHECK: %[[I16:.*]] = arith.divui %[[I]], %c16
// CHECK: %[[W64:.*]] = memref.load %[[KA32]][%[[I16]]] : memref<?xvector<4xi64>>
// CHECK: memref.store %[[W64]]
// CHECK: %[[I4:.*]] = arith.divui %[[I]], %c4
// CHECK: %[[F:.*]] = memref.load %[[KB16]][%[[I4]]] : memref<?xvector<4xi32>>
// CHECK: %[[F1:.*]] = vector.extract %[[F]][1] : i32 from vector<4xi32>
// CHECK: arith.bitcast %[[F1]] : i32 to f32
//
// Without alias: each element is a scalar load, and words are built from
// them (four i64 of four i16 each).
// SCALAR-LABEL: gpu.func @k(
// SCALAR-SAME: %[[SA:.*]]: memref<?xi16>, %[[SB:.*]]: memref<?xf32>)
// SCALAR-COUNT-8: memref.load %[[SA]]
// SCALAR-COUNT-16: memref.load %[[SA]]
// SCALAR: arith.extui %{{.*}} : i16 to i64
// SCALAR: vector.from_elements %{{.*}} : vector<4xi64>
// SCALAR-COUNT-4: memref.load %[[SB]]
module attributes {gpu.container_module} {
  func.func @host(%a: memref<?xi16>, %b: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%a : memref<?xi16>, %b : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xi16>, %b: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %i = arith.muli %t, %c32 : index
      %wg = memref.alloca() : memref<4xvector<4xi64>>
      %v = vector.load %a[%i] {alignment = 16 : i64}
          : memref<?xi16>, vector<8xi16>
      %e = vector.extract %v[3] : i16 from vector<8xi16>
      %w = vector.load %a[%i] {alignment = 32 : i64}
          : memref<?xi16>, vector<16xi16>
      %words = vector.bitcast %w : vector<16xi16> to vector<4xi64>
      memref.store %words, %wg[%t] : memref<4xvector<4xi64>>
      %f = vector.load %b[%i] {alignment = 16 : i64}
          : memref<?xf32>, vector<4xf32>
      %f1 = vector.extract %f[1] : f32 from vector<4xf32>
      %ext = arith.extui %e : i16 to i32
      %ef = arith.uitofp %ext : i32 to f32
      %sum = arith.addf %ef, %f1 : f32
      memref.store %sum, %b[%t] : memref<?xf32>
      gpu.return
    }
  }
}


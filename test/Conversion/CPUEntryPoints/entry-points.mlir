// RUN: attn-opt %s --split-input-file --attn-cpu-entry-points | FileCheck %s

// The kernel body keeps upstream's memref convention under a private name;
// its entry (the kernel's name) takes the work item, the buffer pointers
// and the element counts, and passes buffer i as (p, p, 0, elements[i], 1).
// CHECK-LABEL: llvm.func internal @k.work_item
// CHECK-NOT: attn.cpu_kernel
// CHECK-LABEL: llvm.func @k(
// CHECK-SAME: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[Y:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[Z:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i64)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64)
// CHECK: %[[P0:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[N0:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[P1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[N1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: llvm.call @k.work_item(%[[X]], %[[Y]], %[[Z]], %[[P0]], %[[P0]], %[[ZERO]], %[[N0]], %[[ONE]], %[[P1]], %[[P1]], %[[ZERO]], %[[N1]], %[[ONE]])
// CHECK: llvm.mlir.global external constant @attn_cpu_abi(1 : i32)
module {
  llvm.func @k(%x: i64, %y: i64, %z: i64,
               %a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64, %a3: i64, %a4: i64,
               %b0: !llvm.ptr, %b1: !llvm.ptr, %b2: i64, %b3: i64, %b4: i64)
      attributes {attn.cpu_kernel} {
    llvm.return
  }
}

// -----

// A module without CPU kernels is left as it is.
// CHECK-LABEL: llvm.func @plain
// CHECK-NOT: attn_cpu_abi
module {
  llvm.func @plain() {
    llvm.return
  }
}

// RUN: attn-opt %s --attn-cpu-entry-points -verify-diagnostics

// expected-error @below {{cpu kernel @k must take three i64 work item indices and then 1-D memrefs (pointer, pointer, i64 offset, size, stride each)}}
llvm.func @k(%x: i64, %y: i64, %z: i64, %a: !llvm.ptr)
    attributes {attn.cpu_kernel} {
  llvm.return
}

// RUN: attn-opt --convert-attn-to-ttkernel -split-input-file %s | FileCheck %s

// CHECK-LABEL: module @decode attributes {ttk.program =
// CHECK-SAME: circular_buffers = [{data_format = "Float16_b", id = 0 : i64, name = "q", num_pages = 2
// CHECK-SAME: {data_format = "Float32", id = 3 : i64, name = "mask"
// CHECK-SAME: kind = "reader"
// CHECK-SAME: fp32_dest_acc_en = true, kind = "compute"
// CHECK-SAME: op = "paged_attention"
// CHECK-SAME: runtime_args = ["q_addr", "kv_addr", "bt_addr"
// CHECK: func.func @reader() attributes {ttk.thread = "reader"}
// CHECK: emitc.call_opaque "get_compile_time_arg_val"() {args = [0 : i32]}
// CHECK: emitc.call_opaque "get_arg_val"() {args = [0 : i32], template_args = [!emitc.opaque<"uint32_t">]}
// CHECK: "emitc.member"(%{{.*}}) <{member = "bank_base_address"}>
// CHECK: emitc.call_opaque "cb_reserve_back"
// CHECK: scf.for
// CHECK: emitc.call_opaque "get_noc_addr"
// CHECK: emitc.call_opaque "noc_async_read"
// Page-table read: one block id into the scratch buffer, then loaded.
// CHECK: emitc.call_opaque "noc_async_read_barrier"
// CHECK: emitc.subscript
// CHECK: func.func @compute() attributes {ttk.thread = "compute"}
// CHECK: emitc.call_opaque "matmul_tiles"
// CHECK: emitc.call_opaque "reduce_tile"({{.*}}) {template_args = [#emitc.opaque<"PoolType::MAX">, #emitc.opaque<"ReduceDim::REDUCE_ROW">]}
// CHECK: emitc.call_opaque "exp_tile"
// CHECK: emitc.call_opaque "pack_tile"
// CHECK: func.func @writer() attributes {ttk.thread = "writer"}
// CHECK: emitc.call_opaque "noc_async_write"
// CHECK-NOT: func.func @decode
func.func @decode(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x16x2x64xbf16>,
                  %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                  %qsl: tensor<?xi32>, %o: tensor<?x8x64xbf16>,
                  %l: tensor<?x8xf32>)
    -> (tensor<?x8x64xbf16>, tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd)
      scale(0.125)
      : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xbf16>, tensor<?x8x64xbf16>,
        tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return %out, %lse : tensor<?x8x64xbf16>, tensor<?x8xf32>
}

// -----

// CHECK-LABEL: module @cache attributes {ttk.program =
// CHECK-SAME: op = "reshape_and_cache"
// CHECK: func.func @reader()
// CHECK: func.func @writer()
// CHECK-NOT: func.func @compute
func.func @cache(%k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                 %c: tensor<?x2x16x2x64xbf16>, %s: tensor<?xi64>)
    -> tensor<?x2x16x2x64xbf16> {
  %r = attn.reshape_and_cache %k, %v, %s outs(%c) layout(nhd)
      : tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi64>,
        tensor<?x2x16x2x64xbf16> -> tensor<?x2x16x2x64xbf16>
  return %r : tensor<?x2x16x2x64xbf16>
}

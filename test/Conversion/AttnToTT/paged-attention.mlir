// RUN: attn-opt --convert-attn-to-ttkernel -split-input-file %s | FileCheck %s

// CHECK-LABEL: module @decode attributes {ttk.program =
// CHECK-SAME: arch = "wormhole_b0"
// CHECK-SAME: circular_buffers = [{data_format = "Float16_b", id = 0 : i64, name = "q", num_pages = 2
// CHECK-SAME: {data_format = "Float32", id = 3 : i64, name = "mask"
// CHECK-SAME: {data_format = "Float32", id = 6 : i64, name = "block_table_chunk", num_pages = 1 : i64, page_size = 256 : i64}
// CHECK-SAME: kind = "reader"
// CHECK-SAME: fp32_dest_acc_en = true, kind = "compute"
// CHECK-SAME: op = "paged_attention"
// CHECK-SAME: runtime_args = ["q_addr", "kv_addr", "bt_addr", "bt_page_stride", "out_addr", "lse_addr", "sinks_addr", "alibi_addr", "num_dram_banks", "num_units"]
// CHECK: func.func @reader() attributes {ttk.thread = "reader"}
// CHECK: emitc.call_opaque "get_compile_time_arg_val"() {args = [0 : i32]}
// CHECK: emitc.call_opaque "get_arg_val"(%{{.*}}) {template_args = [#emitc.opaque<"uint32_t">]}
// CHECK: emitc.call_opaque "cb_reserve_back"
// CHECK: scf.for
// Query rows: a whole row page into the stage, then half rows within L1.
// CHECK: emitc.call_opaque "get_noc_addr_from_bank_id"({{.*}}) {template_args = [#emitc.opaque<"true">]}
// CHECK: emitc.call_opaque "noc_async_read"
// CHECK: emitc.call_opaque "get_noc_addr"(
// CHECK: emitc.call_opaque "noc_async_read"
// Block table: one aligned 256-byte chunk per key tile, then loaded.
// CHECK: arith.constant 256 : i32
// CHECK: emitc.call_opaque "noc_async_read"
// CHECK: emitc.call_opaque "noc_async_read_barrier"
// CHECK: emitc.subscript
// CHECK: func.func @compute() attributes {ttk.thread = "compute"}
// The start-up in matmul's source order, then matmul's init as the next
// call (tt-metal's matmul.h).
// CHECK: emitc.call_opaque "compute_kernel_hw_startup"({{.*}}) {template_args = [#emitc.opaque<"SrcOrder::Reverse">]}
// CHECK-NOT: emitc.call_opaque
// CHECK: emitc.call_opaque "matmul_init"
// CHECK: emitc.call_opaque "matmul_tiles"
// The running max: a face-transposed copy of m_old, then the row reduction.
// CHECK: emitc.call_opaque "copy_tile_to_dst_init_short"(%{{.*}}, %{{.*}}, %[[ONE:.*]])
// CHECK: emitc.call_opaque "reduce_init"({{.*}}) {template_args = [#emitc.opaque<"PoolType::MAX">, #emitc.opaque<"ReduceDim::REDUCE_ROW">]}
// CHECK: emitc.call_opaque "reduce_tile"({{.*}}) {template_args = [#emitc.opaque<"PoolType::MAX">, #emitc.opaque<"ReduceDim::REDUCE_ROW">]}
// CHECK: emitc.call_opaque "exp_tile_init"
// CHECK: emitc.call_opaque "exp_tile"
// CHECK: emitc.call_opaque "reduce_uninit"
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

// ALiBi: the reader writes a bias tile of slope * (j - p) in f32; compute
// adds it before the mask.
// CHECK-LABEL: module @alibi attributes {ttk.program =
// CHECK-SAME: name = "alibi_bias"
// CHECK: func.func @reader()
// CHECK: arith.sitofp
// CHECK: arith.mulf
// CHECK: func.func @compute()
// The inits and dest-reuse calls of tt-metal PR #50745, not the names it
// deprecated (binary_dest_reuse_tiles_init / binary_dest_reuse_tiles).
// CHECK: emitc.call_opaque "add_reuse_dest_init"(%{{.*}}) {template_args = [#emitc.opaque<"EltwiseBinaryReuseDestType::DEST_TO_SRCA">]}
// CHECK: emitc.call_opaque "add_reuse_dest_tiles"(%[[BIAS:.*]], %{{.*}}, %{{.*}}) {template_args = [#emitc.opaque<"EltwiseBinaryReuseDestType::DEST_TO_SRCA">]}
// CHECK-NOT: binary_dest_reuse
func.func @alibi(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x2x64xf16>,
                 %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                 %qsl: tensor<?xi32>, %o: tensor<?x8x64xf16>,
                 %l: tensor<?x8xf32>, %a: tensor<8xf32>)
    -> (tensor<?x8x64xf16>, tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %c, %md alibi(%a : tensor<8xf32>)
      outs(%o, %l) layout(nhd) scale(0.125)
      : tensor<?x8x64xf16>, tensor<?x2x16x2x64xf16>, tensor<?x8x64xf16>,
        tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return %out, %lse : tensor<?x8x64xf16>, tensor<?x8xf32>
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

// -----

// The MLA latent cache: one part per block, rows of L + P.
// CHECK-LABEL: module @latent attributes {ttk.program =
// CHECK-SAME: op = "reshape_and_cache"
// CHECK-SAME: key_width = 512 : i64
// CHECK-SAME: kv_parts = 1 : i64
// CHECK-SAME: value_width = 64 : i64
func.func @latent(%kv_c: tensor<?x512xbf16>, %k_pe: tensor<?x64xbf16>,
                  %slots: tensor<?xi64>, %c: tensor<?x64x576xbf16>)
    -> tensor<?x64x576xbf16> {
  %0 = attn.reshape_and_cache %kv_c, %k_pe, %slots outs(%c)
      : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>,
        tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return %0 : tensor<?x64x576xbf16>
}

// -----

// Windows at their limit, 2^31 - 1, non-causal: the reader's mask compares
// the distance j - p with -window_left and window_right, never p -
// window_left or p + window_right, which leave i32 (issue 34: every row
// but the first saw no key).
// CHECK-LABEL: module @windows attributes {ttk.program =
// CHECK-SAME: window_left = 2147483647 : i64, window_right = 2147483647 : i64
// CHECK: func.func @reader()
// CHECK: %[[WL:.*]] = emitc.call_opaque "get_compile_time_arg_val"() {args = [10 : i32]}
// CHECK: %[[NEGWL:.*]] = arith.subi %{{.*}}, %[[WL]] : i32
// CHECK: arith.cmpi sge, %[[DIST:[0-9]+]], %[[NEGWL]] : i32
// CHECK: %[[WR:.*]] = emitc.call_opaque "get_compile_time_arg_val"() {args = [11 : i32]}
// CHECK: arith.cmpi sle, %[[DIST]], %[[WR]] : i32
// CHECK: func.func @compute()
func.func @windows(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x16x2x64xbf16>,
                   %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                   %qsl: tensor<?xi32>, %o: tensor<?x8x64xbf16>,
                   %l: tensor<?x8xf32>)
    -> (tensor<?x8x64xbf16>, tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      {causal = false} : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd)
      scale(0.125) window_left(2147483647) window_right(2147483647)
      : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xbf16>, tensor<?x8x64xbf16>,
        tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return %out, %lse : tensor<?x8x64xbf16>, tensor<?x8xf32>
}

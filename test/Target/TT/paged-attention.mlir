// RUN: attn-translate --attn-to-ttmetal %s | FileCheck %s

// Reader: dataflow kernel_main, DRAM address generators, page-table reads,
// key/value tiles into circular buffers 1 and 2.
// CHECK-LABEL: // ----- decode/reader.cpp
// CHECK: #include "dataflow_api.h"
// CHECK: void kernel_main() {
// CHECK: get_compile_time_arg_val(0)
// CHECK: get_arg_val<uint32_t>(0)
// CHECK: InterleavedAddrGen<true> [[GEN:v[0-9]+]];
// CHECK: [[GEN]].bank_base_address =
// CHECK: cb_reserve_back(
// CHECK: for (int32_t
// CHECK: get_noc_addr(
// CHECK: noc_async_read(
// CHECK: noc_async_read_barrier();
// CHECK: cb_push_back(

// Compute: NAMESPACE / MAIN form, tile loops over the head dimension.
// CHECK-LABEL: // ----- decode/compute.cpp
// CHECK: #include "compute_kernel_api/matmul.h"
// CHECK: namespace NAMESPACE {
// CHECK: void kernel_main() {
// CHECK: tile_regs_acquire();
// CHECK: matmul_tiles(
// CHECK: reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>(
// CHECK: exp_tile(
// CHECK: sub_tiles_bcast_cols(
// CHECK: reduce_tile<PoolType::SUM, ReduceDim::REDUCE_ROW>(
// CHECK: recip_tile(
// CHECK: log_tile(
// CHECK: pack_tile(
// CHECK: void MAIN { kernel_main(); }
// CHECK: } // namespace NAMESPACE

// CHECK-LABEL: // ----- decode/writer.cpp
// CHECK: void kernel_main() {
// CHECK: cb_wait_front(
// CHECK: noc_async_write(
// CHECK: noc_async_write_barrier();
// CHECK: cb_pop_front(

// CHECK-LABEL: // ----- decode/program.json
// CHECK: "circular_buffers": [
// CHECK: "data_format": "Float16_b",
// CHECK: "id": 0,
// CHECK: "fp32_dest_acc_en": true,
// CHECK: "processor": "trisc",
// CHECK: "op": "paged_attention",

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

//===- TestComputeKernels.cpp - Compute kernels for the tests ------------===//
#include "test/unit/tt/TestKernels.h"

#define REDUCE_OP PoolType::SUM
#define REDUCE_DIM ReduceDim::REDUCE_ROW
#include "api/compute/bcast.h"
#include "api/compute/common.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/matmul.h"
#include "api/compute/reduce.h"
#include "api/compute/tile_move_copy.h"

namespace attn::tt::test {

/// Packs DST[idst] into a fresh page of `cb`.
static void packTo(uint32_t idst, uint32_t cb) {
  cb_reserve_back(cb, 1);
  pack_tile(idst, cb);
  cb_push_back(cb, 1);
}

void computeTileOps() {
  compute_kernel_hw_startup<SrcOrder::Reverse>(0, 0, 16);
  cb_wait_front(0, 2);
  cb_wait_front(1, 1);
  // 2 I x B^T = 2 B^T, packed to bf16.
  matmul_init(0, 0, /*transpose=*/1);
  tile_regs_acquire();
  matmul_tiles(0, 0, 0, 1, 0);
  tile_regs_commit();
  tile_regs_wait();
  pack_reconfig_data_format(16);
  packTo(0, 16);
  tile_regs_release();
  // exp(row max of B) into column 0: the reduction accumulates into an empty
  // tile (all of B is positive).
  tile_regs_acquire();
  reduce_init<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 1, 17);
  reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 1, 1, 0, 1);
  exp_tile_init();
  exp_tile(1);
  tile_regs_commit();
  tile_regs_wait();
  packTo(1, 17);
  reduce_uninit();
  tile_regs_release();
}

void matmulWithoutInit() {
  compute_kernel_hw_startup(0, 0, 16);
  cb_wait_front(0, 2);
  copy_tile_to_dst_init_short(0);
  tile_regs_acquire();
  matmul_tiles(0, 0, 0, 1, 0);
}

void expWithoutInit() {
  compute_kernel_hw_startup(0, 0, 16);
  cb_wait_front(0, 2);
  copy_tile_to_dst_init_short(0);
  tile_regs_acquire();
  copy_tile(0, 0, 0);
  exp_tile(0);
}

void copyWrongSrcFormat() {
  // Source A is configured from cb 0 (f32); cb 16 holds bf16.
  compute_kernel_hw_startup(0, 0, 16);
  copy_tile_to_dst_init_short(16);
  tile_regs_acquire();
  copy_tile(16, 0, 0);
}

void packWrongFormat() {
  compute_kernel_hw_startup(0, 0, 0);
  cb_wait_front(0, 2);
  copy_tile_to_dst_init_short(0);
  tile_regs_acquire();
  copy_tile(0, 0, 0);
  tile_regs_commit();
  tile_regs_wait();
  packTo(0, 16);
}

void reduceIntoRowLayout() {
  compute_kernel_hw_startup(0, 1, 16);
  cb_wait_front(0, 2);
  cb_wait_front(1, 1);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  copy_tile(0, 0, 0);
  reduce_init<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 1, 16);
  reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 1, 1, 0, 0);
}

void packWithReduceMasks() {
  compute_kernel_hw_startup(0, 1, 16);
  cb_wait_front(0, 2);
  cb_wait_front(1, 1);
  reduce_init<PoolType::SUM, ReduceDim::REDUCE_ROW>(0, 1, 16);
  copy_tile_to_dst_init_short(0);
  tile_regs_acquire();
  copy_tile(0, 0, 0);
  tile_regs_commit();
  tile_regs_wait();
  packTo(0, 16);
}

void dstIndexPastCapacity() {
  compute_kernel_hw_startup(0, 0, 16);
  cb_wait_front(0, 2);
  copy_tile_to_dst_init_short(0);
  tile_regs_acquire();
  copy_tile(0, 0, 4);
}

void dstIndex4Bit16() {
  compute_kernel_hw_startup(0, 0, 16);
  cb_wait_front(0, 2);
  copy_tile_to_dst_init_short(0);
  tile_regs_acquire();
  copy_tile(0, 0, 7);
  tile_regs_commit();
  tile_regs_wait();
  tile_regs_release();
}

void mathAfterCommit() {
  compute_kernel_hw_startup(0, 0, 16);
  cb_wait_front(0, 2);
  copy_tile_to_dst_init_short(0);
  tile_regs_acquire();
  tile_regs_commit();
  copy_tile(0, 0, 0);
}

void initBeforeStartup() { copy_tile_to_dst_init_short(0); }

void matmulAfterRegularStartup() {
  compute_kernel_hw_startup(0, 1, 16);
  cb_wait_front(0, 2);
  cb_wait_front(1, 1);
  matmul_init(0, 1);
}

void computeWaitsForever() {
  cb_wait_front(24, 1);
  cb_reserve_back(16, 1);
  cb_push_back(16, 1);
}

} // namespace attn::tt::test

//===- TestKernels.h - Hand-written kernels for the emulator tests -------===//
//
// Kernels written against attn's TT-Metalium declarations (devices/tt/sdk/include),
// run by EmulatorTest.cpp as host functions. Data movement and compute
// kernels live in separate files, as the SDK's headers for the two kinds do
// not go into one translation unit.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_UNIT_TT_TESTKERNELS_H
#define ATTN_TEST_UNIT_TT_TESTKERNELS_H

#include <cstdint>

namespace attn::tt::test {

/// Runtime arguments every data movement kernel here reads: arg 0 a DRAM
/// buffer address, arg 1 a second one.
constexpr uint32_t kStreamPages = 17, kStreamPageSize = 64;

// Data movement (TestDataflowKernels.cpp).
void streamReader();         // buffer 0 pages -> cb 0
void streamWriter();         // cb 0 -> buffer 1 pages
void fillTwoTilesReader();   // cb 0: 2 I and B (f32), cb 1: ones
void writeTwoTilesWriter();  // cb 16, 17 -> buffer 0 pages 0, 1
void readPastBankReader();   // page 5000 of a one-page buffer
void waitOnUnconfigured();   // cb_wait_front on cb 9
/// Reads `arg 2` bytes from byte `arg 1` of buffer `arg 0` into cb 0.
void readAtOffsetReader();
/// Writes 4 bytes from byte `arg 1` of cb 0 to byte `arg 2` of buffer 0.
void writeAtOffsetWriter();
void pushThreeIntoTwo();     // three single-page pushes into a 2-page cb
void computeWaitsForever();  // cb_wait_front(24) that nobody feeds
void writerWaitsForCompute();

// Compute (TestComputeKernels.cpp); they read cb 0 (2 tiles, f32) and cb 1
// (ones, f32) and write cb 16 and 17 (bf16) unless said otherwise.
void computeTileOps();       // matmul, reduce, exp: the happy path
void matmulWithoutInit();
void expWithoutInit();
void copyWrongSrcFormat();   // copy from a bf16 cb with source A on f32
void packWrongFormat();      // pack into bf16 with the packer on f32
void reduceIntoRowLayout();  // row max into a tile copied without transpose
void packWithReduceMasks();  // a copy packed before reduce_uninit
void dstIndexPastCapacity(); // DST[4] with fp32 accumulation
void dstIndex4Bit16();       // DST[4] with 16-bit accumulation (allowed)
void mathAfterCommit();      // copy_tile after tile_regs_commit
void initBeforeStartup();    // an init before compute_kernel_hw_startup
/// matmul_init after compute_kernel_hw_startup<SrcOrder::Regular>.
void matmulAfterRegularStartup();

} // namespace attn::tt::test

#endif // ATTN_TEST_UNIT_TT_TESTKERNELS_H

//===- TTApi.h - The TT-Metalium calls attn's kernels make ------*- C++ -*-===//
//
// Every TT-Metalium kernel API function the TT lowering emits, in one table:
// its name, the header that declares it for data movement and for compute
// kernels, its number of operands and template arguments, and its result.
// KernelBuilder::call<F> checks the operand and template-argument counts
// against this table when attn is compiled (static_assert), the emitter takes
// each kernel's #includes from it, and TTApiProbe.cpp writes a source that
// calls every entry, which a test compiles against attn's SDK declarations
// (devices/tt/sdk/include) with the SDK's JIT flags. A name or arity that does not
// match the SDK therefore fails attn's build or its tests, not a kernel
// build on a device.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOTT_TTAPI_H
#define ATTN_LOWERING_ATTNTOTT_TTAPI_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

/// The tt-metal commit attn's kernels and SDK declarations follow
/// (devices/tt/sdk/README.md).
#define ATTN_TT_METAL_SHORT "tt-metal d5f9bc4a43"

namespace mlir::attn::tt {

/// What a call returns.
enum class TTResult : uint8_t { None, U32, U64 };

/// Where a function may be called from.
enum class TTThread : uint8_t { Dataflow, Compute, Both };

struct TTFnInfo {
  llvm::StringLiteral name;
  /// Declaring header of a data movement (reader / writer) kernel, or "".
  llvm::StringLiteral dataflowHeader;
  /// Declaring header of a compute kernel, or "".
  llvm::StringLiteral computeHeader;
  uint8_t numOperands;
  uint8_t numTemplateArgs;
  TTResult result;
  /// Template arguments of a probe call, spelled as in C++ ("" for none).
  llvm::StringLiteral probeTemplateArgs;
};

#define ATTN_TT_API_FUNCTIONS(X)                                               \
  /* name, dataflow header, compute header, operands, template args, result,   \
     probe template arguments */                                               \
  X(GetArgVal, "get_arg_val", "api/dataflow/dataflow_api.h",                   \
    "api/compute/common.h", 1, 1, U32, "uint32_t")                             \
  X(GetCompileTimeArgVal, "get_compile_time_arg_val",                          \
    "api/compile_time_args.h", "api/compile_time_args.h", 0, 0, U32, "")       \
  X(CbReserveBack, "cb_reserve_back", "api/dataflow/dataflow_api.h",           \
    "api/compute/cb_api.h", 2, 0, None, "")                                    \
  X(CbPushBack, "cb_push_back", "api/dataflow/dataflow_api.h",                 \
    "api/compute/cb_api.h", 2, 0, None, "")                                    \
  X(CbWaitFront, "cb_wait_front", "api/dataflow/dataflow_api.h",               \
    "api/compute/cb_api.h", 2, 0, None, "")                                    \
  X(CbPopFront, "cb_pop_front", "api/dataflow/dataflow_api.h",                 \
    "api/compute/cb_api.h", 2, 0, None, "")                                    \
  X(GetWritePtr, "get_write_ptr", "api/dataflow/dataflow_api.h", "", 1, 0,     \
    U32, "")                                                                   \
  X(GetReadPtr, "get_read_ptr", "api/dataflow/dataflow_api.h", "", 1, 0, U32,  \
    "")                                                                        \
  X(GetNocAddrFromBankId, "get_noc_addr_from_bank_id",                         \
    "api/dataflow/dataflow_api.h", "", 2, 1, U64, "true")                      \
  X(GetNocAddr, "get_noc_addr", "api/dataflow/dataflow_api.h", "", 1, 0, U64,  \
    "")                                                                        \
  X(NocAsyncRead, "noc_async_read", "api/dataflow/dataflow_api.h", "", 3, 0,   \
    None, "")                                                                  \
  X(NocAsyncWrite, "noc_async_write", "api/dataflow/dataflow_api.h", "", 3, 0, \
    None, "")                                                                  \
  X(NocAsyncReadBarrier, "noc_async_read_barrier",                             \
    "api/dataflow/dataflow_api.h", "", 0, 0, None, "")                         \
  X(NocAsyncWriteBarrier, "noc_async_write_barrier",                           \
    "api/dataflow/dataflow_api.h", "", 0, 0, None, "")                         \
  X(ComputeKernelHwStartup, "compute_kernel_hw_startup", "",                   \
    "api/compute/compute_kernel_hw_startup.h", 3, 1, None,                     \
    "SrcOrder::Reverse")                                                       \
  X(ReconfigDataFormatSrca, "reconfig_data_format_srca", "",                   \
    "api/compute/reconfig_data_format.h", 1, 0, None, "")                      \
  X(ReconfigDataFormatSrcb, "reconfig_data_format_srcb", "",                   \
    "api/compute/reconfig_data_format.h", 1, 0, None, "")                      \
  X(PackReconfigDataFormat, "pack_reconfig_data_format", "",                   \
    "api/compute/reconfig_data_format.h", 1, 0, None, "")                      \
  X(TileRegsAcquire, "tile_regs_acquire", "", "api/compute/reg_api.h", 0, 0,   \
    None, "")                                                                  \
  X(TileRegsCommit, "tile_regs_commit", "", "api/compute/reg_api.h", 0, 0,     \
    None, "")                                                                  \
  X(TileRegsWait, "tile_regs_wait", "", "api/compute/reg_api.h", 0, 0, None,   \
    "")                                                                        \
  X(TileRegsRelease, "tile_regs_release", "", "api/compute/reg_api.h", 0, 0,   \
    None, "")                                                                  \
  X(PackTile, "pack_tile", "", "api/compute/pack.h", 2, 0, None, "")           \
  X(CopyTileToDstInitShort, "copy_tile_to_dst_init_short", "",                 \
    "api/compute/tile_move_copy.h", 3, 0, None, "")                            \
  X(CopyTile, "copy_tile", "", "api/compute/tile_move_copy.h", 3, 0, None, "") \
  X(MatmulInit, "matmul_init", "", "api/compute/matmul.h", 3, 0, None, "")     \
  X(MatmulTiles, "matmul_tiles", "", "api/compute/matmul.h", 5, 0, None, "")   \
  X(AddInit, "add_init", "", "api/compute/eltwise_binary.h", 2, 0, None, "")   \
  X(SubInit, "sub_init", "", "api/compute/eltwise_binary.h", 2, 0, None, "")   \
  X(MulInit, "mul_init", "", "api/compute/eltwise_binary.h", 2, 0, None, "")   \
  X(AddTiles, "add_tiles", "", "api/compute/eltwise_binary.h", 5, 0, None, "") \
  X(SubTiles, "sub_tiles", "", "api/compute/eltwise_binary.h", 5, 0, None, "") \
  X(MulTiles, "mul_tiles", "", "api/compute/eltwise_binary.h", 5, 0, None, "") \
  X(AddReuseDestInit, "add_reuse_dest_init", "",                               \
    "api/compute/eltwise_binary.h", 1, 1, None,                                \
    "EltwiseBinaryReuseDestType::DEST_TO_SRCA")                                \
  X(SubReuseDestInit, "sub_reuse_dest_init", "",                               \
    "api/compute/eltwise_binary.h", 1, 1, None,                                \
    "EltwiseBinaryReuseDestType::DEST_TO_SRCA")                                \
  X(MulReuseDestInit, "mul_reuse_dest_init", "",                               \
    "api/compute/eltwise_binary.h", 1, 1, None,                                \
    "EltwiseBinaryReuseDestType::DEST_TO_SRCA")                                \
  X(AddReuseDestTiles, "add_reuse_dest_tiles", "",                             \
    "api/compute/eltwise_binary.h", 3, 1, None,                                \
    "EltwiseBinaryReuseDestType::DEST_TO_SRCA")                                \
  X(SubReuseDestTiles, "sub_reuse_dest_tiles", "",                             \
    "api/compute/eltwise_binary.h", 3, 1, None,                                \
    "EltwiseBinaryReuseDestType::DEST_TO_SRCA")                                \
  X(MulReuseDestTiles, "mul_reuse_dest_tiles", "",                             \
    "api/compute/eltwise_binary.h", 3, 1, None,                                \
    "EltwiseBinaryReuseDestType::DEST_TO_SRCA")                                \
  X(AddBcastColsInit, "add_bcast_cols_init", "", "api/compute/bcast.h", 2, 0,  \
    None, "")                                                                  \
  X(SubBcastColsInit, "sub_bcast_cols_init", "", "api/compute/bcast.h", 2, 0,  \
    None, "")                                                                  \
  X(MulBcastColsInit, "mul_bcast_cols_init", "", "api/compute/bcast.h", 2, 0,  \
    None, "")                                                                  \
  X(AddTilesBcastCols, "add_tiles_bcast_cols", "", "api/compute/bcast.h", 5,   \
    0, None, "")                                                               \
  X(SubTilesBcastCols, "sub_tiles_bcast_cols", "", "api/compute/bcast.h", 5,   \
    0, None, "")                                                               \
  X(MulTilesBcastCols, "mul_tiles_bcast_cols", "", "api/compute/bcast.h", 5,   \
    0, None, "")                                                               \
  X(ReduceInit, "reduce_init", "", "api/compute/reduce.h", 3, 2, None,         \
    "PoolType::SUM, ReduceDim::REDUCE_ROW")                                    \
  X(ReduceTile, "reduce_tile", "", "api/compute/reduce.h", 5, 2, None,         \
    "PoolType::MAX, ReduceDim::REDUCE_ROW")                                    \
  X(ReduceUninit, "reduce_uninit", "", "api/compute/reduce.h", 0, 0, None, "") \
  X(ExpTileInit, "exp_tile_init", "", "api/compute/eltwise_unary/exp.h", 0, 0, \
    None, "")                                                                  \
  X(ExpTile, "exp_tile", "", "api/compute/eltwise_unary/exp.h", 1, 0, None,    \
    "")                                                                        \
  X(RecipTileInit, "recip_tile_init", "", "api/compute/eltwise_unary/recip.h", \
    0, 0, None, "")                                                            \
  X(RecipTile, "recip_tile", "", "api/compute/eltwise_unary/recip.h", 1, 0,    \
    None, "")                                                                  \
  X(LogTileInit, "log_tile_init", "", "api/compute/compute_kernel_api.h", 0,   \
    0, None, "")                                                               \
  X(LogTile, "log_tile", "", "api/compute/compute_kernel_api.h", 1, 0, None,   \
    "")                                                                        \
  X(TanhTileInit, "tanh_tile_init", "", "api/compute/compute_kernel_api.h", 0, \
    0, None, "")                                                               \
  X(TanhTile, "tanh_tile", "", "api/compute/compute_kernel_api.h", 1, 0, None, \
    "")                                                                        \
  X(BinopWithScalarTileInit, "binop_with_scalar_tile_init", "",                \
    "api/compute/eltwise_unary/binop_with_scalar.h", 0, 0, None, "")           \
  X(MulUnaryTile, "mul_unary_tile", "",                                        \
    "api/compute/eltwise_unary/binop_with_scalar.h", 2, 0, None, "")           \
  X(BinaryMaxTileInit, "binary_max_tile_init", "",                             \
    "api/compute/binary_max_min.h", 0, 0, None, "")                            \
  X(BinaryMaxTile, "binary_max_tile", "", "api/compute/binary_max_min.h", 3,   \
    0, None, "")

enum class TTFn : uint8_t {
#define ATTN_TT_ENUM(id, ...) id,
  ATTN_TT_API_FUNCTIONS(ATTN_TT_ENUM)
#undef ATTN_TT_ENUM
      NumFunctions
};

inline constexpr TTFnInfo kTTFnInfos[] = {
#define ATTN_TT_INFO(id, name, df, cp, ops, targs, result, probe)              \
  {name, df, cp, ops, targs, TTResult::result, probe},
    ATTN_TT_API_FUNCTIONS(ATTN_TT_INFO)
#undef ATTN_TT_INFO
};

constexpr const TTFnInfo &info(TTFn fn) { return kTTFnInfos[unsigned(fn)]; }

/// The table entry named `name`, if any.
std::optional<TTFn> lookupTTFn(llvm::StringRef name);

//===--- Template arguments, as the SDK spells them -----------------------===//

enum class PoolType : uint8_t { Sum, Max };
enum class ReduceDim : uint8_t { Row, Col };
enum class BinaryOp : uint8_t { Add, Sub, Mul };
enum class ReuseDest : uint8_t { ToSrcA, ToSrcB };
/// How compute_kernel_hw_startup maps its two inputs onto sources A and B:
/// Reverse (in0 to B, in1 to A) is matmul's order.
enum class SrcOrder : uint8_t { Regular, Reverse };

llvm::StringRef spell(PoolType v);
llvm::StringRef spell(ReduceDim v);
llvm::StringRef spell(ReuseDest v);
llvm::StringRef spell(SrcOrder v);

} // namespace mlir::attn::tt

#endif // ATTN_LOWERING_ATTNTOTT_TTAPI_H

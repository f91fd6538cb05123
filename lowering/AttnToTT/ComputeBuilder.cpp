//===- ComputeBuilder.cpp - TT compute kernels that keep the hardware state ===//
#include "lowering/AttnToTT/ComputeBuilder.h"

namespace mlir::attn::tt {

void ComputeBuilder::hwStartup(SrcOrder order, int64_t in0, int64_t in1,
                               int64_t out) {
  kb.call<TTFn::ComputeKernelHwStartup>(TemplateArgs<1>{kb.tmpl(order)}, in0,
                                        in1, out);
  bool reverse = order == SrcOrder::Reverse;
  srcAFormat = program.formatOf(reverse ? in1 : in0);
  srcBFormat = program.formatOf(reverse ? in0 : in1);
  packFormat = program.formatOf(out);
}

void ComputeBuilder::forget() {
  srcAFormat.reset();
  srcBFormat.reset();
  packFormat.reset();
  lastFpu.reset();
  lastSfpu.reset();
  reduceMasks.reset();
}

void ComputeBuilder::srcA(int64_t cb) {
  TTDataFormat f = program.formatOf(cb);
  if (srcAFormat == f)
    return;
  kb.call<TTFn::ReconfigDataFormatSrca>(cb);
  srcAFormat = f;
}

void ComputeBuilder::srcB(int64_t cb) {
  TTDataFormat f = program.formatOf(cb);
  if (srcBFormat == f)
    return;
  kb.call<TTFn::ReconfigDataFormatSrcb>(cb);
  srcBFormat = f;
}

void ComputeBuilder::fpuInit(const FpuInit &init,
                             llvm::function_ref<void()> emitInit) {
  if (lastFpu && *lastFpu == init)
    return;
  emitInit();
  lastFpu = init;
}

void ComputeBuilder::copy(int64_t cb, Value tile, Value dst,
                          bool transposeFaces) {
  srcA(cb);
  fpuInit({TTFn::CopyTileToDstInitShort, cb, 0, transposeFaces}, [&] {
    kb.call<TTFn::CopyTileToDstInitShort>(cb, 0, transposeFaces ? 1 : 0);
  });
  kb.call<TTFn::CopyTile>(cb, tile, dst);
}

void ComputeBuilder::matmulInit(int64_t in0, int64_t in1, bool transposeIn1) {
  // in0 is unpacked to source B, in1 to source A.
  srcA(in1);
  srcB(in0);
  fpuInit({TTFn::MatmulInit, in0, in1, transposeIn1}, [&] {
    kb.call<TTFn::MatmulInit>(in0, in1, transposeIn1 ? 1 : 0);
  });
}

void ComputeBuilder::matmul(int64_t in0, int64_t in1, Value t0, Value t1,
                            Value dst, bool transposeIn1) {
  matmulInit(in0, in1, transposeIn1);
  kb.call<TTFn::MatmulTiles>(in0, in1, t0, t1, dst);
}

void ComputeBuilder::binary(BinaryOp op, int64_t cb0, int64_t cb1, Value t0,
                            Value t1, Value dst) {
  srcA(cb0);
  srcB(cb1);
  switch (op) {
  case BinaryOp::Add:
    fpuInit({TTFn::AddInit, cb0, cb1, 0},
            [&] { kb.call<TTFn::AddInit>(cb0, cb1); });
    kb.call<TTFn::AddTiles>(cb0, cb1, t0, t1, dst);
    return;
  case BinaryOp::Sub:
    fpuInit({TTFn::SubInit, cb0, cb1, 0},
            [&] { kb.call<TTFn::SubInit>(cb0, cb1); });
    kb.call<TTFn::SubTiles>(cb0, cb1, t0, t1, dst);
    return;
  case BinaryOp::Mul:
    fpuInit({TTFn::MulInit, cb0, cb1, 0},
            [&] { kb.call<TTFn::MulInit>(cb0, cb1); });
    kb.call<TTFn::MulTiles>(cb0, cb1, t0, t1, dst);
    return;
  }
}

void ComputeBuilder::binaryBcastCols(BinaryOp op, int64_t cb0, int64_t cb1,
                                     Value t0, Value t1, Value dst) {
  srcA(cb0);
  srcB(cb1);
  switch (op) {
  case BinaryOp::Add:
    fpuInit({TTFn::AddBcastColsInit, cb0, cb1, 0},
            [&] { kb.call<TTFn::AddBcastColsInit>(cb0, cb1); });
    kb.call<TTFn::AddTilesBcastCols>(cb0, cb1, t0, t1, dst);
    return;
  case BinaryOp::Sub:
    fpuInit({TTFn::SubBcastColsInit, cb0, cb1, 0},
            [&] { kb.call<TTFn::SubBcastColsInit>(cb0, cb1); });
    kb.call<TTFn::SubTilesBcastCols>(cb0, cb1, t0, t1, dst);
    return;
  case BinaryOp::Mul:
    fpuInit({TTFn::MulBcastColsInit, cb0, cb1, 0},
            [&] { kb.call<TTFn::MulBcastColsInit>(cb0, cb1); });
    kb.call<TTFn::MulTilesBcastCols>(cb0, cb1, t0, t1, dst);
    return;
  }
}

void ComputeBuilder::destReuse(BinaryOp op, ReuseDest reuse, int64_t cb,
                               Value tile, Value dst) {
  // The buffer's tile goes to the source DST does not.
  if (reuse == ReuseDest::ToSrcA)
    srcB(cb);
  else
    srcA(cb);
  TemplateArgs<1> targs = {kb.tmpl(reuse)};
  switch (op) {
  case BinaryOp::Add:
    fpuInit({TTFn::AddReuseDestInit, cb, int64_t(reuse), 0},
            [&] { kb.call<TTFn::AddReuseDestInit>(targs, cb); });
    kb.call<TTFn::AddReuseDestTiles>(targs, cb, tile, dst);
    return;
  case BinaryOp::Sub:
    fpuInit({TTFn::SubReuseDestInit, cb, int64_t(reuse), 0},
            [&] { kb.call<TTFn::SubReuseDestInit>(targs, cb); });
    kb.call<TTFn::SubReuseDestTiles>(targs, cb, tile, dst);
    return;
  case BinaryOp::Mul:
    fpuInit({TTFn::MulReuseDestInit, cb, int64_t(reuse), 0},
            [&] { kb.call<TTFn::MulReuseDestInit>(targs, cb); });
    kb.call<TTFn::MulReuseDestTiles>(targs, cb, tile, dst);
    return;
  }
}

void ComputeBuilder::reduce(PoolType pool, ReduceDim dim, int64_t cb,
                            int64_t scaler, Value tile, Value dst,
                            int64_t out) {
  srcA(cb);
  srcB(scaler);
  TemplateArgs<2> targs = {kb.tmpl(pool), kb.tmpl(dim)};
  fpuInit({TTFn::ReduceInit, cb, scaler, int64_t(pool) * 2 + int64_t(dim)},
          [&] { kb.call<TTFn::ReduceInit>(targs, cb, scaler, out); });
  reduceMasks = true;
  kb.call<TTFn::ReduceTile>(targs, cb, scaler, tile, 0, dst);
}

void ComputeBuilder::sfpu(TTFn init, TTFn op, Value dst) {
  if (lastSfpu != init) {
    switch (init) {
    case TTFn::ExpTileInit:
      kb.call<TTFn::ExpTileInit>();
      break;
    case TTFn::RecipTileInit:
      kb.call<TTFn::RecipTileInit>();
      break;
    case TTFn::LogTileInit:
      kb.call<TTFn::LogTileInit>();
      break;
    case TTFn::TanhTileInit:
      kb.call<TTFn::TanhTileInit>();
      break;
    default:
      llvm_unreachable("not a unary SFPU init");
    }
    lastSfpu = init;
  }
  switch (op) {
  case TTFn::ExpTile:
    kb.call<TTFn::ExpTile>(dst);
    return;
  case TTFn::RecipTile:
    kb.call<TTFn::RecipTile>(dst);
    return;
  case TTFn::LogTile:
    kb.call<TTFn::LogTile>(dst);
    return;
  case TTFn::TanhTile:
    kb.call<TTFn::TanhTile>(dst);
    return;
  default:
    llvm_unreachable("not a unary SFPU operation");
  }
}

void ComputeBuilder::mulScalar(Value dst, Value bits) {
  if (lastSfpu != TTFn::BinopWithScalarTileInit) {
    kb.call<TTFn::BinopWithScalarTileInit>();
    lastSfpu = TTFn::BinopWithScalarTileInit;
  }
  kb.call<TTFn::MulUnaryTile>(dst, bits);
}

void ComputeBuilder::binaryMax(Value a, Value b, Value out) {
  if (lastSfpu != TTFn::BinaryMaxTileInit) {
    kb.call<TTFn::BinaryMaxTileInit>();
    lastSfpu = TTFn::BinaryMaxTileInit;
  }
  kb.call<TTFn::BinaryMaxTile>(a, b, out);
}

void ComputeBuilder::pack(Value dst, int64_t cb) {
  // The edge masks of a reduction are for packing its result only.
  bool afterReduce = lastFpu && lastFpu->fn == TTFn::ReduceInit;
  if (!afterReduce && reduceMasks != false) {
    kb.call<TTFn::ReduceUninit>();
    reduceMasks = false;
  }
  TTDataFormat f = program.formatOf(cb);
  if (packFormat != f) {
    kb.call<TTFn::PackReconfigDataFormat>(cb);
    packFormat = f;
  }
  kb.call<TTFn::PackTile>(dst, cb);
}

void ComputeBuilder::section(ArrayRef<int64_t> outs,
                             llvm::function_ref<void()> math) {
  acquire();
  math();
  commit();
  wait();
  for (int64_t out : outs) {
    kb.cbReserveBack(out, kb.c(1));
    pack(kb.c(0), out);
    kb.cbPushBack(out, kb.c(1));
  }
  release();
}

void ComputeBuilder::sections(Value count, int64_t out,
                              llvm::function_ref<void(Value)> math) {
  Value c0 = kb.c(0);
  kb.cbReserveBack(out, count);
  forLoop(c0, count, [&](Value i) {
    acquire();
    math(i);
    commit();
    wait();
    pack(c0, out);
    release();
  });
  kb.cbPushBack(out, count);
}

void ComputeBuilder::forLoop(Value lb, Value ub,
                             llvm::function_ref<void(Value)> body) {
  forget();
  kb.forLoop(lb, ub, [&](Value i) {
    forget();
    body(i);
  });
  forget();
}

void ComputeBuilder::ifThen(Value cond, llvm::function_ref<void()> body) {
  forget();
  kb.ifThen(cond, [&] {
    forget();
    body();
  });
  forget();
}

} // namespace mlir::attn::tt

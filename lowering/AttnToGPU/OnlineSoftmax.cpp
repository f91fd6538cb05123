//===- OnlineSoftmax.cpp - The attention math of attn's kernels -----------===//

#include "lowering/AttnToGPU/OnlineSoftmax.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

static Value negInf(KernelBuilder &b) {
  return b.f32(-std::numeric_limits<double>::infinity());
}

SoftmaxState SoftmaxState::init(KernelBuilder &b, int64_t numHeads,
                                int64_t perLane) {
  SoftmaxState s;
  Value zero = b.f32(0.0);
  for (int64_t h = 0; h < numHeads; ++h) {
    s.m.push_back(negInf(b));
    s.l.push_back(zero);
    s.acc.emplace_back(perLane, zero);
  }
  return s;
}

SmallVector<Value> SoftmaxState::flatten() const {
  SmallVector<Value> values;
  for (size_t h = 0; h < m.size(); ++h) {
    values.push_back(m[h]);
    values.push_back(l[h]);
    llvm::append_range(values, acc[h]);
  }
  return values;
}

SoftmaxState SoftmaxState::unflatten(ValueRange values, int64_t numHeads,
                                     int64_t perLane) {
  SoftmaxState s;
  size_t i = 0;
  for (int64_t h = 0; h < numHeads; ++h) {
    s.m.push_back(values[i++]);
    s.l.push_back(values[i++]);
    s.acc.emplace_back(values.begin() + i, values.begin() + i + perLane);
    i += perLane;
  }
  return s;
}

/// `m` where it is finite, 0 where it is -inf: the exponent base that keeps
/// an empty state's -inf - -inf out of exp2 (exp2(-inf - 0) = 0).
Value mlir::attn::finiteOrZero(KernelBuilder &b, Value m) {
  Value empty =
      b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, m, negInf(b));
  return b.select(empty, b.f32(0.0), m);
}

SoftmaxState mlir::attn::updateSoftmax(KernelBuilder &b,
                                       const SoftmaxState &state,
                                       ArrayRef<SmallVector<Value>> scores,
                                       ArrayRef<SmallVector<Value>> values) {
  size_t numHeads = state.m.size();
  SoftmaxState next;
  SmallVector<Value> alpha;
  SmallVector<SmallVector<Value>> p(numHeads);
  for (size_t h = 0; h < numHeads; ++h) {
    // A NaN score stays out of the running max but not out of l and the
    // accumulator (exp2(NaN - m) is NaN), so the row still ends NaN.
    Value mNew = state.m[h];
    for (const SmallVector<Value> &key : scores)
      mNew = b.maxnumf(mNew, key[h]);
    Value base = finiteOrZero(b, mNew);
    alpha.push_back(b.create<math::Exp2Op>(b.subf(state.m[h], base)));
    Value l = b.mulf(state.l[h], alpha[h]);
    for (const SmallVector<Value> &key : scores) {
      p[h].push_back(b.create<math::Exp2Op>(b.subf(key[h], base)));
      l = b.addf(l, p[h].back());
    }
    next.m.push_back(mNew);
    next.l.push_back(l);
    next.acc.emplace_back();
  }
  // Element-major, heads inside: each value element is read once for all
  // heads, and a lane's few accumulators of one element stay in registers
  // (on a CPU device the state lives in memory, one access per element).
  size_t perLane = numHeads ? state.acc.front().size() : 0;
  for (size_t i = 0; i < perLane; ++i)
    for (size_t h = 0; h < numHeads; ++h) {
      Value a = b.mulf(state.acc[h][i], alpha[h]);
      for (auto [ph, v] : llvm::zip_equal(p[h], values))
        a = b.fma(ph, v[i], a);
      next.acc[h].push_back(a);
    }
  return next;
}

SoftmaxState mlir::attn::updateSoftmax(KernelBuilder &b,
                                       const SoftmaxState &state,
                                       ArrayRef<Value> scores,
                                       ArrayRef<Value> values) {
  SmallVector<SmallVector<Value>> s{llvm::to_vector(scores)};
  SmallVector<SmallVector<Value>> v{llvm::to_vector(values)};
  return updateSoftmax(b, state, s, v);
}

SoftmaxState mlir::attn::mergeSoftmax(KernelBuilder &b, const SoftmaxState &x,
                                      const SoftmaxState &y) {
  SoftmaxState merged;
  for (size_t h = 0; h < x.m.size(); ++h) {
    Value m = b.maxnumf(x.m[h], y.m[h]);
    Value base = finiteOrZero(b, m);
    Value wx = b.create<math::Exp2Op>(b.subf(x.m[h], base));
    Value wy = b.create<math::Exp2Op>(b.subf(y.m[h], base));
    merged.m.push_back(m);
    merged.l.push_back(b.addf(b.mulf(x.l[h], wx), b.mulf(y.l[h], wy)));
    SmallVector<Value> acc;
    for (auto [ax, ay] : llvm::zip_equal(x.acc[h], y.acc[h]))
      acc.push_back(b.addf(b.mulf(ax, wx), b.mulf(ay, wy)));
    merged.acc.push_back(std::move(acc));
  }
  return merged;
}

SoftmaxState mlir::attn::emitKeyLoop(KernelBuilder &b, Value jlo, Value jhi,
                               int64_t blockSize, Value blockTable,
                               Value tableRow, Value maxBlocks,
                               Value numBlocks,
                               const SoftmaxState &init, KeyBody body) {
  int64_t numHeads = init.m.size();
  int64_t perLane = init.acc.front().size();
  Value bs = b.idx(blockSize);
  Value kbLo = b.divui(jlo, bs);
  Value kbHi = b.ceilDiv(jhi, bs);
  Value lastBlock = b.subi(numBlocks, b.idx(1));
  Value lastColumn = b.subi(maxBlocks, b.idx(1));
  auto blocks = b.create<scf::ForOp>(
      kbLo, kbHi, b.idx(1), init.flatten(),
      [&](OpBuilder &nested, Location loc, Value kb, ValueRange carried) {
        KernelBuilder kb_(loc, nested, b.options);
        Value column = kb_.create<arith::MinUIOp>(kb, lastColumn);
        Value raw = kb_.loadIndex(blockTable, kb_.addi(tableRow, column));
        // Unsigned min also sends negative entries to the last block.
        Value block = kb_.create<arith::MinUIOp>(raw, lastBlock);
        Value start = kb_.muli(kb, bs);
        Value oLo = kb_.maxsi(kb_.subi(jlo, start), kb_.idx(0));
        Value oHi = kb_.minsi(kb_.subi(jhi, start), bs);
        auto offsets = kb_.create<scf::ForOp>(
            oLo, oHi, kb_.idx(1), carried,
            [&](OpBuilder &inner, Location loc2, Value off,
                ValueRange state) {
              KernelBuilder ib(loc2, inner, b.options);
              SoftmaxState s =
                  SoftmaxState::unflatten(state, numHeads, perLane);
              SoftmaxState next =
                  body(ib, ib.addi(start, off), block, off, s);
              ib.create<scf::YieldOp>(next.flatten());
            });
        kb_.create<scf::YieldOp>(offsets.getResults());
      });
  return SoftmaxState::unflatten(blocks.getResults(), numHeads, perLane);
}

HeadNorm mlir::attn::normalizeHead(KernelBuilder &b, Value m, Value l,
                                   Value sinkLog2, Value valueScale) {
  HeadNorm norm;
  if (sinkLog2) {
    Value mF = b.maxnumf(m, sinkLog2);
    // A sink of -inf on an empty row leaves mF -inf: keep exp2 off
    // -inf - -inf.
    Value base = finiteOrZero(b, mF);
    norm.alpha = b.create<math::Exp2Op>(b.subf(m, base));
    l = b.addf(b.mulf(l, norm.alpha),
               b.create<math::Exp2Op>(b.subf(sinkLog2, base)));
    m = mF;
  }
  Value zero = b.f32(0.0);
  Value empty = b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, l, zero);
  norm.inv =
      b.select(empty, zero, b.divf(valueScale ? valueScale : b.f32(1.0), l));
  Value lse =
      b.addf(b.mulf(m, b.f32(kLn2)), b.create<math::LogOp>(l));
  norm.lse = b.select(empty, negInf(b), lse);
  return norm;
}

HeadResult mlir::attn::finalizeSoftmax(KernelBuilder &b,
                                       const SoftmaxState &state, int64_t h,
                                       Value sinkLog2, Value valueScale) {
  HeadNorm norm =
      normalizeHead(b, state.m[h], state.l[h], sinkLog2, valueScale);
  HeadResult r;
  for (Value a : state.acc[h]) {
    if (norm.alpha)
      a = b.mulf(a, norm.alpha);
    r.out.push_back(b.mulf(a, norm.inv));
  }
  r.lse = norm.lse;
  return r;
}

BlockUpdate mlir::attn::updateBlockSoftmax(KernelBuilder &b, Value probs,
                                           int64_t head, Value m, Value l) {
  int64_t blockSize = cast<MemRefType>(probs.getType()).getDimSize(1);
  auto scoresType = VectorType::get({blockSize}, b.getF32Type());
  SmallVector<Value, 2> at{b.idx(head), b.idx(0)};
  // As updateSoftmax: a NaN score stays out of the max, not out of l and
  // the accumulator.
  Value scores = vector::LoadOp::create(b, scoresType, probs, at);
  BlockUpdate u;
  u.m = b.maxnumf(m, b.maxnumReduce(scores));
  Value base = finiteOrZero(b, u.m);
  u.alpha = b.create<math::Exp2Op>(b.subf(m, base));
  Value p = b.create<math::Exp2Op>(
      b.subf(scores, b.create<vector::BroadcastOp>(scoresType, base)));
  vector::StoreOp::create(b, p, probs, at);
  Value sum =
      vector::ReductionOp::create(b, vector::CombiningKind::ADD, p, dotFlags());
  u.l = b.fma(l, u.alpha, sum);
  return u;
}

BlockUpdates mlir::attn::updateBlockSoftmaxes(KernelBuilder &b, Value probs,
                                              ValueRange carried,
                                              int64_t heads) {
  BlockUpdates u;
  SmallVector<Value> l;
  for (int64_t i = 0; i < heads; ++i) {
    BlockUpdate head =
        updateBlockSoftmax(b, probs, i, carried[i], carried[heads + i]);
    u.carried.push_back(head.m);
    l.push_back(head.l);
    u.alpha.push_back(head.alpha);
  }
  u.carried.append(l);
  return u;
}

SmallVector<Value> mlir::attn::addWeightedValue(KernelBuilder &b, Value probs,
                                                Value u, Value value,
                                                ValueRange acc) {
  auto chunkType = cast<VectorType>(value.getType());
  SmallVector<Value> next;
  for (size_t i = 0; i < acc.size(); ++i) {
    Value pu = memref::LoadOp::create(b, probs, ValueRange{b.idx(i), u});
    Value weight = b.create<vector::BroadcastOp>(chunkType, pu);
    next.push_back(b.fma(weight, value, acc[i]));
  }
  return next;
}

void mlir::attn::emitIf(KernelBuilder &b, Value cond,
                  function_ref<void(KernelBuilder &)> then) {
  auto ifOp = b.create<scf::IfOp>(cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  then(b);
}

void mlir::attn::emitMerge(
    KernelBuilder &b, int64_t numStates, int64_t headDim,
    int64_t workgroupSize,
    function_ref<Value(KernelBuilder &, int64_t)> loadLse,
    function_ref<Value(KernelBuilder &, int64_t, Value)> loadOut, Value sink,
    function_ref<void(KernelBuilder &, Value, Value)> storeOut,
    function_ref<void(KernelBuilder &, Value)> storeLse) {
  Value ninf = negInf(b);
  Value zero = b.f32(0.0);
  SmallVector<Value> lse, isEmpty;
  Value maxLse = sink ? sink : ninf;
  Value pinf = b.f32(std::numeric_limits<double>::infinity());
  for (int64_t s = 0; s < numStates; ++s) {
    // Either infinity marks an empty state (FlashAttention-2 reports +inf
    // for a row with no key; vLLM's merge_attn_states.cu reads both so):
    // it becomes -inf before the max, so a +inf cannot win it.
    Value raw = loadLse(b, s);
    Value absLse = b.create<math::AbsFOp>(raw);
    isEmpty.push_back(
        b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, absLse, pinf));
    lse.push_back(b.select(isEmpty.back(), ninf, raw));
    // A NaN lse must reach the result: no max that drops NaN here.
    maxLse = b.maxf(maxLse, lse.back());
  }
  Value allEmpty =
      b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, maxLse, ninf);
  // An empty state (lse -inf) weighs nothing, whatever its out holds; the
  // select also keeps -inf - -inf out of exp.
  SmallVector<Value> weight;
  Value denom = zero;
  for (int64_t s = 0; s < numStates; ++s) {
    Value w = b.create<math::ExpOp>(b.subf(lse[s], maxLse));
    weight.push_back(b.select(isEmpty[s], zero, w));
    denom = b.addf(denom, weight.back());
  }
  if (sink)
    denom = b.addf(denom, b.select(allEmpty, zero,
                                   b.create<math::ExpOp>(
                                       b.subf(sink, maxLse))));
  Value inv = b.select(allEmpty, zero, b.divf(b.f32(1.0), denom));
  for (int64_t s = 0; s < numStates; ++s)
    weight[s] = b.mulf(weight[s], inv);

  Value tid = b.create<gpu::ThreadIdOp>(gpu::Dimension::x);
  b.create<scf::ForOp>(
      tid, b.idx(headDim), b.idx(workgroupSize), ValueRange(),
      [&](OpBuilder &nested, Location loc, Value d, ValueRange) {
        KernelBuilder ib(loc, nested, b.options);
        Value acc = ib.f32(0.0);
        for (int64_t s = 0; s < numStates; ++s) {
          Value term = ib.mulf(weight[s], loadOut(ib, s, d));
          acc = ib.addf(acc, ib.select(isEmpty[s], ib.f32(0.0), term));
        }
        storeOut(ib, d, acc);
        ib.create<scf::YieldOp>();
      });
  Value total = b.addf(maxLse, b.create<math::LogOp>(denom));
  Value result = b.select(allEmpty, ninf, total);
  emitIf(b, b.cmpi(arith::CmpIPredicate::eq, tid, b.idx(0)),
         [&](KernelBuilder &ib) { storeLse(ib, result); });
}

//===- PagedPrefillMatrix.cpp - The tiled prefill kernel on matrix units --===//
//
// The tiled prefill kernel of paged_attention (same grid, workgroup, work
// assignment and masks as PagedPrefill.cpp, so both share a host plan) with
// its two products on a subgroup's matrix unit, through upstream's
// gpu.subgroup_mma_* ops (NVVM WMMA, SPIR-V cooperative matrices): f16
// caches (16 x 16 x 16 products), or bf16 caches as tf32 (tiles staged as
// f32, 16 x 16 x 8 products; NVVM only), head sizes a multiple of 16. Each
// of the first rows / 16 subgroups owns 16 of the tile's rows; the others
// only stage tiles:
//
//  - the query tile Q [rows, D] is staged once, each key tile K, V [Bc, D]
//    per step, in workgroup memory as f16 (f32 for tf32);
//  - S = Q K^T of the subgroup's 16 rows, Bc / 16 accumulators of 16 x 16,
//    goes to workgroup memory, where lanes apply the scale, ALiBi, the soft
//    cap and the masks, keep each row's running max and sum, and write P =
//    exp2(s - m) as f16 (f32) and each row's rescale factor as a 16 x 16
//    block;
//  - the output stays in D / 16 accumulators, multiplied element-wise by
//    the factor block and added P V, and is normalized through workgroup
//    memory at the end.
//
// With `prefill-matrix=emulate` the same kernel runs on any SIMT device:
// an accumulator is the lane's share of the 16 x 16 tile and the products
// read their operands from workgroup memory, to check the structure of the
// kernel where no matrix unit is. On lavapipe (8 lanes: 32 values a lane
// per tile) llvmpipe compiles the emulated kernel in seconds at head size
// 64 and 16 KiB tiles, in minutes beyond (see README).
//
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"
#include "lowering/AttnToGPU/PagedAttention.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The side of a matrix-unit tile.
constexpr int64_t kTile = 16;

/// A 16 x 16 tile of f32 accumulators of one subgroup: a gpu.mma_matrix
/// "COp" on matrix units; emulated, the lane's share: element e = 16 r + c
/// in lane e % S, slot e / S.
struct Acc {
  Value matrix;
  SmallVector<Value> values;
};

/// The products of the kernel, on matrix units or emulated.
class TileMma {
public:
  /// `operand`: the element of the staged A and B tiles, f16 (products of
  /// 16 x 16 x 16) or f32 (tf32 products of 16 x 16 x 8).
  TileMma(KernelBuilder &b, bool emulate, int64_t subgroupSize, Value lane,
          Type operand)
      : b(b), emulate(emulate), S(subgroupSize), lane(lane), operand(operand),
        kStep(operand.isF32() ? 8 : kTile) {}

  Acc zero(KernelBuilder &kb) {
    Acc c;
    if (!emulate) {
      c.matrix = kb.create<gpu::SubgroupMmaConstantMatrixOp>(
          accType(), kb.f32(0.0));
      return c;
    }
    c.values.assign(kTile * kTile / S, kb.f32(0.0));
    return c;
  }

  /// c + A B, A the 16 x K rows of `a` from `aOffset` with lead `aLead`,
  /// B the K x 16 block of `bBuf` from `bOffset`: B[k][n] at
  /// bOffset + k * bLead + n, or with `transposed` at bOffset + n * bLead +
  /// k (the rows of K are B's columns). K is a multiple of 16.
  Acc mma(KernelBuilder &kb, const Acc &c, Value a, Value aOffset,
          int64_t aLead, Value bBuf, Value bOffset, int64_t bLead,
          bool transposed, int64_t K) {
    if (!emulate) {
      Value acc = c.matrix;
      for (int64_t k = 0; k < K / kStep; ++k) {
        Value aAt = kb.addi(aOffset, kb.idx(k * kStep));
        Value bAt = kb.addi(bOffset,
                            kb.idx(transposed ? k * kStep : k * kStep * bLead));
        Value am = kb.create<gpu::SubgroupMmaLoadMatrixOp>(
            operandType("AOp"), a, ValueRange{aAt},
            kb.getIndexAttr(aLead), /*transpose=*/UnitAttr());
        Value bm = kb.create<gpu::SubgroupMmaLoadMatrixOp>(
            operandType("BOp"), bBuf, ValueRange{bAt},
            kb.getIndexAttr(bLead),
            transposed ? kb.getUnitAttr() : UnitAttr());
        // The product must name B's layout as its load did: PTX's
        // wmma.mma takes .row.col fragments of a column-major B, and its
        // result is undefined when the layouts disagree.
        acc = kb.create<gpu::SubgroupMmaComputeOp>(
            accType(), am, bm, acc, UnitAttr(),
            transposed ? kb.getUnitAttr() : UnitAttr());
      }
      return {acc, {}};
    }
    Acc out;
    for (auto [s, init] : llvm::enumerate(c.values)) {
      auto [r, n] = rowCol(kb, s);
      Value aRow = kb.addi(aOffset, kb.muli(r, kb.idx(aLead)));
      Value bCol = transposed ? kb.addi(bOffset, kb.muli(n, kb.idx(bLead)))
                              : kb.addi(bOffset, n);
      auto loop = kb.create<scf::ForOp>(
          kb.idx(0), kb.idx(K), kb.idx(1), ValueRange{init},
          [&](OpBuilder &nested, Location loc, Value k, ValueRange acc) {
            KernelBuilder ib(loc, nested, b.options);
            Value av = ib.loadF32(a, ib.addi(aRow, k));
            Value bAt = transposed
                            ? ib.addi(bCol, k)
                            : ib.addi(bCol, ib.muli(k, ib.idx(bLead)));
            Value bv = ib.loadF32(bBuf, bAt);
            ib.create<scf::YieldOp>(ValueRange{ib.fma(av, bv, acc[0])});
          });
      out.values.push_back(loop.getResult(0));
    }
    return out;
  }

  /// c times, element-wise, the 16 x 16 f32 block of `m` at `offset`
  /// (lead 16).
  Acc scale(KernelBuilder &kb, const Acc &c, Value m, Value offset) {
    if (!emulate) {
      Value factors = kb.create<gpu::SubgroupMmaLoadMatrixOp>(
          accType(), m, ValueRange{offset}, kb.getIndexAttr(kTile),
          UnitAttr());
      return {kb.create<gpu::SubgroupMmaElementwiseOp>(
                  accType(), ValueRange{c.matrix, factors},
                  gpu::MMAElementwiseOp::MULF),
              {}};
    }
    Acc out;
    for (auto [s, v] : llvm::enumerate(c.values)) {
      auto [r, n] = rowCol(kb, s);
      Value at = kb.addi(offset, kb.addi(kb.muli(r, kb.idx(kTile)), n));
      out.values.push_back(kb.mulf(v, kb.loadF32(m, at)));
    }
    return out;
  }

  /// Stores c to f32 `dst` from `offset` with lead `lead`.
  void store(KernelBuilder &kb, const Acc &c, Value dst, Value offset,
             int64_t lead) {
    if (!emulate) {
      kb.create<gpu::SubgroupMmaStoreMatrixOp>(
          c.matrix, dst, ValueRange{offset}, kb.getIndexAttr(lead),
          UnitAttr());
      return;
    }
    for (auto [s, v] : llvm::enumerate(c.values)) {
      auto [r, n] = rowCol(kb, s);
      kb.storeF32(v, dst, kb.addi(offset, kb.addi(kb.muli(r, kb.idx(lead)), n)));
    }
  }

  /// Accumulators the caller carries through a loop: one value each.
  SmallVector<Value> flatten(ArrayRef<Acc> accs) const {
    SmallVector<Value> values;
    for (const Acc &a : accs) {
      if (!emulate)
        values.push_back(a.matrix);
      else
        llvm::append_range(values, a.values);
    }
    return values;
  }
  SmallVector<Acc> unflatten(ValueRange values, size_t count) const {
    SmallVector<Acc> accs;
    size_t per = emulate ? kTile * kTile / S : 1;
    for (size_t i = 0; i < count; ++i) {
      Acc a;
      if (!emulate)
        a.matrix = values[i];
      else
        a.values.assign(values.begin() + i * per,
                        values.begin() + (i + 1) * per);
      accs.push_back(std::move(a));
    }
    return accs;
  }

private:
  Type accType() {
    return gpu::MMAMatrixType::get({kTile, kTile}, b.getF32Type(), "COp");
  }
  Type operandType(StringRef which) {
    SmallVector<int64_t> shape = {kTile, kStep};
    if (which == "BOp")
      shape = {kStep, kTile};
    return gpu::MMAMatrixType::get(shape, operand, which);
  }
  std::pair<Value, Value> rowCol(KernelBuilder &kb, size_t slot) {
    Value e = kb.addi(kb.idx(slot * S), lane);
    return {kb.divui(e, kb.idx(kTile)), kb.remui(e, kb.idx(kTile))};
  }

  KernelBuilder &b;
  bool emulate;
  int64_t S;
  Value lane;
  Type operand;
  int64_t kStep;
};

/// How the workgroup covers its rows and keys.
struct MatrixTiling {
  int64_t subgroupSize; ///< S
  int64_t subgroups;    ///< W, 16 rows each
  int64_t keysPerTile;  ///< Bc, a multiple of 16
  int64_t headsPerTile, tokensPerTile;
  /// Subgroups of the workgroup (>= W): the SIMT kernel's, so that both
  /// kernels share a host plan; the rest stage tiles and skip products.
  int64_t launchSubgroups;
  /// A and B staged as f32 for tf32 products (bf16 caches: tf32 holds
  /// every bf16 exactly), else as f16.
  bool tf32;

  int64_t rows() const { return subgroups * kTile; }
  int64_t workgroupSize() const { return launchSubgroups * subgroupSize; }
  bool hasIdleSubgroups() const { return launchSubgroups > subgroups; }
};

/// Workgroup memory of the kernel, in elements of each buffer.
struct MatrixBuffers {
  int64_t query, keys, values, scores, probs, factors;

  static MatrixBuffers of(const PagedConfig &c, const MatrixTiling &t) {
    MatrixBuffers m;
    m.query = t.rows() * c.headSize;
    m.keys = m.values = t.keysPerTile * c.headSize;
    m.scores = t.rows() * t.keysPerTile;
    m.probs = t.rows() * t.keysPerTile;
    m.factors = t.rows() * kTile;
    return m;
  }
  int64_t bytes(const MatrixTiling &t) const {
    return (t.tf32 ? 4 : 2) * (query + keys + values + probs) +
           4 * (scores + factors);
  }
};

class MatrixBuilder {
public:
  MatrixBuilder(KernelBuilder &b, gpu::GPUFuncOp fn, const KernelArgs &args,
                const PagedConfig &c, const MatrixTiling &t, bool emulate)
      : b(b), fn(fn), args(args), c(c), t(t), emulate(emulate), math{c} {}

  void build();

private:
  /// What the key walk leaves: the output accumulators and each lane row's
  /// m and l.
  struct Walked {
    SmallVector<Acc> o;
    SmallVector<Value> m, l;
  };

  /// The arguments, the workgroup buffers and the lane's place: its
  /// subgroup, and its rows and columns in the softmax.
  void placeLanes();
  /// The key tiles the workgroup's rows see, from the query tile staged.
  Walked walkTiles(const TileWork &work, TileMma &mma);
  /// One key tile [kt, kt + Bc): stage it, S = Q K^T, the softmax, O = O *
  /// alpha + P V; the loop's next `state` (accumulators, then m and l).
  SmallVector<Value> tileStep(KernelBuilder &kb, const TileWork &work,
                              TileMma &mma, Value kt, Value lastKey,
                              ValueRange state);
  /// Normalizes the accumulators and writes the active rows' out and lse.
  void writeRows(const TileWork &work, TileMma &mma,
                 const Walked &walked);
  /// Copies the query rows of the tile into `qs` (f16, [rows, D]).
  void stageQuery(KernelBuilder &kb, const TileWork &work, Value headBase);
  /// Copies keys and values [kt, kt + Bc) (clamped to `last`).
  void stageKeys(KernelBuilder &kb, const TileWork &work, Value kt,
                 Value last);
  /// The element of the staged A and B tiles (TileMma).
  Type operandType() const { return t.tf32 ? b.getF32Type() : b.getF16Type(); }
  /// Stores `v`, loaded from a query or cache buffer, into the staged tile
  /// `dst` at `i`: as it is when the elements agree, else through f32.
  void stage(KernelBuilder &kb, Value v, Value dst, Value i) {
    if (v.getType() == cast<MemRefType>(dst.getType()).getElementType())
      kb.create<memref::StoreOp>(v, dst, ValueRange{i});
    else
      kb.storeF32(kb.toF32(v), dst, i);
  }
  /// `body`'s values where this lane's subgroup owns rows, `idle` where
  /// it does not (subgroups past W); `body` alone when every subgroup
  /// does. No barrier may be in `body`.
  SmallVector<Value>
  ifComputes(KernelBuilder &kb, ValueRange idle,
             function_ref<SmallVector<Value>(KernelBuilder &)> body);
  /// The softmax of the subgroup's rows over the tile's scores.
  void softmax(KernelBuilder &kb, const TileWork &work, Value kt,
               ArrayRef<Value> m, ArrayRef<Value> l,
               SmallVectorImpl<Value> &mNext, SmallVectorImpl<Value> &lNext);

  KernelBuilder &b;
  gpu::GPUFuncOp fn;
  const KernelArgs &args;
  const PagedConfig &c;
  const MatrixTiling &t;
  bool emulate;
  ScoreMath math;

  Value query, cache, blockTable, alibi, sinks, out, lse;
  Value qs, ks, vs, ss, ps, fs;
  Value tid, lane, sg, g;
  /// i1: this lane's subgroup owns rows (subgroup id < W); null when every
  /// subgroup does.
  Value computes;
  /// The first tile row of this lane's subgroup.
  Value rowBase;
  /// The rows of the subgroup this lane handles in the softmax, and the
  /// part of their columns.
  int64_t rowsPerLane, lanesPerRow;
  SmallVector<Value> laneRows;
  Value laneColumn;
};

void MatrixBuilder::stageQuery(KernelBuilder &kb, const TileWork &work,
                               Value headBase) {
  int64_t D = c.headSize;
  kb.create<scf::ForOp>(
      tid, kb.idx(t.rows() * D), kb.idx(t.workgroupSize()), ValueRange(),
      [&](OpBuilder &nested, Location loc, Value i, ValueRange) {
        KernelBuilder ib(loc, nested, b.options);
        Value row = ib.divui(i, ib.idx(D));
        Value d = ib.remui(i, ib.idx(D));
        RowPlace place = placeRow(ib, work, row, t.headsPerTile, headBase);
        Value at = ib.addi(
            ib.muli(ib.addi(ib.muli(place.token, ib.idx(c.numHeads)),
                            place.head),
                    ib.idx(D)),
            d);
        stage(ib, ib.create<memref::LoadOp>(query, at), qs, i);
        ib.create<scf::YieldOp>();
      });
}

void MatrixBuilder::stageKeys(KernelBuilder &kb, const TileWork &work,
                              Value kt, Value last) {
  int64_t D = c.headSize;
  int64_t perPart = t.keysPerTile * D;
  kb.create<scf::ForOp>(
      tid, kb.idx(2 * perPart), kb.idx(t.workgroupSize()), ValueRange(),
      [&](OpBuilder &nested, Location loc, Value i, ValueRange) {
        KernelBuilder ib(loc, nested, b.options);
        Value isValue = ib.cmpi(arith::CmpIPredicate::uge, i, ib.idx(perPart));
        Value rem = ib.remui(i, ib.idx(perPart));
        Value key = ib.divui(rem, ib.idx(D));
        Value d = ib.remui(rem, ib.idx(D));
        // kt + key may leave i32 past 2^31 - Bc keys, last - kt does not.
        Value j = ib.addi(kt, ib.minsi(key, ib.subi(last, kt)));
        Value block = lookupBlock(ib, c.blockSize, blockTable, work.tableRow,
                                  work.lastColumn, work.lastBlock, j);
        Value offset = ib.remui(j, ib.idx(c.blockSize));
        Value keyAt = ib.addi(cacheRowStart(ib, c, 0, block, offset, g), d);
        Value halfStride = ib.idx(c.blockSize * c.numKvHeads * D);
        Value at = ib.select(isValue, ib.addi(keyAt, halfStride), keyAt);
        Value v = ib.create<memref::LoadOp>(cache, at);
        auto ifOp = ib.create<scf::IfOp>(isValue, /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(ib);
          ib.setInsertionPointToStart(ifOp.thenBlock());
          stage(ib, v, vs, rem);
          ib.setInsertionPointToStart(ifOp.elseBlock());
          stage(ib, v, ks, rem);
        }
        ib.create<scf::YieldOp>();
      });
}

void MatrixBuilder::softmax(KernelBuilder &kb, const TileWork &work, Value kt,
                            ArrayRef<Value> m, ArrayRef<Value> l,
                            SmallVectorImpl<Value> &mNext,
                            SmallVectorImpl<Value> &lNext) {
  int64_t Bc = t.keysPerTile, cols = Bc / lanesPerRow;
  Value ninf = kb.f32(-std::numeric_limits<double>::infinity());
  Value qScale = math.queryScale(kb);
  for (auto [i, row] : llvm::enumerate(laneRows)) {
    // This row of the tile: its position, visible keys and ALiBi slope.
    Value tileRow = kb.addi(kb.muli(sg, kb.idx(kTile)), row);
    RowPlace place = placeRow(kb, work, tileRow, t.headsPerTile,
                              work.headBase);
    Value pos = work.positionOf(kb, place.token);
    auto [lo, hi] = visibleKeys(kb, c, pos, work.seqLen);
    hi = kb.select(place.active, hi, lo);
    Value slope = alibi ? math.slope(kb, alibi, place.head) : Value();
    SmallVector<Value> scores;
    Value tileMax = ninf;
    Value base = kb.addi(kb.muli(tileRow, kb.idx(Bc)), laneColumn);
    // Keys as columns of the tile, bounds moved by kt: kt + col leaves i32
    // in the last tile of 2^31 - 1 keys.
    Value relPos = kb.subi(pos, kt), relLo = kb.subi(lo, kt),
          relHi = kb.subi(hi, kt);
    for (int64_t j = 0; j < cols; ++j) {
      Value col = kb.addi(laneColumn, kb.idx(j));
      Value dot = kb.mulf(kb.loadF32(ss, kb.addi(base, kb.idx(j))), qScale);
      Value dist = alibi ? keyDistance(kb, col, relPos) : Value();
      Value s = math.score(kb, dot, slope, dist);
      Value visible = kb.cmpi(arith::CmpIPredicate::slt, col, relHi);
      if (c.windowLeft >= 0)
        visible = kb.create<arith::AndIOp>(
            kb.cmpi(arith::CmpIPredicate::sge, col, relLo), visible);
      s = kb.select(visible, s, ninf);
      scores.push_back(s);
      tileMax = kb.maxnumf(tileMax, s);
    }
    for (int64_t mask = 1; mask < lanesPerRow; mask *= 2)
      tileMax = kb.maxnumf(tileMax, kb.shuffleXor(tileMax, mask));
    Value mNew = kb.maxnumf(m[i], tileMax);
    // An empty row keeps m = -inf: exp2 takes 0 as its base then.
    Value empty =
        kb.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, mNew, ninf);
    Value expBase = kb.select(empty, kb.f32(0.0), mNew);
    Value sum = kb.f32(0.0);
    for (auto [j, s] : llvm::enumerate(scores)) {
      Value p = kb.create<math::Exp2Op>(kb.subf(s, expBase));
      sum = kb.addf(sum, p);
      kb.storeF32(p, ps, kb.addi(base, kb.idx(j)));
    }
    for (int64_t mask = 1; mask < lanesPerRow; mask *= 2)
      sum = kb.addf(sum, kb.shuffleXor(sum, mask));
    Value alpha = kb.create<math::Exp2Op>(kb.subf(m[i], expBase));
    mNext.push_back(mNew);
    lNext.push_back(kb.fma(l[i], alpha, sum));
    // The row of the factor block: 16 copies of alpha, split over the
    // row's lanes.
    Value fRow = kb.muli(tileRow, kb.idx(kTile));
    int64_t per = kTile / lanesPerRow;
    Value first = kb.muli(kb.divui(laneColumn, kb.idx(cols)), kb.idx(per));
    for (int64_t k = 0; k < per; ++k)
      kb.storeF32(alpha, fs, kb.addi(fRow, kb.addi(first, kb.idx(k))));
  }
}

SmallVector<Value> MatrixBuilder::ifComputes(
    KernelBuilder &kb, ValueRange idle,
    function_ref<SmallVector<Value>(KernelBuilder &)> body) {
  if (!computes)
    return body(kb);
  auto ifOp = kb.create<scf::IfOp>(idle.getTypes(), computes,
                                   /*withElseRegion=*/true);
  {
    // Without results the builder has put the yields in already.
    OpBuilder::InsertionGuard guard(kb);
    kb.setInsertionPointToStart(ifOp.thenBlock());
    KernelBuilder tb(kb.getLoc(), kb, b.options);
    SmallVector<Value> values = body(tb);
    if (!idle.empty()) {
      tb.create<scf::YieldOp>(values);
      kb.setInsertionPointToStart(ifOp.elseBlock());
      kb.create<scf::YieldOp>(idle);
    }
  }
  return SmallVector<Value>(ifOp.getResults());
}

void MatrixBuilder::placeLanes() {
  query = args.of(fn, Arg::Query);
  cache = args.of(fn, Arg::Cache);
  blockTable = args.of(fn, Arg::BlockTable);
  alibi = args.of(fn, Arg::AlibiSlopes);
  sinks = args.of(fn, Arg::Sinks);
  out = args.of(fn, Arg::Out);
  lse = args.of(fn, Arg::Lse);
  MatrixBuffers sizes = MatrixBuffers::of(c, t);
  Type op = operandType(), f32 = b.getF32Type();
  qs = addWorkgroupBuffer(fn, sizes.query, op);
  ks = addWorkgroupBuffer(fn, sizes.keys, op);
  vs = addWorkgroupBuffer(fn, sizes.values, op);
  ss = addWorkgroupBuffer(fn, sizes.scores, f32);
  ps = addWorkgroupBuffer(fn, sizes.probs, op);
  fs = addWorkgroupBuffer(fn, sizes.factors, f32);

  int64_t S = t.subgroupSize, Bc = t.keysPerTile;
  tid = b.create<gpu::ThreadIdOp>(gpu::Dimension::x);
  // In the softmax a lane takes rowsPerLane of the subgroup's 16 rows and
  // 1 / lanesPerRow of their columns.
  rowsPerLane = std::max<int64_t>(kTile / S, 1);
  lanesPerRow = std::max<int64_t>(S / kTile, 1);
  // Matrix units and the shuffles of a row's lanes need lanes as the device
  // numbers them. Emulated with one lane per row, the kernel has no
  // subgroup operation, and numbering lanes by thread id keeps it free of
  // subgroup builtins too (SPIR-V would need GroupNonUniform for them
  // alone), as in the SIMT kernel.
  if (!emulate || lanesPerRow > 1) {
    lane = b.create<gpu::LaneIdOp>(/*upper_bound=*/nullptr);
    sg = t.launchSubgroups > 1
             ? Value(b.create<gpu::SubgroupIdOp>(/*upper_bound=*/nullptr))
             : b.idx(0);
  } else {
    lane = t.launchSubgroups > 1 ? b.remui(tid, b.idx(S)) : tid;
    sg = t.launchSubgroups > 1 ? b.divui(tid, b.idx(S)) : b.idx(0);
  }
  if (t.hasIdleSubgroups())
    computes = b.cmpi(arith::CmpIPredicate::ult, sg, b.idx(t.subgroups));
  for (int64_t i = 0; i < rowsPerLane; ++i)
    laneRows.push_back(b.addi(b.muli(b.idx(i), b.idx(S / lanesPerRow)),
                              b.divui(lane, b.idx(lanesPerRow))));
  laneColumn = b.muli(b.remui(lane, b.idx(lanesPerRow)),
                      b.idx(Bc / lanesPerRow));
}

SmallVector<Value> MatrixBuilder::tileStep(KernelBuilder &kb,
                                           const TileWork &work,
                                           TileMma &mma, Value kt,
                                           Value lastKey, ValueRange state) {
  int64_t D = c.headSize, Bc = t.keysPerTile, outTiles = D / kTile;
  size_t numAcc = state.size() - 2 * rowsPerLane;
  SmallVector<Acc> o = mma.unflatten(state.take_front(numAcc), outTiles);
  SmallVector<Value> m, l;
  for (int64_t i = 0; i < rowsPerLane; ++i) {
    m.push_back(state[numAcc + 2 * i]);
    l.push_back(state[numAcc + 2 * i + 1]);
  }
  kb.create<gpu::BarrierOp>();
  stageKeys(kb, work, kt, lastKey);
  kb.create<gpu::BarrierOp>();
  // S = Q K^T for the subgroup's 16 rows, 16 keys at a time.
  ifComputes(kb, {}, [&](KernelBuilder &ib) {
    Value qAt = ib.muli(rowBase, ib.idx(D));
    for (int64_t n = 0; n < Bc / kTile; ++n) {
      Acc s = mma.mma(ib, mma.zero(ib), qs, qAt, D, ks, ib.idx(n * kTile * D),
                      D, /*transposed=*/true, D);
      mma.store(ib, s, ss,
                ib.addi(ib.muli(rowBase, ib.idx(Bc)), ib.idx(n * kTile)), Bc);
    }
    return SmallVector<Value>();
  });
  kb.create<gpu::BarrierOp>();
  SmallVector<Value> ml;
  for (int64_t i = 0; i < rowsPerLane; ++i)
    ml.append({m[i], l[i]});
  ml = ifComputes(kb, ml, [&](KernelBuilder &ib) {
    SmallVector<Value> mNext, lNext, next;
    softmax(ib, work, kt, m, l, mNext, lNext);
    for (int64_t i = 0; i < rowsPerLane; ++i)
      next.append({mNext[i], lNext[i]});
    return next;
  });
  kb.create<gpu::BarrierOp>();
  // O = O * alpha + P V, 16 output columns at a time.
  SmallVector<Value> yielded =
      ifComputes(kb, mma.flatten(o), [&](KernelBuilder &ib) {
        Value pAt = ib.muli(rowBase, ib.idx(Bc));
        Value fAt = ib.muli(rowBase, ib.idx(kTile));
        SmallVector<Acc> next;
        for (int64_t j = 0; j < outTiles; ++j) {
          Acc scaled = mma.scale(ib, o[j], fs, fAt);
          next.push_back(mma.mma(ib, scaled, ps, pAt, Bc, vs, ib.idx(j * kTile),
                                 D,
                                 /*transposed=*/false, Bc));
        }
        return mma.flatten(next);
      });
  llvm::append_range(yielded, ml);
  return yielded;
}

MatrixBuilder::Walked MatrixBuilder::walkTiles(const TileWork &work,
                                               TileMma &mma) {
  int64_t outTiles = c.headSize / kTile;
  Value wgLo = work.firstVisible(b), wgHi = work.lastVisibleEnd(b);
  Value lastKey = b.subi(wgHi, b.idx(1));
  Value ninf = b.f32(-std::numeric_limits<double>::infinity());
  SmallVector<Acc> init(outTiles, mma.zero(b));
  SmallVector<Value> carried = mma.flatten(init);
  size_t numAcc = carried.size();
  for (int64_t i = 0; i < rowsPerLane; ++i) {
    carried.push_back(ninf);
    carried.push_back(b.f32(0.0));
  }
  rowBase = b.muli(sg, b.idx(kTile));
  // Offsets from wgLo, not keys: kt + Bc leaves i32 past 2^31 - Bc keys.
  auto tiles = b.create<scf::ForOp>(
      b.idx(0), b.subi(wgHi, wgLo), b.idx(t.keysPerTile), carried,
      [&](OpBuilder &nested, Location loc, Value ot, ValueRange state) {
        KernelBuilder kb(loc, nested, b.options);
        Value kt = kb.addi(wgLo, ot);
        kb.create<scf::YieldOp>(
            tileStep(kb, work, mma, kt, lastKey, state));
      });
  Walked walked;
  walked.o = mma.unflatten(tiles.getResults().take_front(numAcc), outTiles);
  for (int64_t i = 0; i < rowsPerLane; ++i) {
    walked.m.push_back(tiles.getResult(numAcc + 2 * i));
    walked.l.push_back(tiles.getResult(numAcc + 2 * i + 1));
  }
  return walked;
}

void MatrixBuilder::writeRows(const TileWork &work, TileMma &mma,
                              const Walked &walked) {
  int64_t D = c.headSize, Bc = t.keysPerTile, outTiles = D / kTile;
  // Normalize: each lane's rows' factor (and lse), then the output through
  // workgroup memory, 16 columns at a time.
  SmallVector<Value> factor, rowActive, rowOut;
  for (int64_t i = 0; i < rowsPerLane; ++i) {
    Value tileRow = b.addi(rowBase, laneRows[i]);
    RowPlace place = placeRow(b, work, tileRow, t.headsPerTile,
                              work.headBase);
    SoftmaxState st;
    st.m.push_back(walked.m[i]);
    st.l.push_back(walked.l[i]);
    st.acc.push_back({b.f32(1.0)});
    Value sinkLog2;
    if (sinks)
      sinkLog2 = b.mulf(b.loadF32(sinks, place.head), b.f32(kLog2E));
    HeadResult res = finalizeSoftmax(b, st, 0, sinkLog2);
    factor.push_back(res.out[0]);
    Value lseAt = b.addi(b.muli(place.token, b.idx(c.numHeads)), place.head);
    rowActive.push_back(
        computes ? b.create<arith::AndIOp>(computes, place.active).getResult()
                 : place.active);
    rowOut.push_back(b.muli(lseAt, b.idx(D)));
    Value first = b.cmpi(arith::CmpIPredicate::eq, laneColumn, b.idx(0));
    emitIf(b, b.create<arith::AndIOp>(rowActive.back(), first),
           [&](KernelBuilder &ib) { ib.storeF32(res.lse, lse, lseAt); });
  }
  int64_t cols = kTile / lanesPerRow;
  Value colBase = b.divui(laneColumn, b.idx(Bc / kTile));
  for (int64_t j = 0; j < outTiles; ++j) {
    b.create<gpu::BarrierOp>();
    ifComputes(b, {}, [&](KernelBuilder &ib) {
      mma.store(ib, walked.o[j], ss, ib.muli(rowBase, ib.idx(Bc)), Bc);
      return SmallVector<Value>();
    });
    b.create<gpu::BarrierOp>();
    for (int64_t i = 0; i < rowsPerLane; ++i) {
      Value tileRow = b.addi(rowBase, laneRows[i]);
      emitIf(b, rowActive[i], [&](KernelBuilder &ib) {
        for (int64_t k = 0; k < cols; ++k) {
          Value col = ib.addi(colBase, ib.idx(k));
          Value v = ib.loadF32(
              ss, ib.addi(ib.muli(tileRow, ib.idx(Bc)), col));
          ib.storeF32(ib.mulf(v, factor[i]), out,
                      ib.addi(rowOut[i],
                              ib.addi(ib.idx(j * kTile), col)));
        }
      });
    }
  }
}

void MatrixBuilder::build() {
  placeLanes();
  std::optional<TileWork> work =
      beginTileWork(b, c, args.of(fn, Arg::QueryStartLoc),
                    args.of(fn, Arg::SeqLens), args.of(fn, Arg::Params),
                    t.tokensPerTile, t.headsPerTile);
  g = work->kvHead;
  TileMma mma(b, emulate, t.subgroupSize, lane, operandType());
  stageQuery(b, *work, work->headBase);
  writeRows(*work, mma, walkTiles(*work, mma));
  work->end(b);
}

} // namespace

int64_t mlir::attn::matrixMemoryBudget(const LoweringOptions &o) {
  return o.matrixWorkgroupMemory > 0 ? o.matrixWorkgroupMemory
                                     : o.maxWorkgroupMemory;
}

std::optional<MatrixPlan>
mlir::attn::chooseMatrixPlan(const PagedConfig &c, Type cacheElement,
                             int64_t tileRows, int64_t launchSubgroups,
                             const LoweringOptions &o) {
  // bf16 caches take tf32 products, which NVVM has (bf16 is native there)
  // and cooperative matrices do not (bf16 as i16 words): on NVVM, and
  // emulated anywhere.
  bool bf16 =
      cacheElement.isBF16() || (o.bf16AsI16 && cacheElement.isInteger(16));
  bool tf32 =
      bf16 && (!o.bf16AsI16 || o.prefillMatrix == PrefillMatrix::Emulate);
  if (o.prefillMatrix == PrefillMatrix::None ||
      !(cacheElement.isF16() || tf32) || c.headSize % kTile != 0 ||
      tileRows % kTile != 0 || tileRows / kTile > launchSubgroups)
    return std::nullopt;
  MatrixTiling t;
  t.tf32 = tf32;
  t.subgroupSize = o.subgroupSize;
  t.subgroups = tileRows / kTile;
  t.launchSubgroups = launchSubgroups;
  t.headsPerTile = 1;
  for (int64_t h = 1; h <= c.group() && h <= t.rows(); ++h)
    if (c.group() % h == 0)
      t.headsPerTile = h;
  t.tokensPerTile = t.rows() / t.headsPerTile;
  // The most keys a tile can take in the workgroup memory (at most 64).
  for (int64_t bc = 64; bc >= kTile; bc /= 2) {
    t.keysPerTile = bc;
    if (MatrixBuffers::of(c, t).bytes(t) <= matrixMemoryBudget(o))
      return MatrixPlan{t.subgroups,     t.keysPerTile,     t.headsPerTile,
                        t.tokensPerTile, t.launchSubgroups, t.tf32};
  }
  return std::nullopt;
}

void mlir::attn::buildMatrixPrefillKernel(KernelBuilder &b, gpu::GPUFuncOp fn,
                                          const KernelArgs &args,
                                          const PagedConfig &c,
                                          const MatrixPlan &plan) {
  MatrixTiling t;
  t.subgroupSize = b.options.subgroupSize;
  t.subgroups = plan.subgroups;
  t.keysPerTile = plan.keysPerTile;
  t.headsPerTile = plan.headsPerTile;
  t.tokensPerTile = plan.tokensPerTile;
  t.launchSubgroups = plan.launchSubgroups;
  t.tf32 = plan.tf32;
  MatrixBuilder(b, fn, args, c, t,
                b.options.prefillMatrix == PrefillMatrix::Emulate)
      .build();
}

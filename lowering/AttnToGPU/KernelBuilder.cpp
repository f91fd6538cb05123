//===- KernelBuilder.cpp - Shared pieces of attn's GPU kernels ------------===//

#include "lowering/AttnToGPU/KernelBuilder.h"
#include "lowering/KernelModuleAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

Type mlir::attn::getKernelElementType(Type hostElementType,
                                const LoweringOptions &options) {
  if (hostElementType.isBF16() && options.bf16AsI16)
    return IntegerType::get(hostElementType.getContext(), 16);
  if (getFp8Format(hostElementType))
    return IntegerType::get(hostElementType.getContext(), 8);
  return hostElementType;
}

Type mlir::attn::getFp8Format(Type hostElementType) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(hostElementType)
             ? hostElementType
             : Type();
}

Value HostLaunch::dim(Value memref, int64_t i) {
  return builder.createOrFold<memref::DimOp>(loc, memref, i);
}

StringRef mlir::attn::argName(Arg role) {
  switch (role) {
  case Arg::Query: return "query";
  case Arg::Cache: return "kv_cache";
  case Arg::QueryStartLoc: return "query_start_loc";
  case Arg::SeqLens: return "seq_lens";
  case Arg::BlockTable: return "block_table";
  case Arg::AlibiSlopes: return "alibi_slopes";
  case Arg::Sinks: return "sinks";
  case Arg::KScale: return "k_scale";
  case Arg::VScale: return "v_scale";
  case Arg::NewKey: return "key";
  case Arg::NewValue: return "value";
  case Arg::SlotMapping: return "slot_mapping";
  case Arg::OutA: return "out_a";
  case Arg::LseA: return "lse_a";
  case Arg::OutB: return "out_b";
  case Arg::LseB: return "lse_b";
  case Arg::PartialOut: return "partial_out";
  case Arg::PartialLse: return "partial_lse";
  case Arg::Out: return "out";
  case Arg::Lse: return "lse";
  case Arg::Params: return "params";
  case Arg::Count: break;
  }
  return "?";
}

void HostLaunch::push(Arg role, Value buffer) {
  assert(!args.has(role) && "a kernel argument role passed twice");
  buffers.push_back(buffer);
  roles.push_back(role);
  args.set(role, buffers.size() - 1);
}

int64_t HostLaunch::indexOf(Arg role) const {
  for (auto [i, r] : llvm::enumerate(roles))
    if (r == role)
      return i;
  llvm_unreachable("a bound on an argument the launch does not pass");
}

int64_t HostLaunch::elementBytes(unsigned i) const {
  return cast<MemRefType>(buffers[i].getType()).getElementTypeBitWidth() / 8;
}

void HostLaunch::bound(Arg role, ArrayRef<::attn::LaunchQuantity> of,
                       int64_t perProduct, int64_t plus, int64_t minProduct) {
  int64_t j = indexOf(role), bytes = elementBytes(j);
  ::attn::LaunchRelation r;
  r.of.assign(of.begin(), of.end());
  r.times = perProduct * bytes;
  r.plus = plus * bytes;
  r.min = minProduct * r.times + r.plus;
  r.max = ::attn::LaunchQuantity::bytes(j);
  bounds.checks.push_back(std::move(r));
}

void HostLaunch::boundRows(Arg role, ArrayRef<::attn::LaunchQuantity> of,
                           int64_t plusRows, int64_t minProduct) {
  MemRefType type = operandTypes[indexOf(role)];
  int64_t perRow = 1;
  for (int64_t d : type.getShape().drop_front()) {
    assert(!ShapedType::isDynamic(d) && "rows of a static width");
    perRow *= d;
  }
  bound(role, of, perRow, plusRows * perRow, minProduct);
}

void HostLaunch::boundBy(::attn::LaunchQuantity lhs,
                         ::attn::LaunchQuantity max) {
  ::attn::LaunchRelation r;
  r.of = {lhs};
  r.max = max;
  bounds.checks.push_back(std::move(r));
}

void HostLaunch::completeBounds(std::array<Value, 3> grid) {
  using ::attn::LaunchQuantity;
  bounds.params.assign(paramNames.begin(), paramNames.end());
  for (Arg role : roles)
    bounds.arguments.push_back(argName(role).str());
  bounds.arguments.push_back("params");
  // A kernel builder that forgets a bound is a bug of this pass, not of
  // its input: stop rather than write a kernel whose launches go unchecked.
  auto require = [&](bool ok, const Twine &what) {
    if (!ok)
      llvm::report_fatal_error("convert-attn-to-gpu: " + what +
                               " without a launch bound");
  };
  auto inSomeOf = [&](LaunchQuantity q) {
    return llvm::any_of(bounds.checks, [&](const ::attn::LaunchRelation &r) {
      return llvm::is_contained(r.of, q);
    });
  };
  for (size_t k = 0; k < paramNames.size(); ++k)
    require(inSomeOf(LaunchQuantity::param(k)), "param " + paramNames[k]);
  for (int d = 0; d < 3; ++d) {
    if (std::optional<int64_t> c = getConstantIntValue(grid[d])) {
      boundBy(LaunchQuantity::grid(d), LaunchQuantity::number(*c));
      continue;
    }
    require(checkedGrid[d] || inSomeOf(LaunchQuantity::grid(d)),
            "grid dimension " + Twine(d));
  }
  for (auto [j, type] : llvm::enumerate(operandTypes)) {
    auto boundsIt = [&](const ::attn::LaunchRelation &r) {
      return r.max == LaunchQuantity::bytes(j);
    };
    if (type.hasStaticShape()) {
      bound(roles[j], {}, 0, type.getNumElements());
      continue;
    }
    require(llvm::any_of(bounds.checks, boundsIt),
            "argument " + argName(roles[j]));
  }
  if (!paramNames.empty()) {
    ::attn::LaunchRelation r;
    r.plus = 4 * static_cast<int64_t>(paramNames.size());
    r.times = 0;
    r.max = LaunchQuantity::bytes(buffers.size());
    bounds.checks.push_back(std::move(r));
  }
}

KernelArgs HostLaunch::arguments() const {
  KernelArgs all = args;
  all.set(Arg::Params, buffers.size());
  return all;
}

void HostLaunch::addBuffer(Arg role, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  Value flat = memref;
  // Row-major operands with an identity layout are contiguous: one
  // collapse_shape views them as 1-D.
  operandTypes.push_back(type);
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t i = 0; i < type.getRank(); ++i)
      all.front().push_back(i);
    flat = memref::CollapseShapeOp::create(builder, loc, memref, all);
  }
  auto flatType = MemRefType::get({ShapedType::kDynamic},
                                  type.getElementType());
  if (flat.getType() != flatType)
    flat = memref::CastOp::create(builder, loc, flatType, flat);
  Type kernelElement = getKernelElementType(type.getElementType(), options);
  if (kernelElement != type.getElementType())
    flat = arith::BitcastOp::create(
        builder, loc, MemRefType::get({ShapedType::kDynamic}, kernelElement),
        flat);
  push(role, flat);
}

Value HostLaunch::addScratch(Arg role, Value numElements) {
  auto type = MemRefType::get({ShapedType::kDynamic}, builder.getF32Type());
  Value alloc = memref::AllocOp::create(builder, loc, type, numElements);
  operandTypes.push_back(type);
  scratch.push_back(alloc);
  push(role, alloc);
  return alloc;
}

std::pair<Value, Value> HostLaunch::addResults(Value out, Value lse,
                                               Value rows, int64_t numSplits,
                                               int64_t numHeads,
                                               int64_t headDim) {
  if (numSplits == 1) {
    addBuffer(Arg::Out, out);
    addBuffer(Arg::Lse, lse);
    return {};
  }
  Value states = arith::MulIOp::create(
      builder, loc, rows,
      arith::ConstantIndexOp::create(builder, loc, numSplits * numHeads));
  Value partialOut = addScratch(
      Arg::PartialOut,
      arith::MulIOp::create(builder, loc, states,
                            arith::ConstantIndexOp::create(builder, loc,
                                                           headDim)));
  return {partialOut, addScratch(Arg::PartialLse, states)};
}

void HostLaunch::addParam(int index, StringRef name, Value indexValue) {
  assert(index == static_cast<int>(paramValues.size()) &&
         "params go in the order of their KernelABI.h enum");
  (void)index;
  paramNames.push_back(name.str());
  paramValues.push_back(indexValue);
}

SmallVector<Type> HostLaunch::getKernelArgTypes() const {
  SmallVector<Type> types;
  for (Value b : buffers)
    types.push_back(b.getType());
  types.push_back(MemRefType::get({ShapedType::kDynamic},
                                  builder.getI32Type()));
  return types;
}

void HostLaunch::launch(gpu::GPUFuncOp kernel, std::array<Value, 3> grid,
                        int64_t blockSize) {
  // The params buffer: what the runtime fills from the operands' shapes.
  auto paramsType = MemRefType::get(
      {static_cast<int64_t>(paramValues.size())}, builder.getI32Type());
  Value params = memref::AllocOp::create(builder, loc, paramsType);
  for (auto [i, v] : llvm::enumerate(paramValues)) {
    Value asI32 =
        arith::IndexCastOp::create(builder, loc, builder.getI32Type(), v);
    Value at = arith::ConstantIndexOp::create(builder, loc, i);
    memref::StoreOp::create(builder, loc, asI32, params, at);
  }
  Value dynParams = memref::CastOp::create(
      builder, loc,
      MemRefType::get({ShapedType::kDynamic}, builder.getI32Type()), params);

  SmallVector<Value> operands(buffers);
  operands.push_back(dynParams);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  Value block = arith::ConstantIndexOp::create(builder, loc, blockSize);
  completeBounds(grid);
  kernel->setAttr("attn.bounds",
                  builder.getStringAttr(::attn::writeLaunchBounds(bounds)));
  gpu::LaunchFuncOp::create(builder, loc, kernel,
                            gpu::KernelDim3{grid[0], grid[1], grid[2]},
                            gpu::KernelDim3{block, one, one},
                            /*dynamicSharedMemorySize=*/Value(), operands);
  memref::DeallocOp::create(builder, loc, params);
}

void HostLaunch::releaseScratch() {
  for (Value s : scratch)
    memref::DeallocOp::create(builder, loc, s);
  scratch.clear();
}

gpu::GPUFuncOp mlir::attn::createKernel(ModuleOp module, Location loc,
                                  StringRef name, ArrayRef<Type> argTypes,
                                  int64_t blockSize,
                                  ArrayRef<std::string> params,
                                  StringRef opName) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto kernels = gpu::GPUModuleOp::create(b, loc, name);
  // Marks the modules this pass made, so its clean-up touches no others.
  kernels->setAttr("attn.kernels", b.getUnitAttr());
  SymbolTable(module).insert(kernels);
  b.setInsertionPointToStart(kernels.getBody());
  auto fn = gpu::GPUFuncOp::create(b, loc, kernels.getName(),
                                   b.getFunctionType(argTypes, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  fn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(blockSize), 1, 1}));
  SmallVector<Attribute> names;
  for (const std::string &p : params)
    names.push_back(b.getStringAttr(p));
  fn->setAttr("attn.params", b.getArrayAttr(names));
  fn->setAttr("attn.op", b.getStringAttr(opName));
  b.setInsertionPointToEnd(&fn.getBody().front());
  gpu::ReturnOp::create(b, loc);
  return fn;
}

LaneChunks mlir::attn::chooseLaneChunks(const LoweringOptions &options,
                                        Type element, int64_t dim) {
  int64_t bits = element.getIntOrFloatBitWidth();
  bool vectorLoads = options.vectorLoadBytes > 0 &&
                     (bits == 8 || bits == 16 || bits == 32);
  int64_t bytes = bits / 8;
  int64_t want =
      vectorLoads ? std::max<int64_t>(options.vectorLoadBytes / bytes, 1)
                  : options.vectorWidth;
  LaneChunks chunks;
  while (chunks.width * 2 <= want && dim % (chunks.width * 2) == 0)
    chunks.width *= 2;
  chunks.vectorLoads = vectorLoads && chunks.width > 1;
  return chunks;
}

//===----------------------------------------------------------------------===//
// Kernel side
//===----------------------------------------------------------------------===//

Value KernelBuilder::loadIndex(Value buffer, Value i) {
  Value v = create<memref::LoadOp>(buffer, i);
  return create<arith::IndexCastOp>(getIndexType(), v);
}

Value KernelBuilder::loadScale(Value scales, int64_t count, Value g) {
  if (!scales)
    return Value();
  return create<memref::LoadOp>(scales, count == 1 ? idx(0) : g);
}

Value KernelBuilder::maxnumReduce(Value vector) {
  auto type = cast<VectorType>(vector.getType());
  int64_t n = type.getNumElements();
  // An odd length keeps its last element beside the tree.
  Value rest;
  while (n > 1) {
    if (n % 2 == 1) {
      Value last = vector::ExtractOp::create(*this, vector, n - 1);
      rest = rest ? maxnumf(rest, last) : last;
      vector = vector::ExtractStridedSliceOp::create(*this, vector, {0},
                                                     {n - 1}, {1});
      --n;
    }
    Value lo = vector::ExtractStridedSliceOp::create(*this, vector, {0},
                                                     {n / 2}, {1});
    Value hi = vector::ExtractStridedSliceOp::create(*this, vector, {n / 2},
                                                     {n / 2}, {1});
    vector = maxnumf(lo, hi);
    n /= 2;
  }
  Value max = vector::ExtractOp::create(*this, vector, 0);
  return rest ? maxnumf(max, rest) : max;
}

Value KernelBuilder::fma(Value a, Value b, Value c) {
  return create<math::FmaOp>(a, b, c);
}

Value KernelBuilder::tanhF32(Value x) {
  Value ax = create<math::AbsFOp>(x);
  // |x| < 1/4: x (1 - x^2/3 + 2 x^4/15 - 17 x^6/315 + 62 x^8/2835), the
  // Taylor series to the term whose successor is below 1e-8 relative there.
  Value x2 = mulf(x, x);
  Value poly = f32(62.0 / 2835.0);
  for (double c : {-17.0 / 315.0, 2.0 / 15.0, -1.0 / 3.0, 1.0})
    poly = fma(poly, x2, f32(c));
  Value small = mulf(x, poly);
  // Elsewhere from t = e^-2|x| in (0, e^-1/2]: no cancellation in 1 - t.
  Value t = create<math::Exp2Op>(mulf(ax, f32(-2.0 / 0.6931471805599453)));
  Value large = divf(subf(f32(1.0), t), addf(f32(1.0), t));
  Value negative =
      create<arith::CmpFOp>(arith::CmpFPredicate::OLT, x, f32(0.0));
  large = select(negative, create<arith::NegFOp>(large), large);
  Value isSmall = create<arith::CmpFOp>(arith::CmpFPredicate::OLT, ax,
                                        f32(0.25));
  // NaN compares false and takes the exp form, which keeps it NaN.
  return select(isSmall, small, large);
}

Value KernelBuilder::loadF32(Value buffer, Value i, Type fp8Format) {
  return toF32(create<memref::LoadOp>(buffer, i), fp8Format);
}

Value KernelBuilder::toF32(Value v, Type fp8Format) {
  Type t = getElementTypeOrSelf(v.getType());
  if (t.isF32())
    return v;
  if (t.isInteger(8)) {
    assert(fp8Format && "an i8 element is an fp8 byte of a known format");
    return fp8ToF32(v, fp8Format);
  }
  if (t.isInteger(16)) {
    // bf16 stored as a 16-bit word: its bits are the high half of an f32.
    Value wide = create<arith::ExtUIOp>(shapedLike(v, getI32Type()), v);
    Value shifted = create<arith::ShLIOp>(
        wide, splatLike(v, create<arith::ConstantIntOp>(getI32Type(), 16)));
    return create<arith::BitcastOp>(shapedLike(v, getF32Type()), shifted);
  }
  return create<arith::ExtFOp>(shapedLike(v, getF32Type()), v);
}

namespace {

/// The fields of an fp8 format: `m` mantissa bits, exponent `bias`, the
/// magnitude bits of its largest finite value and of its quiet NaN.
struct Fp8Fields {
  int64_t m, bias, maxFinite, nan;
  bool e4m3;
};

Fp8Fields fp8Fields(Type format) {
  if (isa<Float8E4M3FNType>(format))
    return {3, 7, 0x7E, 0x7F, true};
  assert(isa<Float8E5M2Type>(format) && "an fp8 format");
  return {2, 15, 0x7B, 0x7F, false};
}

} // namespace

Value KernelBuilder::fp8ViaF16ToF32(Value byte, Type format) {
  Type i16 = shapedLike(byte, getI16Type());
  auto c = [&](int64_t v) {
    return splatLike(byte, create<arith::ConstantIntOp>(getI16Type(), v));
  };
  Value b = create<arith::ExtUIOp>(i16, byte);
  Value half = create<arith::ShLIOp>(b, c(8));
  bool e4m3 = fp8Fields(format).e4m3;
  if (e4m3) {
    // Sign to bit 15, exponent and mantissa (7 bits) to bits 13..7: the
    // f16 whose value is the e4m3's times 2^(7 - 15), subnormals alike.
    // The magnitude 0x7F is NaN, where the f16 would be finite.
    Value mag = create<arith::AndIOp>(b, c(0x7F));
    Value fields = create<arith::OrIOp>(
        create<arith::AndIOp>(half, c(0x8000)),
        create<arith::ShLIOp>(mag, c(7)));
    half = select(cmpi(arith::CmpIPredicate::eq, mag, c(0x7F)), c(0x7E00),
                  fields);
  }
  Value f16 = create<arith::BitcastOp>(shapedLike(byte, getF16Type()), half);
  Value wide = create<arith::ExtFOp>(shapedLike(byte, getF32Type()), f16);
  return e4m3 ? mulf(wide, splatLike(byte, f32(256.0))) : wide;
}

Value KernelBuilder::callFp8Codec(StringRef marker, Type format, Value arg,
                                  Type resultType) {
  bool toF32 = marker == kFp8ToF32Attr;
  std::string name = toF32 ? "__attn_fp8_" : "__attn_f32_to_fp8_";
  name += isa<Float8E4M3FNType>(format) ? "e4m3" : "e5m2";
  if (toF32) {
    name += "_to_f32";
    if (auto vector = dyn_cast<VectorType>(arg.getType()))
      name += "_v" + std::to_string(vector.getNumElements());
  }
  auto call = create<func::CallOp>(name, TypeRange{resultType},
                                   ValueRange{arg});
  call->setAttr(marker, TypeAttr::get(format));
  return call.getResult(0);
}

void mlir::attn::defineFp8Codecs(ModuleOp module,
                                 const LoweringOptions &options) {
  LoweringOptions inlineCodec = options;
  inlineCodec.fp8Calls = false;
  for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
    SmallVector<func::CallOp> calls;
    kernels.walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls) {
      for (StringRef marker : {kFp8ToF32Attr, kF32ToFp8Attr}) {
        auto format = call->getAttrOfType<TypeAttr>(marker);
        if (!format)
          continue;
        call->removeAttr(marker);
        if (kernels.lookupSymbol(call.getCalleeAttr()))
          continue;
        OpBuilder atTop = OpBuilder::atBlockBegin(kernels.getBody());
        auto fn = func::FuncOp::create(atTop, call.getLoc(), call.getCallee(),
                                       call.getCalleeType());
        fn.setPrivate();
        fn->setAttr(marker, format);
        Block *entry = fn.addEntryBlock();
        OpBuilder inBody = OpBuilder::atBlockEnd(entry);
        KernelBuilder body(call.getLoc(), inBody, inlineCodec);
        Value in = entry->getArgument(0);
        body.create<func::ReturnOp>(
            marker == kFp8ToF32Attr ? body.fp8ToF32(in, format.getValue())
                                    : body.f32ToFp8(in, format.getValue()));
      }
    }
  }
}

Value KernelBuilder::fp8ToF32(Value byte, Type format) {
  if (options.fp8Calls)
    return callFp8Codec(kFp8ToF32Attr, format, byte,
                        shapedLike(byte, getF32Type()));
  if (options.fp8ViaF16)
    return fp8ViaF16ToF32(byte, format);
  Fp8Fields f = fp8Fields(format);
  // Element-wise: a vector of bytes gives a vector of f32.
  Type i32 = shapedLike(byte, getI32Type());
  Type f32Type = shapedLike(byte, getF32Type());
  auto c = [&](int64_t v) {
    return splatLike(byte, create<arith::ConstantIntOp>(getI32Type(), v));
  };
  Value b = create<arith::ExtUIOp>(i32, byte);
  Value sign = create<arith::ShLIOp>(create<arith::AndIOp>(b, c(0x80)), c(24));
  Value mag = create<arith::AndIOp>(b, c(0x7F));
  // A normal value moves into f32's fields: the mantissa up, the exponent
  // rebiased.
  Value normalBits = addi(create<arith::ShLIOp>(mag, c(23 - f.m)),
                            c((127 - f.bias) << 23));
  Value normal = create<arith::BitcastOp>(f32Type, normalBits);
  // A subnormal is its mantissa times 2^(1 - bias - m), exactly in f32.
  Value exponent = create<arith::ShRUIOp>(mag, c(f.m));
  Value mantissa = create<arith::AndIOp>(mag, c((1 << f.m) - 1));
  Value sub =
      mulf(create<arith::UIToFPOp>(f32Type, mantissa),
           splatLike(byte,
                     f32(std::ldexp(1.0, static_cast<int>(1 - f.bias - f.m)))));
  Value isSub = cmpi(arith::CmpIPredicate::eq, exponent, c(0));
  Value magnitude =
      create<arith::BitcastOp>(i32, select(isSub, sub, normal));
  // e4m3 has one NaN per sign and no infinity; e5m2's top exponent is
  // infinity (mantissa 0) or NaN, as in IEEE formats.
  Value special, specialBits;
  if (f.e4m3) {
    special = cmpi(arith::CmpIPredicate::eq, mag, c(f.nan));
    specialBits = c(0x7FC00000);
  } else {
    special = cmpi(arith::CmpIPredicate::eq, exponent, c((1 << 5) - 1));
    specialBits = create<arith::OrIOp>(
        c(0x7F800000), create<arith::ShLIOp>(mantissa, c(21)));
  }
  magnitude = select(special, specialBits, magnitude);
  return create<arith::BitcastOp>(f32Type,
                                  create<arith::OrIOp>(magnitude, sign));
}

Type KernelBuilder::shapedLike(Value like, Type element) {
  if (auto vector = dyn_cast<VectorType>(like.getType()))
    return vector.clone(element);
  return element;
}

Value KernelBuilder::splatLike(Value like, Value scalar) {
  Type type = shapedLike(like, scalar.getType());
  if (type == scalar.getType())
    return scalar;
  return create<vector::BroadcastOp>(type, scalar);
}

Value KernelBuilder::quantizeFp8(Value x, Value scale, Type format) {
  // vLLM's write (quant_utils.cuh): the f32 quotient, an IEEE division
  // (no reciprocal), then rounded to fp8; its ties are ties.
  return f32ToFp8(divf(x, scale), format);
}

Value KernelBuilder::f32ToFp8(Value q, Type format) {
  if (options.fp8Calls)
    return callFp8Codec(kF32ToFp8Attr, format, q, getI8Type());
  Fp8Fields f = fp8Fields(format);
  Type i32 = getI32Type();
  auto c = [&](int64_t v) { return create<arith::ConstantIntOp>(i32, v); };
  auto lt = [&](Value a, Value b) {
    return cmpi(arith::CmpIPredicate::ult, a, b);
  };
  Value bits = create<arith::BitcastOp>(i32, q);
  Value sign = create<arith::AndIOp>(create<arith::ShRUIOp>(bits, c(24)),
                                     c(0x80));
  Value a = create<arith::AndIOp>(bits, c(0x7FFFFFFF));
  Value e32 = create<arith::ShRUIOp>(a, c(23));
  Value significand = create<arith::OrIOp>(
      create<arith::AndIOp>(a, c(0x7FFFFF)), c(0x800000));
  // f32's biased exponent of the format's smallest normal; below it the
  // quantum stays that of the subnormals, so more bits drop.
  int64_t minNormal = 127 + 1 - f.bias;
  Value below = create<arith::MaxSIOp>(subi(c(minNormal), e32), c(0));
  Value shift = create<arith::MinUIOp>(addi(below, c(23 - f.m)), c(31));
  Value kept = create<arith::ShRUIOp>(significand, shift);
  Value half = create<arith::ShLIOp>(c(1), subi(shift, c(1)));
  Value rest = create<arith::AndIOp>(
      significand, subi(create<arith::ShLIOp>(half, c(1)), c(1)));
  Value odd =
      cmpi(arith::CmpIPredicate::ne, create<arith::AndIOp>(kept, c(1)), c(0));
  Value isTie = cmpi(arith::CmpIPredicate::eq, rest, half);
  Value up = select(isTie, odd, lt(half, rest));
  kept = addi(kept, create<arith::ExtUIOp>(i32, up));
  // The exponent field over the smallest normal's, plus the kept bits with
  // their leading one: a carry out of the mantissa ripples into the
  // exponent, and a subnormal's leading one is not there.
  Value over = create<arith::MaxSIOp>(subi(e32, c(minNormal)), c(0));
  Value magnitude =
      addi(create<arith::ShLIOp>(over, c(f.m)), kept);
  magnitude = create<arith::MinUIOp>(magnitude, c(f.maxFinite));
  Value isNan = create<arith::CmpFOp>(arith::CmpFPredicate::UNO, q, q);
  magnitude = select(isNan, c(f.nan), magnitude);
  return create<arith::TruncIOp>(getI8Type(),
                                 create<arith::OrIOp>(magnitude, sign));
}

void KernelBuilder::storeF32(Value value, Value buffer, Value i) {
  Type t = cast<MemRefType>(buffer.getType()).getElementType();
  Value v = value;
  if (t.isInteger(16)) {
    // f32 to bf16 bits, rounding to nearest even on the dropped half:
    // add 0x7fff plus the lowest kept bit, then keep the high half. NaN
    // keeps a quiet NaN (rounding could carry it into infinity).
    Type i32 = getI32Type();
    auto c = [&](int64_t n) {
      return splatLike(value, create<arith::ConstantIntOp>(i32, n));
    };
    Value bits = create<arith::BitcastOp>(shapedLike(value, i32), value);
    Value lsb =
        create<arith::AndIOp>(create<arith::ShRUIOp>(bits, c(16)), c(1));
    Value bias = create<arith::AddIOp>(lsb, c(0x7fff));
    Value rounded =
        create<arith::ShRUIOp>(create<arith::AddIOp>(bits, bias), c(16));
    Value isNan =
        create<arith::CmpFOp>(arith::CmpFPredicate::UNO, value, value);
    rounded = select(isNan, c(0x7fc0), rounded);
    v = create<arith::TruncIOp>(shapedLike(value, t), rounded);
  } else if (t != getElementTypeOrSelf(value.getType())) {
    v = create<arith::TruncFOp>(shapedLike(value, t), value);
  }
  if (isa<VectorType>(v.getType()))
    create<vector::StoreOp>(v, buffer, i);
  else
    create<memref::StoreOp>(v, buffer, i);
}

void KernelBuilder::prefetchLines(Value buffer, Value start, int64_t count) {
  int64_t bits = cast<MemRefType>(buffer.getType()).getElementTypeBitWidth();
  int64_t perLine = std::max<int64_t>(1, kCacheLineBytes * 8 / bits);
  for (int64_t first = 0; first < count; first += perLine)
    create<memref::PrefetchOp>(buffer, ValueRange{addi(start, idx(first))},
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
}

Value KernelBuilder::laneElement(Value laneBase, const LaneLayout &layout,
                                 int64_t i, int64_t last, Value &inRow) {
  Value e = addi(laneBase, idx(layout.offset(i)));
  if (!layout.needsMask(i))
    return e;
  // Read a valid element of the row and drop it: no out-of-row access.
  inRow = cmpi(arith::CmpIPredicate::ult, e, idx(layout.dim));
  return create<arith::MinUIOp>(e, idx(last));
}

Value KernelBuilder::scaleInRow(Value v, Value scale, Value inRow) {
  if (scale)
    v = mulf(v, scale);
  return inRow ? select(inRow, v, f32(0.0)) : v;
}

SmallVector<Value> KernelBuilder::loadLaneRow(Value buffer, Value rowBase,
                                              Value laneBase,
                                              const LaneLayout &layout,
                                              Value scale, Type fp8Format) {
  // A layout chosen for the query's elements may give an fp8 cache chunks
  // narrower than a 32-bit word (two bytes for a bf16 query of head size
  // 112 over 8 lanes): SPIR-V's word loads (GPUToSPIRV/) cannot express
  // those, so they load element by element.
  int64_t bits = cast<MemRefType>(buffer.getType())
                     .getElementType()
                     .getIntOrFloatBitWidth();
  if (layout.vectorLoads && layout.vectorWidth > 1 &&
      layout.vectorWidth * bits >= 32)
    return loadLaneRowVectors(buffer, rowBase, laneBase, layout, scale,
                              fp8Format);
  SmallVector<Value> values;
  for (int64_t i = 0; i < layout.perLane(); ++i) {
    Value inRow;
    Value e = laneElement(laneBase, layout, i, layout.dim - 1, inRow);
    Value v = loadF32(buffer, addi(rowBase, e), fp8Format);
    values.push_back(scaleInRow(v, scale, inRow));
  }
  return values;
}

SmallVector<Value> KernelBuilder::loadLaneRowVectors(
    Value buffer, Value rowBase, Value laneBase, const LaneLayout &layout,
    Value scale, Type fp8Format) {
  int64_t w = layout.vectorWidth;
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  int64_t bits = element.getIntOrFloatBitWidth();
  assert((bits == 8 || bits == 16 || bits == 32) && layout.dim % w == 0 &&
         "vector loads need 8-, 16- or 32-bit elements and whole chunks");
  // A chunk wider than the target's widest load (the query's chunks beside
  // an fp8 cache's: the same elements, twice the bytes) takes several.
  int64_t widest = std::max<int64_t>(options.vectorLoadBytes, 4) * 8 / bits;
  int64_t n = std::min(w, widest);
  auto vectorType = VectorType::get({n}, element);
  // The row starts at a multiple of dim elements and the chunk at a
  // multiple of w, so with w | dim (and n | w) each load is aligned to its
  // own size.
  llvm::MaybeAlign align(n * bits / 8);
  SmallVector<Value> values;
  for (int64_t c = 0; c < layout.perLane() / w; ++c) {
    // Chunks past the row read the row's last chunk and drop it.
    Value inRow;
    Value e = laneElement(laneBase, layout, c * w, layout.dim - w, inRow);
    for (int64_t part = 0; part < w; part += n) {
      Value at = addi(rowBase, part ? addi(e, idx(part)) : e);
      Value chunk = vector::LoadOp::create(*this, vectorType, buffer,
                                           ValueRange{at},
                                           /*nontemporal=*/false, align);
      // Element by element: targets without wide vector types (SPIR-V)
      // turn such a load and its extracts into 32-bit words (GPUToSPIRV/).
      for (int64_t i = 0; i < n; ++i) {
        Value v = toF32(create<vector::ExtractOp>(chunk, i), fp8Format);
        values.push_back(scaleInRow(v, scale, inRow));
      }
    }
  }
  return values;
}

Value KernelBuilder::loadWords(Value buffer, Value i, int64_t bytes) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  int64_t bits = element.getIntOrFloatBitWidth();
  int64_t n = bytes * 8 / bits;
  Type words = getWordsType(getContext(), bytes);
  if (n == 1 && bits == 32) {
    Value v = create<memref::LoadOp>(buffer, i);
    return v.getType() == words ? v : create<arith::BitcastOp>(words, v);
  }
  Value chunk = vector::LoadOp::create(
      *this, VectorType::get({n}, element), buffer, ValueRange{i},
      /*nontemporal=*/false, llvm::MaybeAlign(bytes));
  if (isa<VectorType>(words))
    return create<vector::BitCastOp>(words, chunk);
  return create<vector::ExtractOp>(
      create<vector::BitCastOp>(VectorType::get({1}, getI32Type()), chunk),
      0);
}

SmallVector<Value> KernelBuilder::unpackWords(Value words, Type element) {
  SmallVector<Value> w;
  Type i32 = getI32Type();
  auto addWord = [&](Value word) {
    if (word.getType().isInteger(32)) {
      w.push_back(word);
      return;
    }
    // A 64-bit word: its low half first.
    Value c32 = create<arith::ConstantIntOp>(getI64Type(), 32);
    w.push_back(create<arith::TruncIOp>(i32, word));
    w.push_back(create<arith::TruncIOp>(i32, create<arith::ShRUIOp>(word, c32)));
  };
  if (auto vt = dyn_cast<VectorType>(words.getType())) {
    for (int64_t i = 0; i < vt.getNumElements(); ++i)
      addWord(create<vector::ExtractOp>(words, i));
  } else {
    addWord(words);
  }
  SmallVector<Value> values;
  int64_t bits = element.getIntOrFloatBitWidth();
  for (Value word : w) {
    if (Type format = getFp8Format(element)) {
      // Four fp8 bytes, the lowest address in the lowest byte.
      for (int64_t k = 0; k < 4; ++k) {
        Value byte = k ? create<arith::ShRUIOp>(
                             word, create<arith::ConstantIntOp>(i32, 8 * k))
                       : word;
        values.push_back(
            fp8ToF32(create<arith::TruncIOp>(getI8Type(), byte), format));
      }
      continue;
    }
    if (bits == 32) {
      values.push_back(create<arith::BitcastOp>(getF32Type(), word));
      continue;
    }
    // Two 16-bit elements, the lower address in the low half.
    Value c16 = create<arith::ConstantIntOp>(i32, 16);
    Value hi = create<arith::ShRUIOp>(word, c16);
    for (Value half : {word, hi}) {
      if (element.isF16()) {
        Value h = create<arith::TruncIOp>(getI16Type(), half);
        Value half16 = create<arith::BitcastOp>(getF16Type(), h);
        values.push_back(create<arith::ExtFOp>(getF32Type(), half16));
        continue;
      }
      // bf16 (or bf16 as i16 words): its bits are the high half of an f32.
      Value bitsF32 = create<arith::ShLIOp>(half, c16);
      values.push_back(create<arith::BitcastOp>(getF32Type(), bitsF32));
    }
  }
  return values;
}

void KernelBuilder::storeLaneRow(ArrayRef<Value> values, Value buffer,
                                 Value rowBase, Value laneBase,
                                 const LaneLayout &layout) {
  for (int64_t i = 0; i < layout.perLane(); ++i) {
    Value e = addi(laneBase, idx(layout.offset(i)));
    if (!layout.needsMask(i)) {
      storeF32(values[i], buffer, addi(rowBase, e));
      continue;
    }
    Value inRow = cmpi(arith::CmpIPredicate::ult, e, idx(layout.dim));
    auto ifOp = create<scf::IfOp>(inRow, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(*this);
    setInsertionPointToStart(ifOp.thenBlock());
    storeF32(values[i], buffer, addi(rowBase, e));
  }
}

SmallVector<Value> KernelBuilder::partialDots(ArrayRef<SmallVector<Value>> rows,
                                              ArrayRef<Value> key) {
  SmallVector<Value> dots(rows.size(), f32(0.0));
  for (auto [i, k] : llvm::enumerate(key))
    for (auto [dot, row] : llvm::zip_equal(dots, rows))
      dot = fma(row[i], k, dot);
  return dots;
}

Value KernelBuilder::subgroupSum(Value v) {
  return create<gpu::SubgroupReduceOp>(v, gpu::AllReduceOperation::ADD,
                                       /*uniform=*/false);
}

Value KernelBuilder::shuffleXor(Value v, int64_t mask) {
  Value m = create<arith::ConstantIntOp>(getI32Type(), mask);
  Value width =
      create<arith::ConstantIntOp>(getI32Type(), options.subgroupSize);
  return create<gpu::ShuffleOp>(v, m, width, gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

Value KernelBuilder::clusterSum(Value v, int64_t lanes) {
  assert(lanes > 0 && (lanes & (lanes - 1)) == 0 &&
         options.subgroupSize % lanes == 0 && "lanes: a power of two");
  if (lanes == options.subgroupSize)
    return subgroupSum(v);
  for (int64_t mask = lanes / 2; mask > 0; mask /= 2)
    v = addf(v, shuffleXor(v, mask));
  return v;
}

Value mlir::attn::addWorkgroupBuffer(gpu::GPUFuncOp kernel,
                                     int64_t numElements, Type element) {
  MLIRContext *ctx = kernel.getContext();
  auto space =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get({numElements},
                              element ? element : Float32Type::get(ctx),
                              MemRefLayoutAttrInterface(), space);
  return kernel.addWorkgroupAttribution(type, kernel.getLoc());
}

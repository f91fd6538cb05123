//===- BufferAddresses.cpp - Kernel buffers by 64-bit device address ------===//
//
// A storage-buffer binding shows at most maxStorageBufferRange bytes (128 MiB
// on lavapipe and many GPUs), which a KV cache passes easily. A buffer
// reached through its device address (PhysicalStorageBuffer64) has no such
// limit. This pass turns the descriptor bindings that spirv-lower-abi-attrs
// made of a kernel's arguments into addresses read from one push-constant
// block: argument i is the u64 at offset 8 i.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSPIRVBUFFERADDRESSES
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

constexpr spirv::StorageClass kPhysical =
    spirv::StorageClass::PhysicalStorageBuffer;

/// The alignment of a load or store of `type` through a buffer address: its
/// scalar size, which every element offset of a buffer is a multiple of.
uint32_t alignmentOf(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    type = vector.getElementType();
  return std::max<uint32_t>(type.getIntOrFloatBitWidth() / 8, 1);
}

/// Rewrites the users of `old` (a StorageBuffer pointer) onto `physical`
/// (the same pointee in PhysicalStorageBuffer): access chains are rebuilt on
/// it, loads and stores get the Aligned access that Vulkan requires of
/// physical pointers. Erases what it replaced.
LogicalResult rewriteUses(Value old, Value physical) {
  for (Operation *user : llvm::make_early_inc_range(old.getUsers())) {
    OpBuilder b(user);
    if (auto chain = dyn_cast<spirv::AccessChainOp>(user)) {
      if (chain.getBasePtr() != old)
        return chain.emitOpError("uses a kernel buffer as an index");
      auto type = cast<spirv::PointerType>(chain.getType());
      Value rebuilt = spirv::AccessChainOp::create(
          b, chain.getLoc(),
          spirv::PointerType::get(type.getPointeeType(), kPhysical), physical,
          chain.getIndices());
      if (failed(rewriteUses(chain, rebuilt)))
        return failure();
      chain.erase();
      continue;
    }
    auto aligned = spirv::MemoryAccessAttr::get(b.getContext(),
                                                spirv::MemoryAccess::Aligned);
    if (auto load = dyn_cast<spirv::LoadOp>(user)) {
      Value value = spirv::LoadOp::create(
          b, load.getLoc(), load.getType(), physical, aligned,
          b.getI32IntegerAttr(alignmentOf(load.getType())));
      load.replaceAllUsesWith(value);
      load.erase();
      continue;
    }
    if (auto store = dyn_cast<spirv::StoreOp>(user)) {
      if (store.getPtr() != old)
        return store.emitOpError("stores a kernel buffer's address");
      spirv::StoreOp::create(
          b, store.getLoc(), physical, store.getValue(), aligned,
          b.getI32IntegerAttr(alignmentOf(store.getValue().getType())));
      store.erase();
      continue;
    }
    return user->emitOpError(
        "uses a kernel buffer in a way attn-spirv-buffer-addresses cannot "
        "pass by address");
  }
  return success();
}

struct BufferAddressesPass
    : public attn::impl::AttnSPIRVBufferAddressesBase<BufferAddressesPass> {
  void runOnOperation() override {
    spirv::ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();

    // The arguments, by binding: spirv-lower-abi-attrs binds argument i at
    // set 0, binding i. attn-spirv-vector-loads views some of them a second
    // time with another element type, at the same binding: those views
    // share the argument's address.
    SmallVector<SmallVector<spirv::GlobalVariableOp, 1>> args;
    for (auto var : module.getOps<spirv::GlobalVariableOp>()) {
      auto type = cast<spirv::PointerType>(var.getType());
      if (type.getStorageClass() != spirv::StorageClass::StorageBuffer)
        continue;
      std::optional<uint32_t> set = var.getDescriptorSet();
      std::optional<uint32_t> binding = var.getBinding();
      if (!set || !binding || *set != 0) {
        var.emitOpError("expects kernel buffers at descriptor set 0");
        return signalPassFailure();
      }
      if (args.size() <= *binding)
        args.resize(*binding + 1);
      args[*binding].push_back(var);
    }
    for (auto [i, views] : llvm::enumerate(args))
      if (views.empty()) {
        module.emitOpError("has no kernel buffer at binding ") << i;
        return signalPassFailure();
      }

    // 128 bytes of push constants is all Vulkan guarantees.
    constexpr size_t kMaxBuffers = 128 / 8;
    if (args.size() > kMaxBuffers) {
      module.emitOpError("has ")
          << args.size() << " kernel buffers; at most " << kMaxBuffers
          << " addresses fit in Vulkan's guaranteed 128 push-constant bytes";
      return signalPassFailure();
    }
    module.setAddressingModel(spirv::AddressingModel::PhysicalStorageBuffer64);
    if (args.empty())
      return;

    Type i64 = IntegerType::get(ctx, 64);
    Type i32 = IntegerType::get(ctx, 32);
    SmallVector<Type> members(args.size(), i64);
    SmallVector<spirv::StructType::OffsetInfo> offsets;
    for (size_t i = 0; i < args.size(); ++i)
      offsets.push_back(8 * i);
    auto blockType = spirv::PointerType::get(
        spirv::StructType::get(members, offsets),
        spirv::StorageClass::PushConstant);
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto block = spirv::GlobalVariableOp::create(b, module.getLoc(), blockType,
                                                 "__buffer_addresses__");

    for (auto [i, views] : llvm::enumerate(args)) {
      for (spirv::GlobalVariableOp var : views) {
        auto type = cast<spirv::PointerType>(var.getType());
        Type physicalType =
            spirv::PointerType::get(type.getPointeeType(), kPhysical);
        SmallVector<spirv::AddressOfOp> uses;
        module.walk([&](spirv::AddressOfOp addr) {
          if (addr.getVariable() == var.getSymName())
            uses.push_back(addr);
        });
        for (spirv::AddressOfOp addr : uses) {
          OpBuilder ub(addr);
          Location loc = addr.getLoc();
          Value base = spirv::AddressOfOp::create(ub, loc, block);
          Value index = spirv::ConstantOp::create(
              ub, loc, i32, ub.getI32IntegerAttr(static_cast<int32_t>(i)));
          Value slot = spirv::AccessChainOp::create(
              ub, loc,
              spirv::PointerType::get(i64, spirv::StorageClass::PushConstant),
              base, ValueRange{index});
          Value address = spirv::LoadOp::create(ub, loc, slot);
          Value physical =
              spirv::ConvertUToPtrOp::create(ub, loc, physicalType, address);
          if (failed(rewriteUses(addr, physical)))
            return signalPassFailure();
          addr.erase();
        }
        var.erase();
      }
    }

    // From SPIR-V 1.4 an entry point lists every global it uses.
    for (auto entry : module.getOps<spirv::EntryPointOp>()) {
      SmallVector<Attribute> interface;
      bool named = false;
      for (Attribute symbol : entry.getInterface()) {
        StringRef name = cast<FlatSymbolRefAttr>(symbol).getValue();
        if (!module.lookupSymbol(name)) {
          named = true;
          continue;
        }
        interface.push_back(symbol);
      }
      if (named)
        interface.push_back(FlatSymbolRefAttr::get(block.getSymNameAttr()));
      entry.setInterfaceAttr(b.getArrayAttr(interface));
    }
  }
};

} // namespace

//===- DLPackTest.cpp - Device tensors to and from DLPack -----------------===//
//
// A "framework" here is host memory and a DLManagedTensor with a counting
// deleter: its tensors go through the CPU executor without a copy, attn's
// tensors come back out, and ownership ends exactly once.
//
//===----------------------------------------------------------------------===//

#include "runtime/device/dlpack/DLPack.h"
#include "runtime/executor/CpuExecutor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace attn::runtime {
namespace {

/// A framework's f32 tensor: its elements, shape and DLManagedTensor.
struct ForeignTensor {
  std::vector<float> data;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
  int deletions = 0;

  explicit ForeignTensor(std::vector<int64_t> dims) : shape(std::move(dims)) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    data.assign(n, 0.0f);
    DLTensor &t = managed.dl_tensor;
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor *self) {
      ++static_cast<ForeignTensor *>(self->manager_ctx)->deletions;
    };
  }
};

/// A host-memory device that says its memory is some other space.
class OtherSpaceDevice final : public HostMemoryDevice {
public:
  OtherSpaceDevice(MemorySpace space, int ordinal)
      : space_(space), ordinal_(ordinal) {}
  std::string_view name() const override { return "other"; }
  MemorySpace memorySpace() const override { return space_; }
  int ordinal() const override { return ordinal_; }
  Status loadKernelCode(const Bundle &, const BundleKernel &,
                    std::string_view) override {
    return Status::ok();
  }

protected:
  Status enqueueLaunch(std::string_view, const std::array<uint32_t, 3> &,
                       const std::array<int64_t, 3> &,
                       std::span<const BufferView>) override {
    return Status::ok();
  }

private:
  MemorySpace space_;
  int ordinal_;
};

TEST(DLPack, ForeignMemoryIsUsedInPlaceAndReleasedOnce) {
  CpuExecutor executor;
  // NHD cache [num_blocks, 2, B, G, D] with 2 blocks of 4 slots, G 1, D 2.
  ForeignTensor key({2, 1, 2}), value({2, 1, 2}), cache({2, 2, 4, 1, 2});
  key.data = {1, 2, 3, 4};
  value.data = {5, 6, 7, 8};
  {
    Result<DeviceTensor> k = fromDLPack(executor.device(), &key.managed);
    Result<DeviceTensor> v = fromDLPack(executor.device(), &value.managed);
    Result<DeviceTensor> c = fromDLPack(executor.device(), &cache.managed);
    ASSERT_TRUE(k && v && c);
    EXPECT_EQ(executor.device().address(*c->buffer), cache.data.data());
    Tensor slots(DType::I64, {2});
    slots.setInt(0, 5); // block 1, offset 1
    slots.setInt(1, -1);
    ASSERT_TRUE(executor.reshapeAndCache(*k, *v, slots, KvCacheLayout::NHD, *c, {}));
    EXPECT_EQ(cache.deletions, 0);
  }
  // The framework's memory holds the write; every deleter ran once.
  const int64_t keyAt = ((1 * 2 + 0) * 4 + 1) * 2;
  const int64_t valueAt = ((1 * 2 + 1) * 4 + 1) * 2;
  EXPECT_EQ(cache.data[keyAt], 1);
  EXPECT_EQ(cache.data[keyAt + 1], 2);
  EXPECT_EQ(cache.data[valueAt], 5);
  EXPECT_EQ(cache.data[valueAt + 1], 6);
  EXPECT_EQ(key.deletions + value.deletions + cache.deletions, 3);
}

TEST(DLPack, RoundTripSharesTheMemory) {
  CpuDevice device;
  Result<DeviceTensor> t = allocateTensor(device, DType::BF16, {3, 5});
  ASSERT_TRUE(t);
  std::weak_ptr<DeviceBuffer> buffer = t->buffer;
  Result<DLManagedTensor *> exported = toDLPack(*t);
  ASSERT_TRUE(exported);
  const DLTensor &dl = (*exported)->dl_tensor;
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.dtype.code, kDLBfloat);
  EXPECT_EQ(dl.dtype.bits, 16);
  ASSERT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.shape[0], 3);
  EXPECT_EQ(dl.shape[1], 5);
  EXPECT_EQ(dl.data, device.address(*t->buffer));

  Result<DeviceTensor> back = fromDLPack(device, *exported);
  ASSERT_TRUE(back);
  EXPECT_EQ(device.address(*back->buffer), device.address(*t->buffer));
  EXPECT_EQ(back->dtype, DType::BF16);
  EXPECT_EQ(back->shape, t->shape);
  // The memory lives while either side holds it.
  t = Result<DeviceTensor>(DeviceTensor{});
  EXPECT_FALSE(buffer.expired());
  back = Result<DeviceTensor>(DeviceTensor{});
  EXPECT_TRUE(buffer.expired());
}

TEST(DLPack, ByteOffsetAndUnitStridesAreKept) {
  CpuDevice device;
  ForeignTensor f({1, 4});
  f.data = {1, 2, 3, 4};
  f.shape = {1, 2};
  f.strides = {99, 1}; // a dimension of one element may have any stride
  f.managed.dl_tensor.strides = f.strides.data();
  f.managed.dl_tensor.byte_offset = 2 * sizeof(float);
  Result<DeviceTensor> t = fromDLPack(device, &f.managed);
  ASSERT_TRUE(t);
  Result<Tensor> host = hostView(*t);
  ASSERT_TRUE(host);
  EXPECT_EQ(host->getFloat(0), 3);
  EXPECT_EQ(host->getFloat(1), 4);
}

/// fromDLPack's error for `f` on `device`; the tensor stays the caller's.
std::string rejection(PlanDevice &device, ForeignTensor &f) {
  Result<DeviceTensor> t = fromDLPack(device, &f.managed);
  EXPECT_FALSE(t);
  EXPECT_EQ(f.deletions, 0);
  return t ? "" : t.message();
}

TEST(DLPack, RejectsWhatAttnCannotRead) {
  CpuDevice cpu;
  {
    ForeignTensor f({2, 3});
    f.strides = {1, 2}; // column-major
    f.managed.dl_tensor.strides = f.strides.data();
    EXPECT_NE(rejection(cpu, f).find("row-major"), std::string::npos);
  }
  {
    ForeignTensor f({4});
    f.managed.dl_tensor.dtype = {kDLFloat, 64, 1};
    EXPECT_NE(rejection(cpu, f).find("not an attn dtype"), std::string::npos);
  }
  {
    ForeignTensor f({4});
    f.managed.dl_tensor.dtype = {kDLFloat, 32, 4};
    EXPECT_NE(rejection(cpu, f).find("lanes"), std::string::npos);
  }
  {
    ForeignTensor f({4});
    f.shape[0] = -1;
    EXPECT_NE(rejection(cpu, f).find("DLPack"), std::string::npos);
  }
  {
    ForeignTensor f({4});
    f.managed.dl_tensor.device = {kDLCUDA, 0};
    EXPECT_NE(rejection(cpu, f).find("is not in host memory"),
              std::string::npos);
  }
  {
    OtherSpaceDevice cuda(MemorySpace::Cuda, 1);
    ForeignTensor f({4});
    f.managed.dl_tensor.device = {kDLCUDA, 0};
    EXPECT_NE(rejection(cuda, f).find("CUDA device 0"), std::string::npos);
  }
  {
    OtherSpaceDevice opaque(MemorySpace::Opaque, 0);
    ForeignTensor f({4});
    EXPECT_NE(rejection(opaque, f).find("through the host"),
              std::string::npos);
  }
  EXPECT_FALSE(fromDLPack(cpu, nullptr));
}

TEST(DLPack, OpaqueDevicesDoNotExport) {
  OtherSpaceDevice opaque(MemorySpace::Opaque, 0);
  Result<DeviceTensor> t = allocateTensor(opaque, DType::F32, {4});
  ASSERT_TRUE(t);
  Result<DLManagedTensor *> exported = toDLPack(*t);
  ASSERT_FALSE(exported);
  EXPECT_NE(exported.message().find("through the host"),
            std::string::npos);
  EXPECT_FALSE(toDLPack(DeviceTensor{}));
}

TEST(DLPack, CudaTensorsCarryTheOrdinal) {
  // A host-memory stand-in for a CUDA device: the exchange only looks at
  // the memory space and the ordinal.
  OtherSpaceDevice cuda(MemorySpace::Cuda, 2);
  Result<DeviceTensor> t = allocateTensor(cuda, DType::F16, {8});
  ASSERT_TRUE(t);
  Result<DLManagedTensor *> exported = toDLPack(*t);
  ASSERT_TRUE(exported);
  EXPECT_EQ((*exported)->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ((*exported)->dl_tensor.device.device_id, 2);
  Result<DeviceTensor> back = fromDLPack(cuda, *exported);
  ASSERT_TRUE(back);
}

} // namespace
} // namespace attn::runtime

//===- DLPack.cpp - Device tensors to and from DLPack ---------------------===//

#include "runtime/device/dlpack/DLPack.h"

#include <limits>
#include <new>

namespace attn::runtime {

namespace {

Result<DType> fromDLDataType(DLDataType t) {
  if (t.lanes != 1)
    return errorf("DLPack: vector dtypes (", t.lanes,
                  " lanes) are not attn tensors");
  if (t.code == kDLFloat && t.bits == 32)
    return DType::F32;
  if (t.code == kDLFloat && t.bits == 16)
    return DType::F16;
  if (t.code == kDLBfloat && t.bits == 16)
    return DType::BF16;
  if (t.code == kDLInt && t.bits == 32)
    return DType::I32;
  if (t.code == kDLInt && t.bits == 64)
    return DType::I64;
  return errorf("DLPack: dtype code ", static_cast<int>(t.code), " with ",
                static_cast<int>(t.bits),
                " bits is not an attn dtype (f32, f16, bf16, i32, i64)");
}

DLDataType toDLDataType(DType t) {
  switch (t) {
  case DType::F32:
    return {kDLFloat, 32, 1};
  case DType::F16:
    return {kDLFloat, 16, 1};
  case DType::BF16:
    return {kDLBfloat, 16, 1};
  case DType::I32:
    return {kDLInt, 32, 1};
  case DType::I64:
    return {kDLInt, 64, 1};
  // The DLPack header here predates its fp8 codes: an fp8 cache is handed
  // out as its bytes, as PyTorch's fp8 tensors are viewed as uint8.
  case DType::F8E4M3FN:
  case DType::F8E5M2:
    return {kDLUInt, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

const char *spaceName(MemorySpace space) {
  switch (space) {
  case MemorySpace::Host:
    return "host memory";
  case MemorySpace::Cuda:
    return "CUDA memory";
  case MemorySpace::Opaque:
    return "memory without framework-visible addresses";
  }
  return "?";
}

/// Whether memory of `dl` is memory `device` addresses.
Status checkDevice(const PlanDevice &device, DLDevice dl) {
  switch (device.memorySpace()) {
  case MemorySpace::Host:
    if (dl.device_type == kDLCPU || dl.device_type == kDLCUDAHost)
      return Status::ok();
    break;
  case MemorySpace::Cuda:
    if (dl.device_type == kDLCUDA && dl.device_id == device.ordinal())
      return Status::ok();
    if (dl.device_type == kDLCUDA)
      return errorf("DLPack: the tensor is on CUDA device ", dl.device_id,
                    ", ", device.name(), " is CUDA device ", device.ordinal());
    break;
  case MemorySpace::Opaque:
    return errorf("DLPack: ", device.name(),
                  " has no memory other frameworks address; exchange tensors "
                  "with it through the host (toHost, toDevice)");
  }
  return errorf("DLPack: a tensor of DLPack device type ",
                static_cast<int>(dl.device_type), " is not in ",
                spaceName(device.memorySpace()), " of ", device.name());
}

/// Null or row-major strides, ignoring dimensions of one element.
bool rowMajor(const DLTensor &t) {
  if (!t.strides)
    return true;
  int64_t expected = 1;
  for (int i = t.ndim; i-- > 0;) {
    if (t.shape[i] != 1 && t.strides[i] != expected)
      return false;
    expected *= t.shape[i];
  }
  return true;
}

/// What a DLManagedTensor made by toDLPack owns.
struct Export {
  DLManagedTensor managed{};
  DeviceTensor tensor;
  std::vector<int64_t> shape;
};

void deleteExport(DLManagedTensor *self) {
  delete static_cast<Export *>(self->manager_ctx);
}

} // namespace

Result<DeviceTensor> fromDLPack(PlanDevice &device, DLManagedTensor *managed) {
  if (!managed)
    return errorf("DLPack: a null DLManagedTensor");
  const DLTensor &t = managed->dl_tensor;
  if (Status s = checkDevice(device, t.device); !s)
    return s;
  Result<DType> dtype = fromDLDataType(t.dtype);
  if (!dtype)
    return dtype.status();
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    return errorf("DLPack: a tensor of ", t.ndim, " dimensions without a "
                  "shape");
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  Result<uint64_t> bytes = tensorBytes(*dtype, shape);
  if (!bytes)
    return errorf("DLPack: ", bytes.message());
  if (!rowMajor(t))
    return errorf("DLPack: attn kernels read row-major tensors; these "
                  "strides are not (make the tensor contiguous first)");
  if (t.byte_offset > std::numeric_limits<uint64_t>::max() - *bytes)
    return errorf("DLPack: byte offset ", t.byte_offset, " overflows");
  if (!t.data && *bytes)
    return errorf("DLPack: ", *bytes, " bytes of elements at a null address");
  Result<std::shared_ptr<DeviceBuffer>> buffer = device.adopt(
      t.data, t.byte_offset + *bytes, [managed] {
        if (managed->deleter)
          managed->deleter(managed);
      });
  if (!buffer)
    return buffer.status();
  DeviceTensor out;
  out.device = &device;
  out.buffer = std::move(*buffer);
  out.offset = t.byte_offset;
  out.dtype = *dtype;
  out.shape = std::move(shape);
  return out;
}

Result<DLManagedTensor *> toDLPack(const DeviceTensor &tensor) {
  if (!tensor.defined() || !tensor.device)
    return errorf("DLPack: an undefined device tensor");
  PlanDevice &device = *tensor.device;
  DLDevice dl{};
  switch (device.memorySpace()) {
  case MemorySpace::Host:
    dl = {kDLCPU, 0};
    break;
  case MemorySpace::Cuda:
    dl = {kDLCUDA, device.ordinal()};
    break;
  case MemorySpace::Opaque:
    return checkDevice(device, dl);
  }
  if (!tensor.isContiguous())
    return errorf("DLPack: only row-major device tensors are exported");
  if (Status s = device.synchronize(); !s)
    return s;
  auto *e = new (std::nothrow) Export;
  if (!e)
    return errorf("DLPack: out of host memory");
  e->tensor = tensor;
  e->shape = tensor.shape;
  DLTensor &t = e->managed.dl_tensor;
  t.data = device.address(*tensor.buffer);
  t.byte_offset = tensor.offset;
  t.device = dl;
  t.ndim = static_cast<int>(e->shape.size());
  t.dtype = toDLDataType(tensor.dtype);
  t.shape = e->shape.data();
  t.strides = nullptr;
  e->managed.manager_ctx = e;
  e->managed.deleter = deleteExport;
  return &e->managed;
}

} // namespace attn::runtime

//===- MetalPlanDevice.mm - Runs plans on a Metal device ------------------===//
//
// Objective-C++ with ARC. Compiled on macOS only (see CMakeLists.txt): no
// machine of attn's CI has Metal, so this file is kept small and every
// Metal call that can fail is checked.
//
//===----------------------------------------------------------------------===//

#include "devices/metal/MetalPlanDevice.h"
#include "core/Target.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/device/KernelSymbols.h"

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <cstring>
#include <map>

namespace attn::metal {

namespace {

class MetalBuffer : public runtime::DeviceBuffer {
public:
  MetalBuffer(id<MTLBuffer> buffer, uint64_t bytes)
      : buffer(buffer), bytes(bytes) {}
  uint64_t size() const override { return bytes; }

  id<MTLBuffer> buffer;
  uint64_t bytes;
};

struct MetalKernel {
  id<MTLComputePipelineState> pipeline;
  LaunchFacts facts;
};

std::string describe(NSError *error) {
  if (!error)
    return "no reason given";
  return std::string([[error localizedDescription] UTF8String]);
}

} // namespace

struct MetalPlanDevice::Impl {
  id<MTLDevice> device;
  id<MTLCommandQueue> queue;
  /// The launches since the last commit, or nil.
  id<MTLCommandBuffer> commands;
  id<MTLComputeCommandEncoder> encoder;
  std::map<std::string, MetalKernel, std::less<>> kernels;
  runtime::KernelSymbols symbols;
};

MetalPlanDevice::MetalPlanDevice(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)),
      name_(std::string("metal:") + [[impl_->device name] UTF8String]) {}

MetalPlanDevice::~MetalPlanDevice() {
  // Nothing may still run on buffers that are about to be released.
  (void)finishWork();
}

Result<std::unique_ptr<MetalPlanDevice>> MetalPlanDevice::create() {
  auto impl = std::make_unique<Impl>();
  impl->device = MTLCreateSystemDefaultDevice();
  if (!impl->device)
    return Status::error("metal: no Metal device on this machine");
  impl->queue = [impl->device newCommandQueue];
  if (!impl->queue)
    return Status::error("metal: cannot create a command queue");
  return std::unique_ptr<MetalPlanDevice>(new MetalPlanDevice(std::move(impl)));
}

Status MetalPlanDevice::addKernel(const std::string &symbol,
                                  std::string_view source,
                                  const LaunchFacts &facts) {
  ATTN_RETURN_IF_ERROR(keepLaunchBounds(symbol, "msl", facts.bounds));
  std::string factsText = std::to_string(facts.mslMajor) + "." +
                          std::to_string(facts.mslMinor) + ";" +
                          std::to_string(facts.subgroupSize) + ";";
  for (int64_t n : facts.workgroup)
    factsText += std::to_string(n) + ",";
  for (uint32_t n : facts.bufferIndices)
    factsText += ";" + std::to_string(n);
  std::string identity =
      runtime::kernelSource(source, facts.entryPoint, factsText);
  Result<bool> loaded = impl_->symbols.isLoaded(name_, symbol, identity);
  if (!loaded)
    return loaded.status();
  if (*loaded)
    return Status::ok();
  NSString *text = [[NSString alloc] initWithBytes:source.data()
                                            length:source.size()
                                          encoding:NSUTF8StringEncoding];
  if (!text)
    return errorf("kernel ", symbol, ": the MSL source is not UTF-8");
  MTLCompileOptions *options = [MTLCompileOptions new];
  // The kernels rely on IEEE infinities and NaN checks (running max starts
  // at -inf); fast math would let the compiler assume neither exists.
  options.fastMathEnabled = NO;
  // MTLLanguageVersion encodes MAJOR.MINOR as (MAJOR << 16) + MINOR.
  options.languageVersion =
      static_cast<MTLLanguageVersion>((facts.mslMajor << 16) | facts.mslMinor);
  NSError *error = nil;
  id<MTLLibrary> library = [impl_->device newLibraryWithSource:text
                                                       options:options
                                                         error:&error];
  if (!library)
    return errorf("kernel ", symbol, ": Metal rejects its MSL ",
                  facts.mslMajor, ".", facts.mslMinor,
                  " source: ", describe(error));
  id<MTLFunction> function = [library
      newFunctionWithName:[NSString
                              stringWithUTF8String:facts.entryPoint.c_str()]];
  if (!function)
    return errorf("kernel ", symbol, ": the MSL source has no function '",
                  facts.entryPoint, "'");
  id<MTLComputePipelineState> pipeline =
      [impl_->device newComputePipelineStateWithFunction:function error:&error];
  if (!pipeline)
    return errorf("kernel ", symbol, ": cannot build its pipeline: ",
                  describe(error));

  uint64_t threads = uint64_t(facts.workgroup[0]) * facts.workgroup[1] *
                     facts.workgroup[2];
  if (threads > [pipeline maxTotalThreadsPerThreadgroup])
    return errorf("kernel ", symbol, " needs ", threads,
                  " threads per threadgroup but ", name_, " allows ",
                  uint64_t([pipeline maxTotalThreadsPerThreadgroup]));
  if (facts.subgroupSize != 0 &&
      facts.subgroupSize != [pipeline threadExecutionWidth])
    return errorf("kernel ", symbol, " was compiled for subgroup size ",
                  facts.subgroupSize, " but ", name_, " runs SIMD-groups of ",
                  uint64_t([pipeline threadExecutionWidth]),
                  ": recompile with attn-compile --subgroup-size=",
                  uint64_t([pipeline threadExecutionWidth]));
  impl_->kernels[symbol] = MetalKernel{pipeline, facts};
  impl_->symbols.record(symbol, std::move(identity));
  return Status::ok();
}

Status MetalPlanDevice::loadKernelCode(const runtime::Bundle &,
                                   const runtime::BundleKernel &kernel,
                                   std::string_view bytes) {
  if (parseTarget(kernel.target) != Target::MSL)
    return errorf("kernel ", kernel.symbol, " is for target ", kernel.target,
                  "; ", name_, " runs ", toString(Target::MSL));
  Result<LaunchFacts> facts = readLaunchFacts(kernel.launchJson, Target::MSL);
  if (!facts)
    return errorf("kernel ", kernel.symbol, " (", kernel.file,
                  "): ", facts.message());
  return addKernel(kernel.symbol, bytes, *facts);
}

Result<std::shared_ptr<runtime::DeviceBuffer>>
MetalPlanDevice::allocateBuffer(uint64_t bytes) {
  // Metal has no empty buffers; plans may allocate zero elements.
  NSUInteger length = bytes == 0 ? 4 : NSUInteger(bytes);
  id<MTLBuffer> buffer =
      [impl_->device newBufferWithLength:length
                                 options:MTLResourceStorageModeShared];
  if (!buffer)
    return errorf("metal: cannot allocate ", bytes, " bytes on ", name_);
  // Plans rely on fresh buffers being zero (scratch accumulators, padding).
  std::memset([buffer contents], 0, length);
  return std::shared_ptr<runtime::DeviceBuffer>(
      std::make_shared<MetalBuffer>(buffer, bytes));
}

Status MetalPlanDevice::writeBytes(runtime::DeviceBuffer &buffer,
                                   uint64_t offset, const void *data,
                                   uint64_t bytes) {
  auto &b = static_cast<MetalBuffer &>(buffer);
  // Shared storage: the host writes in place once no launch uses it.
  if (Status s = finishWork(); !s)
    return s;
  std::memcpy(static_cast<uint8_t *>([b.buffer contents]) + offset, data,
              bytes);
  return Status::ok();
}

Status MetalPlanDevice::readBytes(const runtime::DeviceBuffer &buffer,
                                  uint64_t offset, void *data,
                                  uint64_t bytes) {
  const auto &b = static_cast<const MetalBuffer &>(buffer);
  if (Status s = finishWork(); !s)
    return s;
  std::memcpy(data, static_cast<const uint8_t *>([b.buffer contents]) + offset,
              bytes);
  return Status::ok();
}

Status MetalPlanDevice::enqueueCopy(const runtime::BufferView &src,
                             const runtime::BufferView &dst) {
  if (dst.bytes < src.bytes)
    return errorf("metal: a copy of ", src.bytes, " bytes into ", dst.bytes);
  // The launches so far first, then one blit in a command buffer of its own.
  if (Status s = finishWork(); !s)
    return s;
  id<MTLCommandBuffer> commands = [impl_->queue commandBuffer];
  id<MTLBlitCommandEncoder> blit = [commands blitCommandEncoder];
  if (!commands || !blit)
    return errorf("metal: cannot start a copy on ", name_);
  [blit copyFromBuffer:static_cast<MetalBuffer *>(src.buffer)->buffer
          sourceOffset:src.offset
              toBuffer:static_cast<MetalBuffer *>(dst.buffer)->buffer
     destinationOffset:dst.offset
                  size:src.bytes];
  [blit endEncoding];
  [commands commit];
  [commands waitUntilCompleted];
  if ([commands status] == MTLCommandBufferStatusError)
    return errorf("metal: the copy failed on ", name_, ": ",
                  describe([commands error]));
  return Status::ok();
}

Status MetalPlanDevice::enqueueLaunch(std::string_view kernel,
                               const std::array<uint32_t, 3> &grid,
                               const std::array<int64_t, 3> &block,
                               std::span<const runtime::BufferView> args) {
  auto it = impl_->kernels.find(kernel);
  if (it == impl_->kernels.end())
    return errorf("no kernel '", kernel, "' is loaded on ", name_);
  const LaunchFacts &facts = it->second.facts;
  if (block != facts.workgroup)
    return errorf("kernel '", kernel, "' was compiled for threadgroup size ",
                  facts.workgroup[0], "x", facts.workgroup[1], "x",
                  facts.workgroup[2], " but the plan launches ", block[0], "x",
                  block[1], "x", block[2]);
  if (args.size() != facts.bufferIndices.size())
    return errorf("kernel '", kernel, "' takes ", facts.bufferIndices.size(),
                  " buffers but the plan passes ", args.size());
  std::vector<uint64_t> bytes;
  for (const runtime::BufferView &view : args)
    bytes.push_back(view.bytes);
  if (Status s = checkIndexRange(facts, Target::MSL, bytes); !s)
    return errorf("kernel '", kernel, "': ", s.message());
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return Status::ok();

  if (!impl_->commands) {
    impl_->commands = [impl_->queue commandBuffer];
    // Serial dispatch: each launch sees the writes of the ones before it.
    impl_->encoder = [impl_->commands
        computeCommandEncoderWithDispatchType:MTLDispatchTypeSerial];
    if (!impl_->commands || !impl_->encoder)
      return errorf("metal: cannot start a command buffer on ", name_);
  }
  id<MTLComputeCommandEncoder> encoder = impl_->encoder;
  [encoder setComputePipelineState:it->second.pipeline];
  for (size_t i = 0; i < args.size(); ++i)
    [encoder setBuffer:static_cast<MetalBuffer *>(args[i].buffer)->buffer
                offset:args[i].offset
               atIndex:facts.bufferIndices[i]];
  [encoder dispatchThreadgroups:MTLSizeMake(grid[0], grid[1], grid[2])
          threadsPerThreadgroup:MTLSizeMake(NSUInteger(facts.workgroup[0]),
                                            NSUInteger(facts.workgroup[1]),
                                            NSUInteger(facts.workgroup[2]))];
  return Status::ok();
}

Status MetalPlanDevice::finishWork() {
  if (!impl_->commands)
    return Status::ok();
  id<MTLCommandBuffer> commands = impl_->commands;
  [impl_->encoder endEncoding];
  impl_->encoder = nil;
  impl_->commands = nil;
  [commands commit];
  [commands waitUntilCompleted];
  if ([commands status] == MTLCommandBufferStatusError)
    return errorf("metal: the launches failed on ", name_, ": ",
                  describe([commands error]));
  return Status::ok();
}

} // namespace attn::metal

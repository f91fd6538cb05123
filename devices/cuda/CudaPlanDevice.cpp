//===- CudaPlanDevice.cpp - Runs plans on an NVIDIA GPU -------------------===//

#include "devices/cuda/CudaPlanDevice.h"
#include "devices/cuda/CudaDriver.h"
#include "devices/cuda/CudaKernelABI.h"
#include "core/Target.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/device/KernelSymbols.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace attn::cuda {

namespace {

/// The driver and the context, shared by the device and every buffer so
/// that a buffer freed after its device still has a context to be freed in.
struct CudaContext {
  std::unique_ptr<CudaDriver> driver;
  CUdevice device = 0;
  CUcontext context = nullptr;

  ~CudaContext() {
    if (context)
      (void)driver->primaryCtxRelease(device);
  }
  /// Binds the context to the calling thread (a no-op when it already is).
  Status bind() const {
    return driver->check(driver->ctxSetCurrent(context), "cuCtxSetCurrent");
  }
};

class CudaBuffer : public runtime::DeviceBuffer,
                   public std::enable_shared_from_this<CudaBuffer> {
public:
  CudaBuffer(std::shared_ptr<CudaContext> ctx, CUdeviceptr ptr, uint64_t bytes)
      : ctx(std::move(ctx)), ptr(ptr), bytes(bytes) {}
  ~CudaBuffer() override {
    if (release)
      release();
    else if (ptr && ctx->bind())
      (void)ctx->driver->memFree(ptr);
  }
  uint64_t size() const override { return bytes; }

  std::shared_ptr<CudaContext> ctx;
  CUdeviceptr ptr;
  uint64_t bytes;
  /// Set for memory adopted from another framework: run instead of
  /// cuMemFree.
  std::function<void()> release;
};

struct CudaKernel {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  LaunchFacts facts;
};

/// One launch (function set, parameters packed) or device-to-device copy of
/// a step being recorded.
struct CudaStepWork {
  CUfunction function = nullptr;
  std::array<uint32_t, 3> grid = {0, 0, 0};
  std::array<unsigned, 3> block = {0, 0, 0};
  std::vector<uint64_t> words;
  /// Pointers to `words`, as cuGraphAddKernelNode takes them.
  std::vector<void *> params;
  CUdeviceptr src = 0, dst = 0;
  size_t bytes = 0;
};

/// A recorded step as a CUDA graph: the memsets of its scratch, then its
/// launches and copies in the order the step enqueued them, each node
/// depending on the one before (the stream's order), instantiated once.
struct CudaRecordedWork final : runtime::RecordedWork {
  std::shared_ptr<CudaContext> ctx;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  /// The nodes' parameters and the buffers they name, kept for as long as
  /// the graph lives.
  std::vector<CudaStepWork> work;
  std::vector<std::shared_ptr<runtime::DeviceBuffer>> buffers;

  ~CudaRecordedWork() override {
    if (!ctx->bind())
      return;
    if (exec)
      (void)ctx->driver->graphExecDestroy(exec);
    if (graph)
      (void)ctx->driver->graphDestroy(graph);
  }
};

CUdeviceptr devicePointer(const runtime::BufferView &view) {
  return static_cast<CudaBuffer *>(view.buffer)->ptr + view.offset;
}

} // namespace

struct CudaPlanDevice::Impl {
  std::shared_ptr<CudaContext> ctx;
  CudaDeviceInfo info;
  std::string name;
  int ordinal = 0;
  CUstream stream = nullptr;
  CUevent start = nullptr;
  CUevent stop = nullptr;
  std::map<std::string, CudaKernel, std::less<>> kernels;
  runtime::KernelSymbols symbols;
  int timedRepeats = 0;
  std::map<std::string, KernelTiming, std::less<>> timings;
  /// Set between beginRecording() and endRecording(): launches and copies
  /// are collected in `recorded` instead of going onto the stream.
  bool recording = false;
  std::vector<CudaStepWork> recorded;
  std::vector<std::shared_ptr<runtime::DeviceBuffer>> recordedBuffers;

  void keepAlive(runtime::DeviceBuffer *buffer) {
    recordedBuffers.push_back(
        static_cast<CudaBuffer *>(buffer)->shared_from_this());
  }

  /// Makes the context current and waits for the stream's work; a kernel
  /// fault surfaces here, as the error of the first sync after it.
  Status bindAndSyncStream() const {
    if (Status s = ctx->bind(); !s)
      return s;
    return ctx->driver->check(ctx->driver->streamSynchronize(stream),
                              "cuStreamSynchronize");
  }

  ~Impl() {
    if (!ctx || !ctx->bind())
      return;
    const CudaDriver &cu = *ctx->driver;
    for (auto &[symbol, kernel] : kernels)
      (void)cu.moduleUnload(kernel.module);
    if (start)
      (void)cu.eventDestroy(start);
    if (stop)
      (void)cu.eventDestroy(stop);
    if (stream)
      (void)cu.streamDestroy(stream);
  }
};

std::string CudaDeviceInfo::chip() const {
  return "sm_" + std::to_string(computeMajor * 10 + computeMinor);
}

CudaPlanDevice::CudaPlanDevice(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
CudaPlanDevice::~CudaPlanDevice() = default;

Result<std::unique_ptr<CudaPlanDevice>>
CudaPlanDevice::create(const CudaOptions &options) {
  Result<std::unique_ptr<CudaDriver>> driver =
      CudaDriver::load(options.driverLibrary);
  if (!driver)
    return driver.status();
  auto impl = std::make_unique<Impl>();
  impl->ordinal = options.device;
  impl->ctx = std::make_shared<CudaContext>();
  impl->ctx->driver = std::move(*driver);
  CudaContext &ctx = *impl->ctx;
  const CudaDriver &cu = *ctx.driver;

  if (Status s = cu.check(cu.init(0), "cuInit"); !s)
    return errorf("CUDA driver ", cu.library(),
                  " found but unusable: ", s.message());
  int count = 0;
  if (Status s = cu.check(cu.deviceGetCount(&count), "cuDeviceGetCount"); !s)
    return s;
  if (options.device < 0 || options.device >= count)
    return errorf("no CUDA device ", options.device, " (the driver reports ",
                  count, ")");
  if (Status s =
          cu.check(cu.deviceGet(&ctx.device, options.device), "cuDeviceGet");
      !s)
    return s;

  CudaDeviceInfo &info = impl->info;
  char name[256] = {};
  if (Status s = cu.check(cu.deviceGetName(name, sizeof(name) - 1, ctx.device),
                          "cuDeviceGetName");
      !s)
    return s;
  info.name = name;
  auto attribute = [&](CUdevice_attribute a, int &value) {
    return cu.check(cu.deviceGetAttribute(&value, a, ctx.device),
                    "cuDeviceGetAttribute");
  };
  if (Status s = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           info.computeMajor);
      !s)
    return s;
  if (Status s = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                           info.computeMinor);
      !s)
    return s;
  if (Status s = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                           info.multiprocessors);
      !s)
    return s;
  // Peak bandwidth is informative only: a driver that no longer reports the
  // memory clock leaves it 0.
  int clockKHz = 0, busBits = 0;
  if (attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, clockKHz) &&
      attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, busBits))
    info.peakBandwidthGBps = 2.0 * clockKHz * 1e3 * (busBits / 8.0) / 1e9;
  size_t total = 0;
  if (cu.deviceTotalMem(&total, ctx.device) == CUDA_SUCCESS)
    info.totalMemory = total;
  (void)cu.driverGetVersion(&info.driverVersion);

  if (Status s = cu.check(cu.primaryCtxRetain(&ctx.context, ctx.device),
                          "cuDevicePrimaryCtxRetain");
      !s)
    return s;
  if (Status s = ctx.bind(); !s)
    return s;
  // A blocking stream: the synchronous copies of write() and read() on the
  // legacy stream are ordered with its launches.
  if (Status s = cu.check(cu.streamCreate(&impl->stream, CU_STREAM_DEFAULT),
                          "cuStreamCreate");
      !s)
    return s;
  if (Status s = cu.check(cu.eventCreate(&impl->start, CU_EVENT_DEFAULT),
                          "cuEventCreate");
      !s)
    return s;
  if (Status s = cu.check(cu.eventCreate(&impl->stop, CU_EVENT_DEFAULT),
                          "cuEventCreate");
      !s)
    return s;
  impl->name = "cuda:" + info.name + " (" + info.chip() + ")";
  return std::unique_ptr<CudaPlanDevice>(new CudaPlanDevice(std::move(impl)));
}

const CudaDeviceInfo &CudaPlanDevice::info() const { return impl_->info; }
std::string_view CudaPlanDevice::name() const { return impl_->name; }

Status CudaPlanDevice::addKernel(const std::string &symbol,
                                 std::string_view ptx,
                                 const std::string &entryPoint,
                                 const std::string &launchJson) {
  ATTN_RETURN_IF_ERROR(keepLaunchBounds(symbol, "ptx", launchJson));
  std::string source = runtime::kernelSource(ptx, entryPoint, launchJson);
  Result<bool> loaded = impl_->symbols.isLoaded(impl_->name, symbol, source);
  if (!loaded)
    return loaded.status();
  if (*loaded)
    return Status::ok();
  Result<LaunchFacts> facts = readLaunchFacts(launchJson, Target::PTX);
  if (!facts)
    return errorf("kernel ", symbol, ": ", facts.message());
  if (!ptxRunsOn(facts->chip,
                 impl_->info.computeMajor * 10 + impl_->info.computeMinor))
    return errorf("kernel ", symbol, " is PTX for ", facts->chip, " but ",
                  impl_->name, " is ", impl_->info.chip(),
                  ": compile with --chip=", impl_->info.chip(), " or older");
  CudaContext &ctx = *impl_->ctx;
  const CudaDriver &cu = *ctx.driver;
  if (Status s = ctx.bind(); !s)
    return s;
  // The driver wants NUL-terminated PTX text.
  std::string text(ptx);
  char log[8192] = {};
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1)};
  CudaKernel kernel;
  kernel.facts = std::move(*facts);
  if (Status s = cu.check(
          cu.moduleLoadDataEx(&kernel.module, text.c_str(), 2, keys, values),
          "cuModuleLoadDataEx");
      !s)
    return errorf("kernel ", symbol, ": ", s.message(),
                  *log ? std::string("\n") + log : std::string());
  if (Status s = cu.check(cu.moduleGetFunction(&kernel.function, kernel.module,
                                               entryPoint.c_str()),
                          "cuModuleGetFunction");
      !s) {
    (void)cu.moduleUnload(kernel.module);
    return errorf("kernel ", symbol, " (entry ", entryPoint,
                  "): ", s.message());
  }
  impl_->kernels.emplace(symbol, std::move(kernel));
  impl_->symbols.record(symbol, std::move(source));
  return Status::ok();
}

bool CudaPlanDevice::hasKernel(std::string_view symbol) const {
  return impl_->kernels.find(symbol) != impl_->kernels.end();
}

namespace {

/// The chip of a PTX kernel's launch facts; empty when unrecorded or
/// unreadable (addKernel reports the latter).
std::string ptxChipOf(const runtime::BundleKernel &kernel) {
  Result<LaunchFacts> facts = readLaunchFacts(kernel.launchJson, Target::PTX);
  return facts ? facts->chip : std::string();
}

/// Whether `bundle` holds PTX of `kernel`'s symbol for a chip newer than
/// `kernel`'s that a device of SM `deviceSm` runs.
bool hasNewerPtx(const runtime::Bundle &bundle,
                 const runtime::BundleKernel &kernel, int deviceSm) {
  std::vector<std::string> chips = {ptxChipOf(kernel)};
  Result<std::vector<const runtime::BundleKernel *>> same =
      bundle.kernelsOfSymbol(kernel.symbol);
  if (same)
    for (const runtime::BundleKernel *k : *same)
      if (k->target == kernel.target && k->entryPoint == kernel.entryPoint)
        chips.push_back(ptxChipOf(*k));
  std::optional<size_t> best = bestPtxChip(chips, deviceSm);
  return best && chips[*best] != chips.front();
}

} // namespace

bool CudaPlanDevice::runsKernel(const runtime::BundleKernel &kernel) const {
  return parseTarget(kernel.target) == Target::PTX &&
         ptxRunsOn(ptxChipOf(kernel),
                   impl_->info.computeMajor * 10 + impl_->info.computeMinor);
}

Status CudaPlanDevice::loadKernelCode(const runtime::Bundle &bundle,
                                  const runtime::BundleKernel &kernel,
                                  std::string_view bytes) {
  if (parseTarget(kernel.target) != Target::PTX)
    return errorf("kernel ", kernel.symbol, " is for target ", kernel.target,
                  ", the CUDA executor runs ", toString(Target::PTX));
  if (hasNewerPtx(bundle, kernel,
                  impl_->info.computeMajor * 10 + impl_->info.computeMinor))
    return Status::ok();
  return addKernel(kernel.symbol, bytes, kernel.entryPoint, kernel.launchJson);
}

void CudaPlanDevice::setTimedRepeats(int repeats) {
  impl_->timedRepeats = std::max(repeats, 0);
}
const std::map<std::string, CudaPlanDevice::KernelTiming, std::less<>> &
CudaPlanDevice::timings() const {
  return impl_->timings;
}
void CudaPlanDevice::clearTimings() { impl_->timings.clear(); }

Result<std::shared_ptr<runtime::DeviceBuffer>>
CudaPlanDevice::allocateBuffer(uint64_t bytes) {
  CudaContext &ctx = *impl_->ctx;
  const CudaDriver &cu = *ctx.driver;
  if (Status s = ctx.bind(); !s)
    return s;
  CUdeviceptr ptr = 0;
  // cuMemAlloc rejects 0 bytes; plans may allocate empty buffers.
  uint64_t allocated = std::max<uint64_t>(bytes, 4);
  if (Status s = cu.check(cu.memAlloc(&ptr, allocated), "cuMemAlloc"); !s)
    return errorf("allocating ", bytes, " bytes on ", impl_->name, ": ",
                  s.message());
  auto buffer = std::make_shared<CudaBuffer>(impl_->ctx, ptr, bytes);
  // Plans rely on fresh buffers being zero (scratch accumulators, padding).
  if (Status s = cu.check(cu.memsetD8(ptr, 0, allocated), "cuMemsetD8"); !s)
    return s;
  return std::shared_ptr<runtime::DeviceBuffer>(std::move(buffer));
}

void *CudaPlanDevice::address(runtime::DeviceBuffer &buffer) {
  return reinterpret_cast<void *>(static_cast<CudaBuffer &>(buffer).ptr);
}

int CudaPlanDevice::ordinal() const { return impl_->ordinal; }

Result<std::shared_ptr<runtime::DeviceBuffer>>
CudaPlanDevice::adopt(void *address, uint64_t bytes,
                      std::function<void()> release) {
  if (!address && bytes)
    return errorf(impl_->name, ": adopting ", bytes, " bytes at a null "
                  "device pointer");
  auto buffer = std::make_shared<CudaBuffer>(
      impl_->ctx, reinterpret_cast<CUdeviceptr>(address), bytes);
  buffer->release = release ? std::move(release) : [] {};
  return std::shared_ptr<runtime::DeviceBuffer>(std::move(buffer));
}

Status CudaPlanDevice::writeBytes(runtime::DeviceBuffer &buffer,
                                  uint64_t offset, const void *data,
                                  uint64_t bytes) {
  auto &b = static_cast<CudaBuffer &>(buffer);
  const CudaDriver &cu = *impl_->ctx->driver;
  if (Status s = impl_->ctx->bind(); !s)
    return s;
  return cu.check(cu.memcpyHtoD(b.ptr + offset, data, bytes), "cuMemcpyHtoD");
}

Status CudaPlanDevice::readBytes(const runtime::DeviceBuffer &buffer,
                                 uint64_t offset, void *data, uint64_t bytes) {
  const auto &b = static_cast<const CudaBuffer &>(buffer);
  const CudaDriver &cu = *impl_->ctx->driver;
  // The stream first: a created stream's kernels need not be done when the
  // legacy stream's copy starts.
  if (Status s = impl_->bindAndSyncStream(); !s)
    return s;
  return cu.check(cu.memcpyDtoH(data, b.ptr + offset, bytes), "cuMemcpyDtoH");
}

Status CudaPlanDevice::enqueueCopy(const runtime::BufferView &src,
                            const runtime::BufferView &dst) {
  if (dst.bytes < src.bytes)
    return errorf(impl_->name, ": a copy of ", src.bytes, " bytes into ",
                  dst.bytes);
  if (src.bytes == 0)
    return Status::ok();
  if (impl_->recording) {
    CudaStepWork work;
    work.src = devicePointer(src);
    work.dst = devicePointer(dst);
    work.bytes = src.bytes;
    impl_->recorded.push_back(std::move(work));
    impl_->keepAlive(src.buffer);
    impl_->keepAlive(dst.buffer);
    return Status::ok();
  }
  const CudaDriver &cu = *impl_->ctx->driver;
  if (Status s = impl_->ctx->bind(); !s)
    return s;
  return cu.check(cu.memcpyDtoDAsync(devicePointer(dst), devicePointer(src),
                                     src.bytes, impl_->stream),
                  "cuMemcpyDtoDAsync");
}

Status CudaPlanDevice::enqueueLaunch(std::string_view kernel,
                              const std::array<uint32_t, 3> &grid,
                              const std::array<int64_t, 3> &block,
                              std::span<const runtime::BufferView> args) {
  auto it = impl_->kernels.find(kernel);
  if (it == impl_->kernels.end())
    return errorf("no kernel '", kernel, "' is loaded on ", impl_->name);
  const CudaKernel &k = it->second;
  if (k.facts.workgroup != block)
    return errorf("kernel '", kernel, "' was compiled for blocks of ",
                  k.facts.workgroup[0], "x", k.facts.workgroup[1], "x",
                  k.facts.workgroup[2], " threads but the plan launches ",
                  block[0], "x", block[1], "x", block[2]);
  if (grid[1] > 65535 || grid[2] > 65535)
    return errorf("kernel '", kernel, "': grid ", grid[0], "x", grid[1], "x",
                  grid[2], " exceeds CUDA's 65535 limit in y or z");
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return Status::ok();

  std::vector<uint64_t> addresses, sizes;
  for (const runtime::BufferView &view : args) {
    addresses.push_back(devicePointer(view));
    sizes.push_back(view.bytes);
  }
  Result<std::vector<uint64_t>> words =
      packKernelParams(k.facts, addresses, sizes);
  if (!words)
    return errorf("kernel '", kernel, "': ", words.message());
  if (impl_->recording) {
    CudaStepWork work;
    work.function = k.function;
    work.grid = grid;
    for (int i = 0; i < 3; ++i)
      work.block[i] = static_cast<unsigned>(block[i]);
    work.words = std::move(*words);
    impl_->recorded.push_back(std::move(work));
    for (const runtime::BufferView &view : args)
      impl_->keepAlive(view.buffer);
    return Status::ok();
  }
  std::vector<void *> params;
  for (uint64_t &w : *words)
    params.push_back(&w);

  CudaContext &ctx = *impl_->ctx;
  const CudaDriver &cu = *ctx.driver;
  if (Status s = ctx.bind(); !s)
    return s;
  auto launchOnce = [&]() {
    return cu.check(cu.launchKernel(k.function, grid[0], grid[1], grid[2],
                                    static_cast<unsigned>(block[0]),
                                    static_cast<unsigned>(block[1]),
                                    static_cast<unsigned>(block[2]),
                                    /*sharedMemBytes=*/0, impl_->stream,
                                    params.data(),
                                    /*extra=*/nullptr),
                    "cuLaunchKernel");
  };
  if (Status s = launchOnce(); !s)
    return errorf("kernel '", kernel, "': ", s.message());
  if (impl_->timedRepeats == 0)
    return Status::ok();

  if (Status s = cu.check(cu.eventRecord(impl_->start, impl_->stream),
                          "cuEventRecord");
      !s)
    return s;
  for (int i = 0; i < impl_->timedRepeats; ++i)
    if (Status s = launchOnce(); !s)
      return errorf("kernel '", kernel, "': ", s.message());
  if (Status s =
          cu.check(cu.eventRecord(impl_->stop, impl_->stream), "cuEventRecord");
      !s)
    return s;
  if (Status s =
          cu.check(cu.eventSynchronize(impl_->stop),
                   "cuEventSynchronize (kernel '" + std::string(kernel) + "')");
      !s)
    return s;
  float ms = 0.0f;
  if (Status s = cu.check(cu.eventElapsedTime(&ms, impl_->start, impl_->stop),
                          "cuEventElapsedTime");
      !s)
    return s;
  KernelTiming &t = impl_->timings[std::string(kernel)];
  ++t.launches;
  t.milliseconds += static_cast<double>(ms) / impl_->timedRepeats;
  return Status::ok();
}

Status CudaPlanDevice::finishWork() {
  const CudaDriver &cu = *impl_->ctx->driver;
  if (Status s = impl_->bindAndSyncStream(); !s)
    return s;
  return cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
}

namespace {

/// Adds `work` to `graph` after `last` (when set) and makes it the last.
Status addGraphNode(const CudaContext &ctx, CUgraph graph, CUgraphNode &last,
                    CudaStepWork &work) {
  const CudaDriver &cu = *ctx.driver;
  CUgraphNode node = nullptr;
  size_t deps = last ? 1 : 0;
  if (work.function) {
    work.params.clear();
    for (uint64_t &w : work.words)
      work.params.push_back(&w);
    CUDA_KERNEL_NODE_PARAMS p = {};
    p.func = work.function;
    p.gridDimX = work.grid[0];
    p.gridDimY = work.grid[1];
    p.gridDimZ = work.grid[2];
    p.blockDimX = work.block[0];
    p.blockDimY = work.block[1];
    p.blockDimZ = work.block[2];
    p.kernelParams = work.params.data();
    ATTN_RETURN_IF_ERROR(
        cu.check(cu.graphAddKernelNode(&node, graph, &last, deps, &p),
                 "cuGraphAddKernelNode"));
  } else {
    CUDA_MEMCPY3D p = {};
    p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = work.src;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = work.dst;
    // One row: pitches of the row's width, as cuMemcpy3D wants them set.
    p.srcPitch = p.dstPitch = work.bytes;
    p.srcHeight = p.dstHeight = 1;
    p.WidthInBytes = work.bytes;
    p.Height = 1;
    p.Depth = 1;
    ATTN_RETURN_IF_ERROR(cu.check(
        cu.graphAddMemcpyNode(&node, graph, &last, deps, &p, ctx.context),
        "cuGraphAddMemcpyNode"));
  }
  last = node;
  return Status::ok();
}

/// Adds a node zeroing `view` to `graph` after `last` (when set).
Status addZeroNode(const CudaContext &ctx, CUgraph graph, CUgraphNode &last,
                   const runtime::BufferView &view) {
  CUDA_MEMSET_NODE_PARAMS p = {};
  p.dst = devicePointer(view);
  p.value = 0;
  p.elementSize = 1;
  p.width = view.bytes;
  p.height = 1;
  CUgraphNode node = nullptr;
  ATTN_RETURN_IF_ERROR(ctx.driver->check(
      ctx.driver->graphAddMemsetNode(&node, graph, &last, last ? 1 : 0, &p,
                                     ctx.context),
      "cuGraphAddMemsetNode"));
  last = node;
  return Status::ok();
}

} // namespace

Status CudaPlanDevice::beginRecording() {
  if (impl_->recording)
    return errorf(impl_->name, " is already recording a step");
  // What was queued runs first, so the host's writes while recording touch
  // buffers no work is using.
  ATTN_RETURN_IF_ERROR(finishWork());
  impl_->recording = true;
  impl_->recorded.clear();
  impl_->recordedBuffers.clear();
  return Status::ok();
}

Result<std::unique_ptr<runtime::RecordedWork>>
CudaPlanDevice::endRecording(std::vector<runtime::BufferView> zeroFirst) {
  impl_->recording = false;
  auto work = std::make_unique<CudaRecordedWork>();
  work->ctx = impl_->ctx;
  work->work = std::move(impl_->recorded);
  work->buffers = std::move(impl_->recordedBuffers);
  impl_->recorded.clear();
  impl_->recordedBuffers.clear();
  for (const runtime::BufferView &view : zeroFirst)
    work->buffers.push_back(
        static_cast<CudaBuffer *>(view.buffer)->shared_from_this());

  const CudaContext &ctx = *impl_->ctx;
  const CudaDriver &cu = *ctx.driver;
  ATTN_RETURN_IF_ERROR(ctx.bind());
  ATTN_RETURN_IF_ERROR(
      cu.check(cu.graphCreate(&work->graph, 0), "cuGraphCreate"));
  CUgraphNode last = nullptr;
  for (const runtime::BufferView &view : zeroFirst)
    if (view.bytes)
      ATTN_RETURN_IF_ERROR(addZeroNode(ctx, work->graph, last, view));
  for (CudaStepWork &item : work->work)
    ATTN_RETURN_IF_ERROR(addGraphNode(ctx, work->graph, last, item));
  ATTN_RETURN_IF_ERROR(
      cu.check(cu.graphInstantiate(&work->exec, work->graph, 0),
               "cuGraphInstantiate"));
  return std::unique_ptr<runtime::RecordedWork>(std::move(work));
}

Status CudaPlanDevice::replayRecording(const runtime::RecordedWork &work) {
  const auto &recorded = static_cast<const CudaRecordedWork &>(work);
  const CudaDriver &cu = *impl_->ctx->driver;
  ATTN_RETURN_IF_ERROR(impl_->ctx->bind());
  // The stream is blocking: the host's synchronous writes of the step's
  // metadata are done, and ordered before the graph.
  ATTN_RETURN_IF_ERROR(cu.check(cu.graphLaunch(recorded.exec, impl_->stream),
                                "cuGraphLaunch"));
  return finishWork();
}

} // namespace attn::cuda

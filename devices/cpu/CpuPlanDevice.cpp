//===- CpuPlanDevice.cpp - The CPU as a device that runs kernels ----------===//

#include "devices/cpu/CpuPlanDevice.h"

#include "core/LaunchFacts.h"
#include "core/Target.h"
#include "runtime/bundle/Bundle.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

namespace attn::cpu {

namespace {

/// The levels this host runs, comma-separated, as --cpu-isa takes them.
std::string hostLevels() {
  std::string names;
  for (const CpuIsaLevel &level : cpuIsaLevels())
    if (hostRunsCpuIsa(level)) {
      if (!names.empty())
        names += ',';
      names += level.name;
    }
  return names;
}

/// The launch facts of `kernel` (`what` in messages) when this host runs
/// it, natively or, when `emulated` says so, under the emulator: a cpu
/// kernel whose facts read, of an ISA level the host has.
Result<LaunchFacts>
runnableFacts(const runtime::BundleKernel &kernel, const std::string &what,
              const std::function<bool(const CpuIsaLevel &)> &emulated) {
  std::string_view cpu = toString(Target::CPU);
  if (kernel.target != cpu)
    return errorf("kernel ", kernel.symbol, " is for target ", kernel.target,
                  "; ", cpu, " runs ", cpu);
  Result<LaunchFacts> facts = readLaunchFacts(kernel.launchJson, Target::CPU);
  if (!facts)
    return errorf(what, ": ", facts.message());
  // readLaunchFacts accepts known levels only.
  const CpuIsaLevel &level = *findCpuIsaLevel(facts->cpuIsa);
  if (hostRunsCpuIsa(level) || emulated(level))
    return facts;
  std::string runnable = hostLevels();
  return errorf(
      what, " is built for cpu ISA level ", level.name, ", which this ",
      hostCpuArch() == CpuArch::X86_64 ? "x86-64" : "aarch64",
      " host does not run; ",
      runnable.empty() ? "no --cpu-isa level of attn-compile runs here"
                       : "recompile with attn-compile --cpu-isa=" + runnable);
}

Status checkThreads(unsigned threads, std::string_view what) {
  if (threads >= 1 && threads <= kMaxCpuThreads)
    return Status::ok();
  return errorf(what, " is ", threads, "; expected a thread count from 1 to ",
                kMaxCpuThreads);
}

/// The threads `options` ask for, else ATTN_CPU_THREADS's, else the CPUs
/// the process may run on.
Result<unsigned> threadCount(const CpuDeviceOptions &options) {
  if (options.threads) {
    ATTN_RETURN_IF_ERROR(
        checkThreads(options.threads, "CpuDeviceOptions::threads"));
    return options.threads;
  }
  const char *env = std::getenv(kCpuThreadsEnv);
  if (!env || !*env)
    return availableCpus();
  std::string_view text(env);
  unsigned threads = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), threads);
  if (error != std::errc() || end != text.data() + text.size() || threads < 1 ||
      threads > kMaxCpuThreads)
    return errorf(kCpuThreadsEnv, " is '", text,
                  "'; expected a thread count from 1 to ", kMaxCpuThreads);
  return threads;
}

/// One launch, as its work items see it.
struct LaunchItems {
  CpuKernelEntry entry;
  void *const *buffers;
  const int64_t *elements;
  int64_t gridX, gridXY;
};

void runItem(void *context, int64_t item) {
  const auto &launch = *static_cast<const LaunchItems *>(context);
  const int64_t workItem[3] = {item % launch.gridX,
                               item % launch.gridXY / launch.gridX,
                               item / launch.gridXY};
  launch.entry(workItem, launch.buffers, launch.elements);
}

} // namespace

CpuPlanDevice::CpuPlanDevice(unsigned threads,
                             std::unique_ptr<CpuEmulator> emulator)
    : pool_(std::make_unique<ThreadPool>(threads)),
      emulator_(std::move(emulator)) {}

Result<std::unique_ptr<CpuPlanDevice>>
CpuPlanDevice::create(const CpuDeviceOptions &options) {
  Result<unsigned> threads = threadCount(options);
  if (!threads)
    return threads.status();
  std::unique_ptr<CpuEmulator> emulator;
  if (!options.emulator.emulator.empty()) {
    Result<std::unique_ptr<CpuEmulator>> created =
        CpuEmulator::create(options.emulator);
    if (!created)
      return created.status();
    emulator = std::move(*created);
  }
  return std::unique_ptr<CpuPlanDevice>(
      new CpuPlanDevice(*threads, std::move(emulator)));
}

bool CpuPlanDevice::emulates(const CpuIsaLevel &level) const {
  return emulator_ && level.arch == emulator_->arch() && !hostRunsCpuIsa(level);
}

Status CpuPlanDevice::setThreads(unsigned threads) {
  ATTN_RETURN_IF_ERROR(checkThreads(threads, "the cpu device's thread count"));
  if (threads != pool_->threads())
    pool_ = std::make_unique<ThreadPool>(threads);
  return Status::ok();
}

bool CpuPlanDevice::runsKernel(const runtime::BundleKernel &kernel) const {
  if (kernel.target != toString(Target::CPU))
    return false;
  Result<LaunchFacts> facts = readLaunchFacts(kernel.launchJson, Target::CPU);
  if (!facts)
    return false;
  const CpuIsaLevel &level = *findCpuIsaLevel(facts->cpuIsa);
  return hostRunsCpuIsa(level) || emulates(level);
}

Status CpuPlanDevice::loadKernelCode(const runtime::Bundle &,
                                 const runtime::BundleKernel &kernel,
                                 std::string_view bytes) {
  std::string what = "kernel " + kernel.symbol + " (" + kernel.file + ")";
  Result<LaunchFacts> facts =
      runnableFacts(kernel, what, [this](const CpuIsaLevel &level) {
        return emulates(level);
      });
  if (!facts)
    return facts.status();
  // A symbol may have a kernel per ISA level: each is one kernel to
  // KernelSymbols, and launches take the widest.
  std::string levelSymbol = kernel.symbol + "@" + facts->cpuIsa;
  std::string source =
      runtime::kernelSource(bytes, kernel.entryPoint, kernel.launchJson);
  Result<bool> loaded = symbols_.isLoaded(name(), levelSymbol, source);
  if (!loaded || *loaded)
    return loaded.status();
  const CpuIsaLevel &level = *findCpuIsaLevel(facts->cpuIsa);
  Kernel loadedKernel;
  if (emulates(level)) {
    Result<EmulatedKernel> emulated =
        emulator_->load(what, bytes, kernel.entryPoint);
    if (!emulated)
      return emulated.status();
    loadedKernel.emulatedObject = std::move(*emulated);
    loadedKernel.emulated = true;
  } else {
    Result<CpuKernelObject> object =
        loadCpuKernel(what, bytes, kernel.entryPoint);
    if (!object)
      return object.status();
    loadedKernel.object = std::move(*object);
  }
  size_t args = facts->argElementBytes.size();
  if (buffers_.size() < args) {
    buffers_.resize(args);
    elements_.resize(args);
  }
  loadedKernel.argElementBytes = std::move(facts->argElementBytes);
  loadedKernel.rank = size_t(&level - cpuIsaLevels().data());
  if (!loadedKernel.emulated)
    loadedKernel.rank += cpuIsaLevels().size();
  auto it = kernels_.find(kernel.symbol);
  if (it == kernels_.end())
    kernels_.emplace(kernel.symbol, std::move(loadedKernel));
  else if (it->second.rank < loadedKernel.rank)
    it->second = std::move(loadedKernel);
  symbols_.record(levelSymbol, std::move(source));
  return Status::ok();
}

Result<const CpuPlanDevice::Kernel *>
CpuPlanDevice::checkLaunch(std::string_view kernel,
                           const std::array<uint32_t, 3> &grid,
                           const std::array<int64_t, 3> &block,
                           std::span<const runtime::BufferView> args) {
  if (block != std::array<int64_t, 3>{1, 1, 1})
    return errorf(name(), ": kernel ", kernel, " is launched with block [",
                  block[0], ", ", block[1], ", ", block[2],
                  "]; a cpu kernel runs one work item per call, block [1, 1, "
                  "1]");
  auto it = kernels_.find(kernel);
  if (it == kernels_.end())
    return errorf(name(), ": no kernel is loaded under the symbol ", kernel);
  const Kernel &k = it->second;
  if (args.size() != k.argElementBytes.size())
    return errorf(name(), ": kernel ", kernel, " takes ",
                  k.argElementBytes.size(),
                  " arguments (its launch facts' arg_element_bytes), the "
                  "launch passes ",
                  args.size());
  uint64_t gridXY = uint64_t(grid[0]) * grid[1];
  if (grid[2] &&
      gridXY > uint64_t(std::numeric_limits<int64_t>::max()) / grid[2])
    return errorf(name(), ": kernel ", kernel, " is launched on a grid of [",
                  grid[0], ", ", grid[1], ", ", grid[2],
                  "], more than 2^63 - 1 work items");
  return &k;
}

Status CpuPlanDevice::runLaunch(std::string_view kernel, const Kernel &k,
                                const std::array<uint32_t, 3> &grid,
                                std::span<const runtime::BufferView> args) {
  uint64_t gridXY = uint64_t(grid[0]) * grid[1];
  int64_t count = int64_t(gridXY * grid[2]);
  if (count == 0)
    return Status::ok();
  for (size_t i = 0; i < args.size(); ++i) {
    buffers_[i] = args[i].buffer ? bytesOf(args[i]) : nullptr;
    elements_[i] = int64_t(args[i].bytes) / k.argElementBytes[i];
  }
  if (k.emulated)
    return launchEmulated(kernel, k, grid, args);
  LaunchItems launch{k.object.entry(), buffers_.data(), elements_.data(),
                     int64_t(grid[0]), int64_t(gridXY)};
  pool_->run(count, runItem, &launch);
  return Status::ok();
}

Status CpuPlanDevice::enqueueLaunch(std::string_view kernel,
                                    const std::array<uint32_t, 3> &grid,
                                    const std::array<int64_t, 3> &block,
                                    std::span<const runtime::BufferView> args) {
  Result<const Kernel *> k = checkLaunch(kernel, grid, block, args);
  if (!k)
    return k.status();
  if (recording_) {
    recorded_.push_back(
        {std::string(kernel), grid, {args.begin(), args.end()}});
    return Status::ok();
  }
  return runLaunch(kernel, **k, grid, args);
}

Status CpuPlanDevice::enqueueCopy(const runtime::BufferView &src,
                                  const runtime::BufferView &dst) {
  if (!recording_)
    return HostMemoryDevice::enqueueCopy(src, dst);
  recorded_.push_back({"", {0, 0, 0}, {src, dst}});
  return Status::ok();
}

/// A recorded step's work on the CPU device: the scratch buffers to zero,
/// then the launches and copies in order. The buffers are the step's own
/// (the RecordedStep keeps them) or the caller's, which a replay matches
/// before it runs anything.
struct CpuPlanDevice::Recording final : runtime::RecordedWork {
  std::vector<runtime::BufferView> zeroFirst;
  std::vector<Command> commands;
};

Status CpuPlanDevice::beginRecording() {
  if (recording_)
    return errorf(name(), " is already recording a step");
  recording_ = true;
  recorded_.clear();
  return Status::ok();
}

Result<std::unique_ptr<runtime::RecordedWork>>
CpuPlanDevice::endRecording(std::vector<runtime::BufferView> zeroFirst) {
  recording_ = false;
  auto work = std::make_unique<Recording>();
  work->zeroFirst = std::move(zeroFirst);
  work->commands = std::move(recorded_);
  recorded_.clear();
  return std::unique_ptr<runtime::RecordedWork>(std::move(work));
}

Status CpuPlanDevice::replayRecording(const runtime::RecordedWork &work) {
  const auto &recorded = static_cast<const Recording &>(work);
  for (const runtime::BufferView &view : recorded.zeroFirst)
    std::memset(bytesOf(view), 0, view.bytes);
  for (const Command &c : recorded.commands) {
    if (c.kernel.empty()) {
      ATTN_RETURN_IF_ERROR(
          HostMemoryDevice::enqueueCopy(c.args[0], c.args[1]));
      continue;
    }
    // Looked up again: a kernel of a wider level may have loaded since.
    Result<const Kernel *> k = checkLaunch(c.kernel, c.grid, {1, 1, 1}, c.args);
    if (!k)
      return k.status();
    ATTN_RETURN_IF_ERROR(runLaunch(c.kernel, **k, c.grid, c.args));
  }
  return Status::ok();
}

Status
CpuPlanDevice::launchEmulated(std::string_view kernel, const Kernel &k,
                              const std::array<uint32_t, 3> &grid,
                              std::span<const runtime::BufferView> args) {
  std::vector<EmulatedArg> emulatedArgs(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    emulatedArgs[i] = {static_cast<uint8_t *>(buffers_[i]), args[i].bytes,
                       elements_[i]};
  std::string what = std::string(name()) + ": kernel " + std::string(kernel);
  ATTN_RETURN_IF_ERROR(
      emulator_->launch(what, k.emulatedObject, grid, emulatedArgs));
  ++emulatedLaunches_;
  return Status::ok();
}

} // namespace attn::cpu

//===- Emulator.cpp - A host emulator of a Tenstorrent device ------------===//
//
// The device model (DRAM banks, per-core L1 with circular buffers, one thread
// per kernel) and, below it, the device layer that attn's SDK declarations
// call (devices/tt/sdk/include/internal/attn_tt_device.h and attn_tt_llk.h).
//
// Kernel code cannot return an error from an API call, so a failing call
// records the message on its core and unwinds the kernel thread with a
// private exception that the thread's entry catches; nothing else in the
// runtime uses exceptions.
//
//===----------------------------------------------------------------------===//
#include "devices/tt/emulator/Emulator.h"

#include "internal/attn_tt_llk.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <sys/mman.h>
#include <thread>

/// Kernels issue on NOC 0 unless they say otherwise.
uint8_t noc_index = 0;

namespace attn::tt {

static uint32_t alignUp(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

//===----------------------------------------------------------------------===//
// DRAM
//===----------------------------------------------------------------------===//

Device::Device(Arch arch)
    : arch_(arch), next_(archParams(arch).dramReadAlignment),
      banks_(archParams(arch).numDramBanks) {}

Buffer Device::allocate(uint32_t pageSize, uint32_t numPages) {
  Buffer b;
  b.address = next_;
  b.pageSize = pageSize;
  b.alignedPageSize = alignUp(pageSize, archParams(arch_).dramReadAlignment);
  b.numPages = numPages;
  uint32_t pagesPerBank = (numPages + numBanks() - 1) / numBanks();
  next_ += std::max<uint32_t>(pagesPerBank, 1) * b.alignedPageSize;
  for (auto &bank : banks_) {
    // Space given back by release() holds what it held: zero it.
    std::fill(bank.begin() + std::min<size_t>(b.address, bank.size()),
              bank.end(), 0);
    bank.resize(next_, 0);
  }
  return b;
}

void Device::release(const Buffer &b) {
  uint32_t pagesPerBank =
      (std::max<uint32_t>(b.numPages, 1) + numBanks() - 1) / numBanks();
  if (b.address + std::max<uint32_t>(pagesPerBank, 1) * b.alignedPageSize ==
      next_)
    next_ = b.address;
}

static uint32_t pageAddress(const Buffer &b, uint32_t numBanks, uint32_t page) {
  return b.address + (page / numBanks) * b.alignedPageSize;
}

void Device::writePage(const Buffer &buffer, uint32_t page, const void *data) {
  std::memcpy(resolve(page % numBanks(), pageAddress(buffer, numBanks(), page),
                      buffer.pageSize),
              data, buffer.pageSize);
}

void Device::readPage(const Buffer &buffer, uint32_t page, void *data) const {
  const auto &bank = banks_[page % numBanks()];
  std::memcpy(data, bank.data() + pageAddress(buffer, numBanks(), page),
              buffer.pageSize);
}

uint8_t *Device::resolve(uint32_t bank, uint32_t address, uint32_t size) {
  if (bank >= banks_.size() || uint64_t(address) + size > banks_[bank].size())
    return nullptr;
  return banks_[bank].data() + address;
}

//===----------------------------------------------------------------------===//
// L1: kernels hold L1 addresses in 32-bit integers, as on the device, so each
// core's L1 is mapped below 2 GiB where such an integer is a host pointer.
// The mapping is page-aligned, so an address's alignment is its offset's.
//===----------------------------------------------------------------------===//

namespace {

constexpr uint32_t kMaxL1Size = 1536 * 1024;

class L1Arena {
public:
  static std::unique_ptr<L1Arena> create(std::string &error) {
    void *p = MAP_FAILED;
#if defined(__x86_64__) && defined(MAP_32BIT)
    p = mmap(nullptr, kMaxL1Size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
#endif
    // Elsewhere: ask for low addresses until one is granted.
    for (uintptr_t hint = 0x10000000; p == MAP_FAILED && hint < 0x7f000000;
         hint += 0x1000000) {
      void *q = mmap(reinterpret_cast<void *>(hint), kMaxL1Size,
                     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                     0);
      if (q == MAP_FAILED)
        continue;
      if (reinterpret_cast<uintptr_t>(q) + kMaxL1Size <= 0x7fffffffu) {
        p = q;
        break;
      }
      munmap(q, kMaxL1Size);
    }
    if (p == MAP_FAILED) {
      error = "cannot map an emulated L1 below 2 GiB";
      return nullptr;
    }
    return std::unique_ptr<L1Arena>(new L1Arena(static_cast<uint8_t *>(p)));
  }
  ~L1Arena() { munmap(base_, kMaxL1Size); }
  uint8_t *base() const { return base_; }

private:
  explicit L1Arena(uint8_t *base) : base_(base) {}
  uint8_t *base_;
};

struct KernelAbort {};

struct CircularBuffer {
  bool configured = false;
  CircularBufferSpec spec;
  uint8_t *base = nullptr;
  uint64_t pushed = 0;
  uint64_t popped = 0;
  /// Pages the producer has reserved and not yet pushed.
  uint32_t reserved = 0;
  /// Tiles packed into the reserved pages so far.
  uint32_t packed = 0;

  uint32_t available() const { return uint32_t(pushed - popped); }
  uint32_t free() const { return spec.numPages - available(); }
  uint8_t *page(uint64_t index) const {
    return base + (index % spec.numPages) * spec.pageSize;
  }
};

/// The last FPU init of a compute kernel: what the unpackers and the math
/// engine are configured for.
struct FpuInit {
  enum Kind { None, Copy, Matmul, Binary, DestReuse, Reduce } kind = None;
  EltwiseBinaryType type = EltwiseBinaryType::ELWADD;
  BroadcastType bcast = BroadcastType::NONE;
  EltwiseBinaryReuseDestType reuse = EltwiseBinaryReuseDestType::NONE;
  PoolType pool = PoolType::SUM;
  ReduceDim dim = ReduceDim::REDUCE_ROW;
  uint32_t transpose = 0;
  uint32_t transposeWithinFace = 0;
};

/// How a destination tile's values are laid out.
enum class DstLayout {
  /// Nothing written since tile_regs_acquire (all zero).
  Empty,
  /// Element (r, c) at (r, c).
  Rows,
  /// Each 16x16 face transposed: the layout row reductions accumulate in.
  FacesTransposed,
};

/// The destination-register handshake between math and pack.
enum class RegState { Released, Acquired, Committed, Waited, AcquiredDst };

struct ComputeState {
  bool started = false;
  /// The start-up was compute_kernel_hw_startup<SrcOrder::Reverse>.
  bool matmulOrder = false;
  /// Formats and the buffers they were configured from.
  DataFormat srcA = DataFormat::Float32, srcB = DataFormat::Float32,
             pack = DataFormat::Float32;
  uint32_t srcACb = 0, srcBCb = 0, packCb = 0;
  FpuInit fpu;
  std::string fpuInitName = "none";
  std::optional<attn_tt_device::Sfpu> sfpu;
  /// Packer edge masks left by reduce_init.
  bool reduceMasks = false;
  ReduceDim maskDim = ReduceDim::REDUCE_ROW;
  RegState regs = RegState::Released;
  std::vector<float> dst;
  std::vector<DstLayout> layout;
  bool fp32Dest = true;
};

struct ThreadContext;

struct Core {
  unsigned index = 0;
  uint8_t *l1 = nullptr;
  const ArchParams *arch = nullptr;
  CircularBuffer cbs[kNumCircularBuffers];
  std::mutex mu;
  std::condition_variable cv;
  int live = 0;
  /// Threads that found their condition false since the last state change.
  int blocked = 0;
  /// Bumped by every state change (push, pop, a thread finishing).
  uint64_t epoch = 0;
  bool aborted = false;
  std::string error;
  std::vector<ThreadContext *> threads;
};

struct ThreadContext {
  Core *core = nullptr;
  const KernelSpec *kernel = nullptr;
  const std::vector<uint32_t> *args = nullptr;
  bool finished = false;
  /// What the thread waits for while blocked, for deadlock reports.
  std::string waiting;
  ComputeState compute;
};

thread_local ThreadContext *current = nullptr;
Device *currentDevice = nullptr;
std::mutex runMutex;

std::string threadName(const ThreadContext &t) {
  return "kernel '" + t.kernel->name + "' (" + toString(t.kernel->kind) +
         ")";
}

/// Records `message` as the core's error (the first one wins), wakes every
/// thread of the core, and unwinds the calling kernel.
[[noreturn]] void failLocked(Core &core, const std::string &message) {
  if (!core.aborted) {
    core.aborted = true;
    core.error = message;
  }
  core.cv.notify_all();
  throw KernelAbort{};
}

/// failLocked with `message` said by the running kernel: "core 3, kernel
/// 'reader' (reader): message". The caller holds core.mu.
[[noreturn]] void failThreadLocked(Core &core, const std::string &message) {
  failLocked(core, "core " + std::to_string(core.index) + ", " +
                       threadName(*current) + ": " + message);
}

[[noreturn]] void fail(const std::string &message) {
  Core &core = *current->core;
  std::lock_guard<std::mutex> lock(core.mu);
  failThreadLocked(core, message);
}

template <typename... Parts> [[noreturn]] void failf(const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  fail(os.str());
}

std::string deadlockReport(const Core &core) {
  std::ostringstream os;
  os << "deadlock on core " << core.index
     << ": every running kernel is blocked";
  for (const ThreadContext *t : core.threads) {
    os << "; " << threadName(*t);
    if (t->finished)
      os << " finished";
    else
      os << " blocked in " << t->waiting;
  }
  return os.str();
}

/// Blocks until `ready()` holds (checked under the core's lock). When every
/// live thread of the core would block, fails with a deadlock report.
template <typename Pred>
void blockUntil(Core &core, std::unique_lock<std::mutex> &lock, Pred ready,
                const std::string &what) {
  while (true) {
    if (core.aborted)
      throw KernelAbort{};
    if (ready())
      return;
    current->waiting = what;
    ++core.blocked;
    if (core.blocked == core.live)
      failLocked(core, deadlockReport(core));
    uint64_t epoch = core.epoch;
    core.cv.wait(lock, [&] { return core.epoch != epoch || core.aborted; });
  }
}

/// Wakes every waiter of `core` to re-check its condition. Called with the
/// core's lock held after any change a waiter may wait for.
void stateChanged(Core &core) {
  core.blocked = 0;
  ++core.epoch;
  core.cv.notify_all();
}

CircularBuffer &cbOrFail(int32_t id, const char *op) {
  if (id < 0 || uint32_t(id) >= kNumCircularBuffers ||
      !current->core->cbs[id].configured)
    failf(op, ": circular buffer ", id, " is not configured");
  return current->core->cbs[id];
}

std::string cbOp(const char *op, int32_t cb, int32_t n) {
  std::ostringstream os;
  os << op << "(cb " << cb << ", " << n << " tile(s))";
  return os.str();
}

//===----------------------------------------------------------------------===//
// Number formats
//===----------------------------------------------------------------------===//

float bitsToFloat(uint32_t w) {
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

uint32_t floatToBits(float f) {
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}

float bf16ToFloat(uint16_t bits) { return bitsToFloat(uint32_t(bits) << 16); }

uint16_t floatToBf16(float f) {
  uint32_t w = floatToBits(f);
  if ((w & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((w >> 16) | 0x40);
  w += 0x7fffu + ((w >> 16) & 1);
  return uint16_t(w >> 16);
}

float roundToBf16(float f) { return bf16ToFloat(floatToBf16(f)); }

float fp16ToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31;
  int32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  if (exp == 0x1f)
    return bitsToFloat(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0)
      return bitsToFloat(sign);
    float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  return bitsToFloat(sign | uint32_t(exp - 15 + 127) << 23 | man << 13);
}

/// Round to nearest even, overflow to infinity, as a packer does.
uint16_t floatToFp16(float f) {
  uint32_t w = floatToBits(f);
  uint16_t sign = uint16_t((w >> 16) & 0x8000);
  uint32_t absw = w & 0x7fffffffu;
  if (absw > 0x7f800000u)
    return uint16_t(sign | 0x7e00);
  if (absw >= 0x477ff000u) // rounds to 65536 or more
    return uint16_t(sign | 0x7c00);
  float a = bitsToFloat(absw);
  if (a < std::ldexp(1.0f, -14)) {
    // Subnormal: a multiple of 2^-24, rounded to nearest even by rint.
    return uint16_t(sign | uint16_t(std::nearbyint(std::ldexp(a, 24))));
  }
  uint32_t exp = (absw >> 23) - 127 + 15;
  uint32_t man = absw & 0x7fffff;
  uint32_t half = (exp << 10) | (man >> 13);
  uint32_t rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return uint16_t(sign | half);
}

float loadElement(const uint8_t *p, DataFormat format) {
  uint16_t bits;
  switch (format) {
  case DataFormat::Float32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DataFormat::Float16_b:
    std::memcpy(&bits, p, 2);
    return bf16ToFloat(bits);
  case DataFormat::Float16:
    std::memcpy(&bits, p, 2);
    return fp16ToFloat(bits);
  }
  return 0;
}

void storeElement(uint8_t *p, DataFormat format, float v) {
  uint16_t bits;
  switch (format) {
  case DataFormat::Float32:
    std::memcpy(p, &v, 4);
    return;
  case DataFormat::Float16_b:
    bits = floatToBf16(v);
    std::memcpy(p, &bits, 2);
    return;
  case DataFormat::Float16:
    bits = floatToFp16(v);
    std::memcpy(p, &bits, 2);
    return;
  }
}

//===----------------------------------------------------------------------===//
// Compute state
//===----------------------------------------------------------------------===//

ComputeState &computeState(const char *op) {
  if (current->kernel->kind != KernelKind::Compute)
    failf(op, " is a compute API call");
  return current->compute;
}

/// The state of a compute kernel past compute_kernel_hw_startup.
ComputeState &startedState(const char *op) {
  ComputeState &s = computeState(op);
  if (!s.started)
    failf(op, " before compute_kernel_hw_startup (the one-time hardware "
              "setup must come first)");
  return s;
}

enum class Src { A, B };

/// Fails unless `cb`'s format is the one source register `src` is
/// configured for.
void checkUnpack(ComputeState &s, Src src, uint32_t cb, const char *op) {
  DataFormat format = cbOrFail(int32_t(cb), op).spec.format;
  DataFormat configured = src == Src::A ? s.srcA : s.srcB;
  if (format == configured)
    return;
  const char *name = src == Src::A ? "A" : "B";
  failf(op, " unpacks cb ", cb, " (", toString(format), ") to source ", name,
        ", which is configured for ", toString(configured), " (from cb ",
        src == Src::A ? s.srcACb : s.srcBCb,
        "); reconfigure it first (reconfig_data_format_src",
        src == Src::A ? "a" : "b", ")");
}

/// Fails unless the last FPU init is of `kind` and satisfies `matches`.
template <typename Match>
void requireInit(ComputeState &s, FpuInit::Kind kind, Match matches,
                 const char *op, const char *init) {
  if (s.fpu.kind == kind && matches(s.fpu))
    return;
  failf(op, " needs ", init, " since the last other init (last init: ",
        s.fpuInitName, ")");
}

void setInit(ComputeState &s, const FpuInit &init, std::string name) {
  s.fpu = init;
  s.fpuInitName = std::move(name);
}

/// Math needs the registers acquired and not yet committed.
void requireMath(ComputeState &s, const char *op) {
  if (s.regs != RegState::Acquired && s.regs != RegState::AcquiredDst)
    failf(op, " writes destination registers outside tile_regs_acquire .. "
              "tile_regs_commit");
}

float *dstTile(ComputeState &s, uint32_t idst, const char *op) {
  requireMath(s, op);
  uint32_t capacity = dstCapacity(s.fp32Dest);
  if (idst >= capacity)
    failf(op, ": destination tile ", idst, " is out of range: ", capacity,
          " tiles with ", s.fp32Dest ? "fp32" : "16-bit",
          " accumulation (half-sync)");
  return s.dst.data() + idst * kTileElements;
}

/// Rounds a destination tile the way a 16-bit destination holds it.
void settleDst(ComputeState &s, float *tile) {
  if (s.fp32Dest)
    return;
  for (uint32_t i = 0; i < kTileElements; ++i)
    tile[i] = roundToBf16(tile[i]);
}

/// Tile `index` (counted from the front) of `cb`, row-major as floats.
void unpackTile(int32_t cbId, uint32_t index, float *out, const char *op) {
  CircularBuffer &cb = cbOrFail(cbId, op);
  Core &core = *current->core;
  {
    std::lock_guard<std::mutex> lock(core.mu);
    if (index >= cb.available()) {
      std::ostringstream os;
      os << op << " reads tile " << index << " of cb " << cbId << " but "
         << cb.available() << " are at its front (missing cb_wait_front?)";
      failThreadLocked(core, os.str());
    }
  }
  const uint8_t *page = cb.page(cb.popped + index);
  uint32_t esz = elementSize(cb.spec.format);
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c)
      out[r * 32 + c] =
          loadElement(page + faceOffset(r, c) * esz, cb.spec.format);
}

float applyBinary(EltwiseBinaryType type, float a, float b) {
  switch (type) {
  case EltwiseBinaryType::ELWADD:
    return a + b;
  case EltwiseBinaryType::ELWSUB:
    return a - b;
  case EltwiseBinaryType::ELWMUL:
    return a * b;
  case EltwiseBinaryType::ELWDIV:
    return a / b;
  case EltwiseBinaryType::ELWLESS:
    return a < b ? 1.0f : 0.0f;
  }
  return 0;
}

const char *binaryName(EltwiseBinaryType type) {
  switch (type) {
  case EltwiseBinaryType::ELWADD:
    return "add";
  case EltwiseBinaryType::ELWSUB:
    return "sub";
  case EltwiseBinaryType::ELWMUL:
    return "mul";
  case EltwiseBinaryType::ELWDIV:
    return "div";
  case EltwiseBinaryType::ELWLESS:
    return "less";
  }
  return "?";
}

const char *sfpuName(attn_tt_device::Sfpu op) {
  switch (op) {
  case attn_tt_device::Sfpu::Exp:
    return "exp_tile";
  case attn_tt_device::Sfpu::Recip:
    return "recip_tile";
  case attn_tt_device::Sfpu::Log:
    return "log_tile";
  case attn_tt_device::Sfpu::Tanh:
    return "tanh_tile";
  case attn_tt_device::Sfpu::BinopWithScalar:
    return "binop_with_scalar_tile";
  case attn_tt_device::Sfpu::BinaryMax:
    return "binary_max_tile";
  }
  return "?";
}

void requireSfpu(ComputeState &s, attn_tt_device::Sfpu op) {
  if (s.sfpu == op)
    return;
  failf(sfpuName(op), " needs ", sfpuName(op), "_init since the last other "
        "SFPU init (last: ",
        s.sfpu ? std::string(sfpuName(*s.sfpu)) + "_init" : "none", ")");
}

//===----------------------------------------------------------------------===//
// Running a program
//===----------------------------------------------------------------------===//

void runKernelThread(ThreadContext &ctx) {
  current = &ctx;
  try {
    ctx.kernel->entry();
  } catch (const KernelAbort &) {
  }
  Core &core = *ctx.core;
  std::lock_guard<std::mutex> lock(core.mu);
  ctx.finished = true;
  --core.live;
  // The remaining threads can never be woken by this one any more.
  if (!core.aborted && core.live > 0 && core.blocked == core.live) {
    core.aborted = true;
    core.error = deadlockReport(core);
  }
  core.cv.notify_all();
  current = nullptr;
}

/// Circular buffer bases are aligned to the DRAM read alignment, so a whole
/// DRAM page read into a buffer page is congruent.
uint32_t cbAlignment(const ArchParams &a) { return a.dramReadAlignment; }

Status setUpCore(Core &core, const ProgramSpec &program) {
  const ArchParams &a = *core.arch;
  // Garbage, not zeros (see Emulator.h): every byte 0xFF, a NaN in each
  // float format.
  std::memset(core.l1, 0xFF, a.l1Size);
  uint32_t next = a.l1Reserved;
  for (const CircularBufferSpec &spec : program.circularBuffers) {
    if (spec.id >= kNumCircularBuffers)
      return errorf("circular buffer id ", spec.id, " is out of range");
    CircularBuffer &cb = core.cbs[spec.id];
    if (cb.configured)
      return errorf("circular buffer ", spec.id, " is configured twice");
    if (spec.numPages == 0 || spec.pageSize == 0)
      return errorf("circular buffer ", spec.id, " has no pages");
    if (spec.pageSize % a.l1Alignment != 0)
      return errorf("circular buffer ", spec.id, " has pages of ",
                    spec.pageSize, " bytes, not a multiple of the ",
                    a.l1Alignment, "-byte L1 alignment");
    cb.configured = true;
    cb.spec = spec;
    cb.base = core.l1 + next;
    next = alignUp(next + spec.numPages * spec.pageSize, cbAlignment(a));
  }
  if (next > a.l1Size)
    return errorf("the program's circular buffers need ", next - a.l1Reserved,
                  " bytes of L1 per core (from offset ", a.l1Reserved,
                  "), more than the ", a.l1Size - a.l1Reserved,
                  " a ", a.name, " core has for them");
  return Status::ok();
}

Status checkRuntimeArgs(const ProgramSpec &program,
                        const std::vector<std::vector<std::vector<uint32_t>>>
                            &runtimeArgs) {
  for (size_t c = 0; c < runtimeArgs.size(); ++c) {
    if (runtimeArgs[c].size() != program.kernels.size())
      return errorf("runtime arguments for ", runtimeArgs[c].size(),
                    " kernels, the program has ", program.kernels.size());
    for (size_t k = 0; k < program.kernels.size(); ++k)
      if (runtimeArgs[c][k].size() > kMaxRuntimeArgs)
        return errorf("kernel '", program.kernels[k].name, "' gets ",
                      runtimeArgs[c][k].size(), " runtime arguments on core ",
                      c, "; TT-Metalium allows ", kMaxRuntimeArgs,
                      " per kernel and core");
  }
  return Status::ok();
}

} // namespace

Status runProgram(Device &device, const ProgramSpec &program,
                  const std::vector<std::vector<std::vector<uint32_t>>>
                      &runtimeArgs,
                  unsigned parallelCores) {
  std::lock_guard<std::mutex> runLock(runMutex);
  ATTN_RETURN_IF_ERROR(checkRuntimeArgs(program, runtimeArgs));
  currentDevice = &device;
  const ArchParams &arch = archParams(device.arch());
  if (parallelCores == 0)
    parallelCores = std::max(1u, std::thread::hardware_concurrency());
  parallelCores =
      std::min<unsigned>(parallelCores, std::max<size_t>(runtimeArgs.size(), 1));

  std::atomic<size_t> nextCore{0};
  std::mutex errorMu;
  std::string firstError;
  std::atomic<bool> failed{false};

  auto worker = [&]() {
    std::string mapError;
    std::unique_ptr<L1Arena> arena = L1Arena::create(mapError);
    if (!arena) {
      std::lock_guard<std::mutex> lock(errorMu);
      if (firstError.empty())
        firstError = mapError;
      failed = true;
      return;
    }
    while (!failed) {
      size_t index = nextCore++;
      if (index >= runtimeArgs.size())
        return;
      Core core;
      core.index = unsigned(index);
      core.l1 = arena->base();
      core.arch = &arch;
      Status st = setUpCore(core, program);
      if (!st.isOk()) {
        std::lock_guard<std::mutex> lock(errorMu);
        if (firstError.empty())
          firstError = st.message();
        failed = true;
        return;
      }
      std::vector<ThreadContext> contexts(program.kernels.size());
      for (size_t k = 0; k < program.kernels.size(); ++k) {
        ThreadContext &ctx = contexts[k];
        ctx.core = &core;
        ctx.kernel = &program.kernels[k];
        ctx.args = &runtimeArgs[index][k];
        if (ctx.kernel->kind == KernelKind::Compute) {
          ctx.compute.fp32Dest = ctx.kernel->fp32DestAccEn;
          uint32_t tiles = dstCapacity(ctx.compute.fp32Dest);
          ctx.compute.dst.assign(tiles * kTileElements, 0.0f);
          ctx.compute.layout.assign(tiles, DstLayout::Empty);
        }
        core.threads.push_back(&ctx);
      }
      core.live = int(contexts.size());
      std::vector<std::thread> threads;
      for (ThreadContext &ctx : contexts)
        threads.emplace_back(runKernelThread, std::ref(ctx));
      for (std::thread &t : threads)
        t.join();
      if (core.aborted) {
        std::lock_guard<std::mutex> lock(errorMu);
        if (firstError.empty())
          firstError = core.error;
        failed = true;
      }
    }
  };

  std::vector<std::thread> workers;
  for (unsigned i = 0; i < parallelCores; ++i)
    workers.emplace_back(worker);
  for (std::thread &w : workers)
    w.join();
  currentDevice = nullptr;
  if (failed)
    return Status::error(firstError);
  return Status::ok();
}

} // namespace attn::tt

//===----------------------------------------------------------------------===//
// The device layer of the SDK declarations
//===----------------------------------------------------------------------===//

using namespace attn::tt;

namespace {

/// NOC addresses: DRAM bank b is x/y 0x8000 | b, this core's L1 is 0.
constexpr uint32_t kDramXY = 0x8000;

struct NocTarget {
  bool dram;
  uint32_t address;
  uint8_t *host;
};

/// The host memory behind a NOC address, checked against its bank or L1.
NocTarget resolveNoc(uint64_t nocAddr, uint32_t size, const char *op) {
  uint32_t xy = uint32_t(nocAddr >> 32);
  uint32_t address = uint32_t(nocAddr);
  if (xy & kDramXY) {
    uint8_t *p = currentDevice->resolve(xy & 0xff, address, size);
    if (!p)
      failf(op, ": ", size, " bytes at DRAM bank ", (xy & 0xff), " address ",
            address, " are outside the bank");
    return {true, address, p};
  }
  // A core address: only the core's own L1 is reachable in the emulator.
  uint8_t *l1 = current->core->l1;
  uintptr_t p = address;
  if (xy != 0 || p < reinterpret_cast<uintptr_t>(l1) ||
      p + size > reinterpret_cast<uintptr_t>(l1) + current->core->arch->l1Size) {
    std::ostringstream os;
    os << op << ": NOC address 0x" << std::hex << nocAddr
       << " is not in this core's L1";
    fail(os.str());
  }
  return {false, address, reinterpret_cast<uint8_t *>(p)};
}

uint8_t *resolveLocal(uint32_t address, uint32_t size, const char *op) {
  return resolveNoc(address, size, op).host;
}

/// The watcher's alignment check: the local L1 address and the remote one
/// must agree modulo the alignment of the remote side and direction.
void checkAlignment(const NocTarget &remote, uint32_t l1, bool read,
                    uint32_t size, const char *op) {
  const ArchParams &a = *current->core->arch;
  if (size == 0)
    failf(op, ": a zero-length transfer");
  uint32_t align = remote.dram ? (read ? a.dramReadAlignment
                                       : a.dramWriteAlignment)
                               : a.l1Alignment;
  if ((remote.address & (align - 1)) == (l1 & (align - 1)))
    return;
  std::ostringstream os;
  os << op << ": " << (remote.dram ? "DRAM" : "L1") << " address 0x"
     << std::hex << remote.address << " and L1 address 0x" << l1 << std::dec
     << " differ modulo " << align << " (the " << a.name << " NOC "
     << (remote.dram ? (read ? "DRAM read" : "DRAM write") : "L1")
     << " alignment); the debug watcher stops the device on this "
        "(DebugSanitizeNocAlignment)";
  fail(os.str());
}

} // namespace

namespace attn_tt_device {

uint32_t runtime_arg(int index) {
  const std::vector<uint32_t> &args = *current->args;
  if (index < 0 || uint32_t(index) >= args.size())
    failf("get_arg_val(", index, "): only ", args.size(),
          " runtime arguments were set");
  return args[index];
}

uint32_t common_runtime_arg(int index) {
  failf("get_common_arg_val(", index,
        "): common runtime arguments are not emulated");
}

void cb_reserve_back(int32_t cbId, int32_t n) {
  CircularBuffer &cb = cbOrFail(cbId, "cb_reserve_back");
  Core &core = *current->core;
  std::unique_lock<std::mutex> lock(core.mu);
  if (n <= 0 || uint32_t(n) > cb.spec.numPages ||
      (cb.pushed % cb.spec.numPages) + n > cb.spec.numPages)
    failThreadLocked(core, cbOp("cb_reserve_back", cbId, n) + " does not fit " +
                               "a buffer of " +
                               std::to_string(cb.spec.numPages) +
                               " pages without wrapping");
  blockUntil(
      core, lock, [&] { return cb.free() >= uint32_t(n); },
      cbOp("cb_reserve_back", cbId, n) + ": " + std::to_string(cb.free()) +
          " of " + std::to_string(cb.spec.numPages) + " pages free");
  cb.reserved = std::max(cb.reserved, uint32_t(n));
}

void cb_push_back(int32_t cbId, int32_t n) {
  CircularBuffer &cb = cbOrFail(cbId, "cb_push_back");
  Core &core = *current->core;
  std::lock_guard<std::mutex> lock(core.mu);
  if (n <= 0 || uint32_t(n) > cb.free())
    failThreadLocked(core, cbOp("cb_push_back", cbId, n) +
                               " pushes more pages than are free");
  cb.pushed += n;
  cb.reserved = cb.reserved > uint32_t(n) ? cb.reserved - n : 0;
  cb.packed = 0;
  stateChanged(core);
}

void cb_wait_front(int32_t cbId, int32_t n) {
  CircularBuffer &cb = cbOrFail(cbId, "cb_wait_front");
  Core &core = *current->core;
  std::unique_lock<std::mutex> lock(core.mu);
  if (n <= 0 || uint32_t(n) > cb.spec.numPages)
    failThreadLocked(core, cbOp("cb_wait_front", cbId, n) +
                               " waits for more pages than the buffer has");
  blockUntil(
      core, lock, [&] { return cb.available() >= uint32_t(n); },
      cbOp("cb_wait_front", cbId, n) + ": " + std::to_string(cb.available()) +
          " page(s) pushed");
}

void cb_pop_front(int32_t cbId, int32_t n) {
  CircularBuffer &cb = cbOrFail(cbId, "cb_pop_front");
  Core &core = *current->core;
  std::lock_guard<std::mutex> lock(core.mu);
  if (n <= 0 || uint32_t(n) > cb.available())
    failThreadLocked(core, cbOp("cb_pop_front", cbId, n) + " pops " +
                               "more pages than are at the front");
  cb.popped += n;
  stateChanged(core);
}

uint32_t cb_write_ptr(uint32_t cbId) {
  CircularBuffer &cb = cbOrFail(int32_t(cbId), "get_write_ptr");
  return uint32_t(reinterpret_cast<uintptr_t>(cb.page(cb.pushed)));
}

uint32_t cb_read_ptr(uint32_t cbId) {
  CircularBuffer &cb = cbOrFail(int32_t(cbId), "get_read_ptr");
  return uint32_t(reinterpret_cast<uintptr_t>(cb.page(cb.popped)));
}

uint64_t dram_bank_noc_addr(uint32_t bank, uint32_t offset, uint8_t) {
  if (bank >= currentDevice->numBanks())
    failf("get_noc_addr_from_bank_id: DRAM bank ", bank, " does not exist (",
          currentDevice->numBanks(), " banks on ",
          toString(currentDevice->arch()), ")");
  return (uint64_t(kDramXY | bank) << 32) | offset;
}

uint64_t local_noc_addr(uint32_t l1Addr, uint8_t) { return l1Addr; }

uint64_t interleaved_noc_addr(bool dram, uint32_t base, uint32_t pageSize,
                              uint32_t page, uint32_t offset, uint8_t noc) {
  if (!dram)
    failf("interleaved L1 buffers are not emulated");
  uint32_t banks = currentDevice->numBanks();
  return dram_bank_noc_addr(page % banks, base + (page / banks) * pageSize +
                                              offset,
                            noc);
}

uint32_t allocator_alignment(bool dram) {
  const ArchParams &a = archParams(currentDevice->arch());
  return dram ? a.dramReadAlignment : a.l1Alignment;
}

void noc_read(uint64_t src, uint32_t dst, uint32_t size, uint8_t) {
  NocTarget from = resolveNoc(src, size, "noc_async_read");
  checkAlignment(from, dst, /*read=*/true, size, "noc_async_read");
  std::memcpy(resolveLocal(dst, size, "noc_async_read"), from.host, size);
}

void noc_write(uint32_t src, uint64_t dst, uint32_t size, uint8_t) {
  NocTarget to = resolveNoc(dst, size, "noc_async_write");
  checkAlignment(to, src, /*read=*/false, size, "noc_async_write");
  std::memcpy(to.host, resolveLocal(src, size, "noc_async_write"), size);
}

// Transfers complete when issued; barriers only mark the order.
void noc_read_barrier(uint8_t) {}
void noc_write_barrier(uint8_t) {}

//===--- Compute ------------------------------------------------------------===//

void hw_startup(uint32_t srcA, uint32_t srcB, uint32_t ocb, bool matmulOrder) {
  ComputeState &s = computeState("compute_kernel_hw_startup");
  s.srcA = cbOrFail(int32_t(srcA), "compute_kernel_hw_startup").spec.format;
  s.srcB = cbOrFail(int32_t(srcB), "compute_kernel_hw_startup").spec.format;
  s.pack = cbOrFail(int32_t(ocb), "compute_kernel_hw_startup").spec.format;
  s.srcACb = srcA;
  s.srcBCb = srcB;
  s.packCb = ocb;
  s.matmulOrder = matmulOrder;
  s.started = true;
}

void reconfig_srca(uint32_t cb) {
  ComputeState &s = startedState("reconfig_data_format_srca");
  s.srcA = cbOrFail(int32_t(cb), "reconfig_data_format_srca").spec.format;
  s.srcACb = cb;
}

void reconfig_srcb(uint32_t cb) {
  ComputeState &s = startedState("reconfig_data_format_srcb");
  s.srcB = cbOrFail(int32_t(cb), "reconfig_data_format_srcb").spec.format;
  s.srcBCb = cb;
}

void reconfig_pack(uint32_t cb) {
  ComputeState &s = startedState("pack_reconfig_data_format");
  s.pack = cbOrFail(int32_t(cb), "pack_reconfig_data_format").spec.format;
  s.packCb = cb;
}

void regs_acquire() {
  ComputeState &s = computeState("tile_regs_acquire");
  if (s.regs != RegState::Released)
    failf("tile_regs_acquire while the destination registers are still "
          "held (missing tile_regs_release?)");
  s.regs = RegState::Acquired;
  std::fill(s.dst.begin(), s.dst.end(), 0.0f);
  std::fill(s.layout.begin(), s.layout.end(), DstLayout::Empty);
}

/// SDK call `op` moves the destination registers from `from`, where the
/// call `previous` left them, to `to`; any other state is an error.
void advanceRegs(const char *op, const char *previous, RegState from,
                 RegState to) {
  ComputeState &s = computeState(op);
  if (s.regs != from)
    failf(op, " without ", previous);
  s.regs = to;
}

void regs_commit() {
  advanceRegs("tile_regs_commit", "tile_regs_acquire", RegState::Acquired,
              RegState::Committed);
}

void regs_wait() {
  advanceRegs("tile_regs_wait", "tile_regs_commit", RegState::Committed,
              RegState::Waited);
}

void regs_release() {
  advanceRegs("tile_regs_release", "tile_regs_wait", RegState::Waited,
              RegState::Released);
}

void regs_acquire_dst() {
  regs_acquire();
  current->compute.regs = RegState::AcquiredDst;
}

void regs_release_dst() {
  advanceRegs("release_dst", "acquire_dst", RegState::AcquiredDst,
              RegState::Released);
}

void copy_init(uint32_t cb, uint32_t transpose, uint32_t withinFace) {
  ComputeState &s = startedState("copy_tile_to_dst_init_short");
  cbOrFail(int32_t(cb), "copy_tile_to_dst_init_short");
  FpuInit init;
  init.kind = FpuInit::Copy;
  init.transpose = transpose;
  init.transposeWithinFace = withinFace;
  setInit(s, init, "copy_tile_to_dst_init_short");
}

void copy_tile(uint32_t cb, uint32_t tile, uint32_t idst) {
  ComputeState &s = startedState("copy_tile");
  requireInit(
      s, FpuInit::Copy, [](const FpuInit &) { return true; }, "copy_tile",
      "copy_tile_to_dst_init_short");
  checkUnpack(s, Src::A, cb, "copy_tile");
  float *d = dstTile(s, idst, "copy_tile");
  float a[kTileElements];
  unpackTile(int32_t(cb), tile, a, "copy_tile");
  bool faces = s.fpu.transpose || s.fpu.transposeWithinFace;
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) {
      uint32_t sr = r, sc = c;
      if (s.fpu.transpose) {
        sr = c;
        sc = r;
      } else if (s.fpu.transposeWithinFace) {
        sr = (r / 16) * 16 + c % 16;
        sc = (c / 16) * 16 + r % 16;
      }
      d[r * 32 + c] = a[sr * 32 + sc];
    }
  s.layout[idst] = faces && !s.fpu.transpose ? DstLayout::FacesTransposed
                                             : DstLayout::Rows;
  settleDst(s, d);
}

void matmul_init(uint32_t in0, uint32_t in1, uint32_t transpose) {
  ComputeState &s = startedState("matmul_init");
  cbOrFail(int32_t(in0), "matmul_init");
  cbOrFail(int32_t(in1), "matmul_init");
  // tt-metal's matmul.h: the one-time setup programs each source register
  // (formats, tile and face sizes) for the operand the start-up maps to it,
  // and matmul_init re-programs neither; matmul reads in0 from source B.
  if (!s.matmulOrder)
    failf("matmul_init(", in0, ", ", in1,
          ") in a kernel started with compute_kernel_hw_startup in the "
          "regular source order; matmul unpacks in0 to source B and in1 to "
          "source A, so the kernel must start with "
          "compute_kernel_hw_startup<SrcOrder::Reverse>(in0, in1, out)");
  FpuInit init;
  init.kind = FpuInit::Matmul;
  init.transpose = transpose;
  setInit(s, init, "matmul_init");
}

void matmul_tiles(uint32_t in0, uint32_t in1, uint32_t t0, uint32_t t1,
                  uint32_t idst) {
  ComputeState &s = startedState("matmul_tiles");
  requireInit(
      s, FpuInit::Matmul, [](const FpuInit &) { return true; },
      "matmul_tiles", "matmul_init");
  // Matmul unpacks in0 to source B and in1 to source A.
  checkUnpack(s, Src::B, in0, "matmul_tiles");
  checkUnpack(s, Src::A, in1, "matmul_tiles");
  float *d = dstTile(s, idst, "matmul_tiles");
  float a[kTileElements], b[kTileElements];
  unpackTile(int32_t(in0), t0, a, "matmul_tiles");
  unpackTile(int32_t(in1), t1, b, "matmul_tiles");
  bool transpose = s.fpu.transpose != 0;
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) {
      float acc = d[r * 32 + c];
      for (uint32_t k = 0; k < 32; ++k)
        acc += a[r * 32 + k] * (transpose ? b[c * 32 + k] : b[k * 32 + c]);
      d[r * 32 + c] = acc;
    }
  s.layout[idst] = DstLayout::Rows;
  settleDst(s, d);
}

void binary_init(EltwiseBinaryType type, BroadcastType bcast, uint32_t icb0,
                 uint32_t icb1) {
  const char *name =
      bcast == BroadcastType::COL ? "*_bcast_cols_init" : "*_init";
  ComputeState &s = startedState(name);
  cbOrFail(int32_t(icb0), name);
  cbOrFail(int32_t(icb1), name);
  FpuInit init;
  init.kind = FpuInit::Binary;
  init.type = type;
  init.bcast = bcast;
  setInit(s, init,
          std::string(binaryName(type)) +
              (bcast == BroadcastType::COL ? "_bcast_cols_init" : "_init"));
}

void binary_tiles(EltwiseBinaryType type, BroadcastType bcast, uint32_t cb0,
                  uint32_t cb1, uint32_t tile0, uint32_t tile1,
                  uint32_t idst) {
  std::string op = std::string(binaryName(type)) +
                   (bcast == BroadcastType::COL ? "_tiles_bcast_cols"
                                                : "_tiles");
  std::string init = std::string(binaryName(type)) +
                     (bcast == BroadcastType::COL ? "_bcast_cols_init" : "_init");
  ComputeState &s = startedState(op.c_str());
  requireInit(
      s, FpuInit::Binary,
      [&](const FpuInit &i) { return i.type == type && i.bcast == bcast; },
      op.c_str(), init.c_str());
  checkUnpack(s, Src::A, cb0, op.c_str());
  checkUnpack(s, Src::B, cb1, op.c_str());
  float *d = dstTile(s, idst, op.c_str());
  float a[kTileElements], b[kTileElements];
  unpackTile(int32_t(cb0), tile0, a, op.c_str());
  unpackTile(int32_t(cb1), tile1, b, op.c_str());
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) {
      float bv = b[r * 32 + c];
      if (bcast == BroadcastType::COL)
        bv = b[r * 32];
      else if (bcast == BroadcastType::ROW)
        bv = b[c];
      else if (bcast == BroadcastType::SCALAR)
        bv = b[0];
      d[r * 32 + c] = applyBinary(type, a[r * 32 + c], bv);
    }
  s.layout[idst] = DstLayout::Rows;
  settleDst(s, d);
}

void dest_reuse_init(EltwiseBinaryType type, EltwiseBinaryReuseDestType reuse,
                     uint32_t icb) {
  std::string name = std::string(binaryName(type)) + "_reuse_dest_init";
  ComputeState &s = startedState(name.c_str());
  cbOrFail(int32_t(icb), name.c_str());
  FpuInit init;
  init.kind = FpuInit::DestReuse;
  init.type = type;
  init.reuse = reuse;
  setInit(s, init, name);
}

void dest_reuse_tiles(EltwiseBinaryType type,
                      EltwiseBinaryReuseDestType reuse, uint32_t cb,
                      uint32_t tile, uint32_t idst) {
  std::string name = std::string(binaryName(type)) + "_reuse_dest_tiles";
  std::string init = std::string(binaryName(type)) + "_reuse_dest_init";
  const char *op = name.c_str();
  ComputeState &s = startedState(op);
  requireInit(
      s, FpuInit::DestReuse,
      [&](const FpuInit &i) { return i.type == type && i.reuse == reuse; },
      op, (init + " of the same reuse").c_str());
  if (reuse == EltwiseBinaryReuseDestType::NONE)
    failf(op, " with EltwiseBinaryReuseDestType::NONE reuses no operand");
  // The buffer's tile goes to the source register DST does not.
  bool toA = reuse == EltwiseBinaryReuseDestType::DEST_TO_SRCB;
  checkUnpack(s, toA ? Src::A : Src::B, cb, op);
  float *d = dstTile(s, idst, op);
  float b[kTileElements];
  unpackTile(int32_t(cb), tile, b, op);
  for (uint32_t i = 0; i < kTileElements; ++i)
    d[i] = toA ? applyBinary(type, b[i], d[i]) : applyBinary(type, d[i], b[i]);
  s.layout[idst] = DstLayout::Rows;
  settleDst(s, d);
}

void reduce_init(PoolType pool, ReduceDim dim, uint32_t icb, uint32_t scaler,
                 uint32_t ocb) {
  ComputeState &s = startedState("reduce_init");
  for (uint32_t cb : {icb, scaler, ocb})
    cbOrFail(int32_t(cb), "reduce_init");
  if (pool != PoolType::SUM && pool != PoolType::MAX)
    failf("reduce_init: only SUM and MAX reductions are emulated");
  FpuInit init;
  init.kind = FpuInit::Reduce;
  init.pool = pool;
  init.dim = dim;
  setInit(s, init, "reduce_init");
  s.reduceMasks = true;
  s.maskDim = dim;
}

void reduce_uninit() {
  ComputeState &s = startedState("reduce_uninit");
  s.reduceMasks = false;
}

void reduce_tile(PoolType pool, ReduceDim dim, uint32_t cb, uint32_t scalerCb,
                 uint32_t tile, uint32_t scalerTile, uint32_t idst) {
  const char *op = "reduce_tile";
  ComputeState &s = startedState(op);
  requireInit(
      s, FpuInit::Reduce,
      [&](const FpuInit &i) { return i.pool == pool && i.dim == dim; }, op,
      "reduce_init with the same reduce type and dimension");
  checkUnpack(s, Src::A, cb, op);
  checkUnpack(s, Src::B, scalerCb, op);
  float *d = dstTile(s, idst, op);
  if (dim == ReduceDim::REDUCE_ROW && s.layout[idst] == DstLayout::Rows)
    failf(op, "<REDUCE_ROW> accumulates into destination tile ", idst,
          ", which holds a tile in row layout; the device accumulates row "
          "reductions with each 16x16 face transposed, so the result would "
          "mix layouts (copy the tile with transpose_within_16x16_face, or "
          "reduce into an empty tile and combine with binary_max_tile)");
  float a[kTileElements], scale[kTileElements];
  unpackTile(int32_t(cb), tile, a, op);
  unpackTile(int32_t(scalerCb), scalerTile, scale, op);
  float scaler = scale[0];
  bool isMax = pool == PoolType::MAX;
  auto combine = [&](float into, float v) {
    return isMax ? std::max(into, v) : into + v;
  };
  auto reduceRange = [&](uint32_t r0, uint32_t r1, uint32_t c0, uint32_t c1) {
    float acc = isMax ? -INFINITY : 0.0f;
    for (uint32_t r = r0; r < r1; ++r)
      for (uint32_t c = c0; c < c1; ++c)
        acc = combine(acc, a[r * 32 + c] * scaler);
    return acc;
  };
  float out[kTileElements] = {};
  if (dim == ReduceDim::REDUCE_ROW) {
    // The previous value of row r sits where a face-transposed copy puts
    // element (r, 0): row 16 * (r / 16), column r % 16.
    for (uint32_t r = 0; r < 32; ++r)
      out[r * 32] = combine(d[(r / 16) * 16 * 32 + r % 16],
                            reduceRange(r, r + 1, 0, 32));
  } else if (dim == ReduceDim::REDUCE_COL) {
    for (uint32_t c = 0; c < 32; ++c)
      out[c] = combine(d[c], reduceRange(0, 32, c, c + 1));
  } else {
    out[0] = combine(d[0], reduceRange(0, 32, 0, 32));
  }
  std::memcpy(d, out, sizeof(out));
  s.layout[idst] = DstLayout::Rows;
  settleDst(s, d);
}

void sfpu_init(Sfpu op) {
  ComputeState &s = startedState((std::string(sfpuName(op)) + "_init").c_str());
  s.sfpu = op;
}

void sfpu_unary(Sfpu op, uint32_t idst) {
  ComputeState &s = startedState(sfpuName(op));
  requireSfpu(s, op);
  float *d = dstTile(s, idst, sfpuName(op));
  for (uint32_t i = 0; i < kTileElements; ++i) {
    float v = d[i];
    switch (op) {
    case Sfpu::Exp:
      v = std::exp(v);
      break;
    case Sfpu::Recip:
      v = 1.0f / v;
      break;
    case Sfpu::Log:
      v = std::log(v);
      break;
    case Sfpu::Tanh:
      v = std::tanh(v);
      break;
    default:
      failf(sfpuName(op), " is not a unary SFPU operation");
    }
    d[i] = v;
  }
  if (s.layout[idst] == DstLayout::Empty)
    s.layout[idst] = DstLayout::Rows;
  settleDst(s, d);
}

void sfpu_scalar(ScalarOp op, uint32_t idst, uint32_t bits) {
  const char *name = "binop_with_scalar (add/sub/mul/div_unary_tile)";
  ComputeState &s = startedState(name);
  requireSfpu(s, Sfpu::BinopWithScalar);
  float *d = dstTile(s, idst, name);
  float p = bitsToFloat(bits);
  for (uint32_t i = 0; i < kTileElements; ++i) {
    switch (op) {
    case ScalarOp::Add:
      d[i] += p;
      break;
    case ScalarOp::Sub:
      d[i] -= p;
      break;
    case ScalarOp::Mul:
      d[i] *= p;
      break;
    case ScalarOp::Div:
      d[i] /= p;
      break;
    }
  }
  if (s.layout[idst] == DstLayout::Empty)
    s.layout[idst] = DstLayout::Rows;
  settleDst(s, d);
}

void sfpu_binary_max(uint32_t idst0, uint32_t idst1, uint32_t odst) {
  ComputeState &s = startedState("binary_max_tile");
  requireSfpu(s, Sfpu::BinaryMax);
  float *a = dstTile(s, idst0, "binary_max_tile");
  float *b = dstTile(s, idst1, "binary_max_tile");
  float *o = dstTile(s, odst, "binary_max_tile");
  for (uint32_t i = 0; i < kTileElements; ++i)
    o[i] = std::max(a[i], b[i]);
  s.layout[odst] = DstLayout::Rows;
  settleDst(s, o);
}

void pack_tile(uint32_t idst, uint32_t cbId, bool outOfOrder,
               uint32_t tileIndex) {
  ComputeState &s = startedState("pack_tile");
  if (s.regs != RegState::Waited && s.regs != RegState::AcquiredDst)
    failf("pack_tile reads destination registers outside tile_regs_wait .. "
          "tile_regs_release");
  uint32_t capacity = dstCapacity(s.fp32Dest);
  if (idst >= capacity)
    failf("pack_tile: destination tile ", idst, " is out of range: ",
          capacity, " tiles with ", s.fp32Dest ? "fp32" : "16-bit",
          " accumulation (half-sync)");
  CircularBuffer &cb = cbOrFail(int32_t(cbId), "pack_tile");
  if (cb.spec.format != s.pack)
    failf("pack_tile into cb ", cbId, " (", toString(cb.spec.format),
          ") with the packer configured for ", toString(s.pack), " (from cb ",
          s.packCb, "); call pack_reconfig_data_format first");
  if (s.reduceMasks && s.fpu.kind != FpuInit::Reduce)
    failf("pack_tile with the packer edge masks of reduce_init still set "
          "(last init: ",
          s.fpuInitName, "); call reduce_uninit after the reduction");
  const float *d = s.dst.data() + idst * kTileElements;
  Core &core = *current->core;
  uint32_t position;
  {
    std::lock_guard<std::mutex> lock(core.mu);
    position = outOfOrder ? tileIndex : cb.packed;
    if (position >= cb.reserved)
      failThreadLocked(core, "pack_tile into cb " + std::to_string(cbId) +
                                 " tile " + std::to_string(position) +
                                 ", but " + std::to_string(cb.reserved) +
                                 " are reserved (missing cb_reserve_back?)");
    if (!outOfOrder)
      ++cb.packed;
  }
  uint8_t *page = cb.page(cb.pushed + position);
  uint32_t esz = elementSize(cb.spec.format);
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) {
      float v = d[r * 32 + c];
      // The reduce masks keep the reduced column (or row) only.
      if (s.reduceMasks && ((s.maskDim == ReduceDim::REDUCE_ROW && c != 0) ||
                            (s.maskDim == ReduceDim::REDUCE_COL && r != 0) ||
                            (s.maskDim == ReduceDim::REDUCE_SCALAR && (r | c) != 0)))
        v = 0.0f;
      storeElement(page + faceOffset(r, c) * esz, cb.spec.format, v);
    }
}

} // namespace attn_tt_device

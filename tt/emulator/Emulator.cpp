//===- Emulator.cpp - A host emulator of a Tenstorrent device ------------===//
//
// The device model (DRAM banks, per-core L1 with circular buffers, one thread
// per kernel) and the kernel API of include/attn_tt_api.h on top of it.
//
// Kernel code cannot return an error from an API call, so a failing call
// (deadlock, bad address, bad buffer id) records the message on its core and
// unwinds the kernel thread with a private exception that the thread's entry
// catches; nothing else in the runtime uses exceptions.
//
//===----------------------------------------------------------------------===//
#include "runtime/executors/tt/Emulator.h"

#include "attn_tt_api.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <sys/mman.h>
#include <thread>

namespace attn::tt {

uint32_t elementSize(DataFormat format) {
  return format == DataFormat::Float32 ? 4 : 2;
}

Result<DataFormat> parseDataFormat(const std::string &name) {
  if (name == "Float32")
    return DataFormat::Float32;
  if (name == "Float16_b")
    return DataFormat::Float16_b;
  return errorf("unknown data format '", name, "'");
}

const char *toString(KernelKind kind) {
  switch (kind) {
  case KernelKind::Reader:
    return "reader";
  case KernelKind::Writer:
    return "writer";
  case KernelKind::Compute:
    return "compute";
  }
  return "?";
}

static uint32_t alignUp(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

//===----------------------------------------------------------------------===//
// DRAM
//===----------------------------------------------------------------------===//

Device::Device() : next_(kDramAlignment), banks_(kNumDramBanks) {}

Buffer Device::allocate(uint32_t pageSize, uint32_t numPages) {
  Buffer b;
  b.address = next_;
  b.pageSize = pageSize;
  b.numPages = numPages;
  uint32_t pagesPerBank = (numPages + kNumDramBanks - 1) / kNumDramBanks;
  next_ += std::max<uint32_t>(pagesPerBank, 1) *
           alignUp(pageSize, kDramAlignment);
  for (auto &bank : banks_)
    bank.resize(next_, 0);
  return b;
}

static uint32_t pageAddress(uint32_t base, uint32_t pageSize, uint32_t page) {
  return base + (page / kNumDramBanks) * alignUp(pageSize, kDramAlignment);
}

void Device::writePage(const Buffer &buffer, uint32_t page, const void *data) {
  std::memcpy(resolve(page % kNumDramBanks,
                      pageAddress(buffer.address, buffer.pageSize, page),
                      buffer.pageSize),
              data, buffer.pageSize);
}

void Device::readPage(const Buffer &buffer, uint32_t page, void *data) const {
  const auto &bank = banks_[page % kNumDramBanks];
  std::memcpy(data,
              bank.data() + pageAddress(buffer.address, buffer.pageSize, page),
              buffer.pageSize);
}

uint8_t *Device::resolve(uint32_t bank, uint32_t address, uint32_t size) {
  if (bank >= banks_.size() ||
      uint64_t(address) + size > banks_[bank].size())
    return nullptr;
  return banks_[bank].data() + address;
}

//===----------------------------------------------------------------------===//
// L1: kernels hold L1 addresses in 32-bit integers, as on the device, so each
// core's L1 is mapped below 2 GiB where such an integer is a host pointer.
//===----------------------------------------------------------------------===//

namespace {

class L1Arena {
public:
  static std::unique_ptr<L1Arena> create(std::string &error) {
    void *p = MAP_FAILED;
#if defined(__x86_64__) && defined(MAP_32BIT)
    p = mmap(nullptr, kL1Size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
#endif
    // Elsewhere: ask for low addresses until one is granted.
    for (uintptr_t hint = 0x10000000; p == MAP_FAILED && hint < 0x7f000000;
         hint += 0x1000000) {
      void *q = mmap(reinterpret_cast<void *>(hint), kL1Size,
                     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                     0);
      if (q == MAP_FAILED)
        continue;
      if (reinterpret_cast<uintptr_t>(q) + kL1Size <= 0x7fffffffu) {
        p = q;
        break;
      }
      munmap(q, kL1Size);
    }
    if (p == MAP_FAILED) {
      error = "cannot map an emulated L1 below 2 GiB";
      return nullptr;
    }
    return std::unique_ptr<L1Arena>(new L1Arena(static_cast<uint8_t *>(p)));
  }
  ~L1Arena() { munmap(base_, kL1Size); }
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

struct ThreadContext;

struct Core {
  unsigned index = 0;
  uint8_t *l1 = nullptr;
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
  // Compute only.
  std::vector<float> dst;
  bool fp32Dest = true;
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

[[noreturn]] void fail(const std::string &message) {
  Core &core = *current->core;
  std::lock_guard<std::mutex> lock(core.mu);
  failLocked(core, "core " + std::to_string(core.index) + ", " +
                       threadName(*current) + ": " + message);
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
    core.cv.wait(lock,
                 [&] { return core.epoch != epoch || core.aborted; });
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
      !current->core->cbs[id].configured) {
    std::ostringstream os;
    os << op << ": circular buffer " << id << " is not configured";
    fail(os.str());
  }
  return current->core->cbs[id];
}

std::string cbOp(const char *op, int32_t cb, int32_t n) {
  std::ostringstream os;
  os << op << "(cb " << cb << ", " << n << " tile(s))";
  return os.str();
}

ThreadContext &computeContext(const char *op) {
  if (current->kernel->kind != KernelKind::Compute)
    fail(std::string(op) + " is a compute API call");
  return *current;
}

float bf16ToFloat(uint16_t bits) {
  uint32_t w = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t w;
  std::memcpy(&w, &f, 4);
  if ((w & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((w >> 16) | 0x40);
  w += 0x7fffu + ((w >> 16) & 1);
  return uint16_t(w >> 16);
}

float roundToBf16(float f) { return bf16ToFloat(floatToBf16(f)); }

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
      failLocked(core, "core " + std::to_string(core.index) + ", " +
                           threadName(*current) + ": " + os.str());
    }
  }
  const uint8_t *page = cb.page(cb.popped + index);
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) {
      uint32_t at = faceOffset(r, c);
      float v;
      if (cb.spec.format == DataFormat::Float32) {
        std::memcpy(&v, page + at * 4, 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, page + at * 2, 2);
        v = bf16ToFloat(bits);
      }
      out[r * 32 + c] = v;
    }
}

float *dstTile(uint32_t idst, const char *op) {
  ThreadContext &t = computeContext(op);
  if (idst >= 16)
    fail(std::string(op) + ": destination tile " + std::to_string(idst) +
         " is out of range (16 tiles)");
  return t.dst.data() + idst * kTileElements;
}

/// Rounds a destination tile the way a 16-bit destination holds it.
void settleDst(float *tile) {
  if (current->fp32Dest)
    return;
  for (uint32_t i = 0; i < kTileElements; ++i)
    tile[i] = roundToBf16(tile[i]);
}

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

Status setUpCore(Core &core, const ProgramSpec &program) {
  std::memset(core.l1, 0, kL1Size);
  // The first 64 KiB stand for the firmware's reserved region.
  uint32_t next = 64 * 1024;
  for (const CircularBufferSpec &spec : program.circularBuffers) {
    if (spec.id >= kNumCircularBuffers)
      return errorf("circular buffer id ", spec.id, " is out of range");
    CircularBuffer &cb = core.cbs[spec.id];
    if (cb.configured)
      return errorf("circular buffer ", spec.id, " is configured twice");
    if (spec.numPages == 0 || spec.pageSize == 0)
      return errorf("circular buffer ", spec.id, " has no pages");
    cb.configured = true;
    cb.spec = spec;
    cb.base = core.l1 + next;
    next += alignUp(spec.numPages * spec.pageSize, 32);
    if (next > kL1Size)
      return errorf("circular buffers need ", next, " bytes of L1, a core has ",
                    kL1Size);
  }
  return Status::ok();
}

} // namespace

Status runProgram(Device &device, const ProgramSpec &program,
                  const std::vector<std::vector<std::vector<uint32_t>>>
                      &runtimeArgs,
                  unsigned parallelCores) {
  std::lock_guard<std::mutex> runLock(runMutex);
  currentDevice = &device;
  for (const auto &core : runtimeArgs)
    if (core.size() != program.kernels.size())
      return errorf("runtime arguments for ", core.size(),
                    " kernels, the program has ", program.kernels.size());
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
          ctx.dst.assign(16 * kTileElements, 0.0f);
          ctx.fp32Dest = ctx.kernel->fp32DestAccEn;
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
// The kernel API
//===----------------------------------------------------------------------===//

using namespace attn::tt;

uint32_t attn_tt_get_arg(uint32_t index) {
  const std::vector<uint32_t> &args = *current->args;
  if (index >= args.size())
    fail("get_arg_val(" + std::to_string(index) + "): only " +
         std::to_string(args.size()) + " runtime arguments were set");
  return args[index];
}

void cb_reserve_back(int32_t cbId, int32_t n) {
  CircularBuffer &cb = cbOrFail(cbId, "cb_reserve_back");
  Core &core = *current->core;
  std::unique_lock<std::mutex> lock(core.mu);
  if (n <= 0 || uint32_t(n) > cb.spec.numPages ||
      (cb.pushed % cb.spec.numPages) + n > cb.spec.numPages)
    failLocked(core, "core " + std::to_string(core.index) + ", " +
                         threadName(*current) + ": " +
                         cbOp("cb_reserve_back", cbId, n) + " does not fit " +
                         "a buffer of " + std::to_string(cb.spec.numPages) +
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
    failLocked(core, "core " + std::to_string(core.index) + ", " +
                         threadName(*current) + ": " +
                         cbOp("cb_push_back", cbId, n) +
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
    failLocked(core, "core " + std::to_string(core.index) + ", " +
                         threadName(*current) + ": " +
                         cbOp("cb_wait_front", cbId, n) +
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
    failLocked(core, "core " + std::to_string(core.index) + ", " +
                         threadName(*current) + ": " +
                         cbOp("cb_pop_front", cbId, n) + " pops " +
                         "more pages than are at the front");
  cb.popped += n;
  stateChanged(core);
}

uint32_t get_write_ptr(uint32_t cbId) {
  CircularBuffer &cb = cbOrFail(int32_t(cbId), "get_write_ptr");
  return uint32_t(reinterpret_cast<uintptr_t>(cb.page(cb.pushed)));
}

uint32_t get_read_ptr(uint32_t cbId) {
  CircularBuffer &cb = cbOrFail(int32_t(cbId), "get_read_ptr");
  return uint32_t(reinterpret_cast<uintptr_t>(cb.page(cb.popped)));
}

uint64_t attn_tt_interleaved_noc_addr(bool dram, uint32_t bankBase,
                                      uint32_t pageSize, uint32_t pageId,
                                      uint32_t offset) {
  if (!dram)
    fail("interleaved L1 buffers are not emulated");
  uint32_t bank = pageId % kNumDramBanks;
  uint64_t address = uint64_t(pageAddress(bankBase, pageSize, pageId)) + offset;
  return (uint64_t(0x8000 | bank) << 32) | address;
}

namespace {

/// The host memory behind a NOC address, checked against its bank or L1.
uint8_t *resolveNoc(uint64_t nocAddr, uint32_t size, const char *op) {
  uint32_t xy = uint32_t(nocAddr >> 32);
  uint32_t address = uint32_t(nocAddr);
  if (xy & 0x8000) {
    uint8_t *p = currentDevice->resolve(xy & 0xff, address, size);
    if (!p) {
      std::ostringstream os;
      os << op << ": " << size << " bytes at DRAM bank " << (xy & 0xff)
         << " address " << address << " are outside the bank";
      fail(os.str());
    }
    return p;
  }
  // A core address: only the core's own L1 is reachable in the emulator.
  uint8_t *l1 = current->core->l1;
  uintptr_t p = address;
  if (xy != 0 || p < reinterpret_cast<uintptr_t>(l1) ||
      p + size > reinterpret_cast<uintptr_t>(l1) + kL1Size) {
    std::ostringstream os;
    os << op << ": NOC address 0x" << std::hex << nocAddr
       << " is not in this core's L1";
    fail(os.str());
  }
  return reinterpret_cast<uint8_t *>(p);
}

uint8_t *resolveLocal(uint32_t address, uint32_t size, const char *op) {
  return resolveNoc(address, size, op);
}

} // namespace

void noc_async_read(uint64_t src, uint32_t dst, uint32_t size) {
  std::memcpy(resolveLocal(dst, size, "noc_async_read"),
              resolveNoc(src, size, "noc_async_read"), size);
}

void noc_async_write(uint32_t src, uint64_t dst, uint32_t size) {
  std::memcpy(resolveNoc(dst, size, "noc_async_write"),
              resolveLocal(src, size, "noc_async_write"), size);
}

void noc_async_read_barrier() {}
void noc_async_write_barrier() {}

void tile_regs_acquire() {
  ThreadContext &t = computeContext("tile_regs_acquire");
  std::fill(t.dst.begin(), t.dst.end(), 0.0f);
}
void tile_regs_commit() { computeContext("tile_regs_commit"); }
void tile_regs_wait() { computeContext("tile_regs_wait"); }
void tile_regs_release() { computeContext("tile_regs_release"); }

void matmul_tiles(uint32_t in0Cb, uint32_t in1Cb, uint32_t in0Tile,
                  uint32_t in1Tile, uint32_t idst, uint32_t transpose) {
  float *d = dstTile(idst, "matmul_tiles");
  float a[kTileElements], b[kTileElements];
  unpackTile(int32_t(in0Cb), in0Tile, a, "matmul_tiles");
  unpackTile(int32_t(in1Cb), in1Tile, b, "matmul_tiles");
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) {
      float acc = d[r * 32 + c];
      for (uint32_t k = 0; k < 32; ++k)
        acc += a[r * 32 + k] * (transpose ? b[c * 32 + k] : b[k * 32 + c]);
      d[r * 32 + c] = acc;
    }
  settleDst(d);
}

void copy_tile(uint32_t cb, uint32_t tile, uint32_t idst) {
  float *d = dstTile(idst, "copy_tile");
  unpackTile(int32_t(cb), tile, d, "copy_tile");
  settleDst(d);
}

static float applyBinary(EltwiseBinaryType type, float a, float b) {
  switch (type) {
  case EltwiseBinaryType::ELWADD:
    return a + b;
  case EltwiseBinaryType::ELWSUB:
    return a - b;
  case EltwiseBinaryType::ELWMUL:
    return a * b;
  case EltwiseBinaryType::ELWDIV:
    return a / b;
  }
  return 0;
}

void attn_tt_binary(EltwiseBinaryType type, BroadcastType bcast, uint32_t cb0,
                    uint32_t cb1, uint32_t tile0, uint32_t tile1,
                    uint32_t idst) {
  float *d = dstTile(idst, "eltwise binary");
  float a[kTileElements], b[kTileElements];
  unpackTile(int32_t(cb0), tile0, a, "eltwise binary");
  unpackTile(int32_t(cb1), tile1, b, "eltwise binary");
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
  settleDst(d);
}

void attn_tt_binary_dest_reuse(EltwiseBinaryType type,
                               EltwiseBinaryReuseDestType reuse, uint32_t cb,
                               uint32_t tile, uint32_t idst) {
  float *d = dstTile(idst, "binary_dest_reuse_tiles");
  float b[kTileElements];
  unpackTile(int32_t(cb), tile, b, "binary_dest_reuse_tiles");
  for (uint32_t i = 0; i < kTileElements; ++i)
    d[i] = reuse == EltwiseBinaryReuseDestType::DEST_TO_SRCB
               ? applyBinary(type, b[i], d[i])
               : applyBinary(type, d[i], b[i]);
  settleDst(d);
}

void attn_tt_reduce(PoolType pool, ReduceDim dim, uint32_t cb,
                    uint32_t scalerCb, uint32_t tile, uint32_t scalerTile,
                    uint32_t idst) {
  float *d = dstTile(idst, "reduce_tile");
  float a[kTileElements], s[kTileElements];
  unpackTile(int32_t(cb), tile, a, "reduce_tile");
  unpackTile(int32_t(scalerCb), scalerTile, s, "reduce_tile");
  float scaler = s[0];
  bool isMax = pool == PoolType::MAX;
  // The result accumulates into the destination, as the hardware's reduce
  // does: a sum adds to it, a max takes the larger.
  auto combine = [&](float &into, float v) {
    into = isMax ? std::max(into, v) : into + v;
  };
  auto reduceRange = [&](uint32_t r0, uint32_t r1, uint32_t c0, uint32_t c1) {
    float acc = isMax ? -INFINITY : 0.0f;
    for (uint32_t r = r0; r < r1; ++r)
      for (uint32_t c = c0; c < c1; ++c)
        combine(acc, a[r * 32 + c] * scaler);
    return acc;
  };
  if (dim == ReduceDim::REDUCE_ROW) {
    for (uint32_t r = 0; r < 32; ++r)
      combine(d[r * 32], reduceRange(r, r + 1, 0, 32));
  } else if (dim == ReduceDim::REDUCE_COL) {
    for (uint32_t c = 0; c < 32; ++c)
      combine(d[c], reduceRange(0, 32, c, c + 1));
  } else {
    combine(d[0], reduceRange(0, 32, 0, 32));
  }
  settleDst(d);
}

template <typename F> static void sfpu(uint32_t idst, const char *op, F f) {
  float *d = dstTile(idst, op);
  for (uint32_t i = 0; i < kTileElements; ++i)
    d[i] = f(d[i]);
  settleDst(d);
}

void exp_tile(uint32_t idst) {
  sfpu(idst, "exp_tile", [](float v) { return std::exp(v); });
}
void recip_tile(uint32_t idst) {
  sfpu(idst, "recip_tile", [](float v) { return 1.0f / v; });
}
void log_tile(uint32_t idst) {
  sfpu(idst, "log_tile", [](float v) { return std::log(v); });
}
void tanh_tile(uint32_t idst) {
  sfpu(idst, "tanh_tile", [](float v) { return std::tanh(v); });
}
void mul_unary_tile(uint32_t idst, uint32_t param) {
  float p;
  std::memcpy(&p, &param, 4);
  sfpu(idst, "mul_unary_tile", [p](float v) { return v * p; });
}
void max_tile(uint32_t idst0, uint32_t idst1) {
  float *a = dstTile(idst0, "max_tile");
  float *b = dstTile(idst1, "max_tile");
  for (uint32_t i = 0; i < kTileElements; ++i)
    a[i] = std::max(a[i], b[i]);
  settleDst(a);
}

void attn_tt_pack_tile(uint32_t idst, uint32_t cbId, bool outOfOrder,
                       uint32_t tileIndex) {
  const float *d = dstTile(idst, "pack_tile");
  CircularBuffer &cb = cbOrFail(int32_t(cbId), "pack_tile");
  Core &core = *current->core;
  uint32_t position;
  {
    std::lock_guard<std::mutex> lock(core.mu);
    position = outOfOrder ? tileIndex : cb.packed;
    if (position >= cb.reserved)
      failLocked(core, "core " + std::to_string(core.index) + ", " +
                           threadName(*current) + ": pack_tile into cb " +
                           std::to_string(cbId) + " tile " +
                           std::to_string(position) + ", but " +
                           std::to_string(cb.reserved) +
                           " are reserved (missing cb_reserve_back?)");
    if (!outOfOrder)
      ++cb.packed;
  }
  uint8_t *page = cb.page(cb.pushed + position);
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) {
      float v = d[r * 32 + c];
      uint32_t at = faceOffset(r, c);
      if (cb.spec.format == DataFormat::Float32) {
        std::memcpy(page + at * 4, &v, 4);
      } else {
        uint16_t bits = floatToBf16(v);
        std::memcpy(page + at * 2, &bits, 2);
      }
    }
}

//===- TTPlanDevice.cpp - TT programs behind the runtime's PlanDevice -----===//
#include "devices/tt/TTPlanDevice.h"

#include "core/Target.h"
#include "runtime/bundle/Bundle.h"
#include "devices/tt/AttentionOps.h"

#include <cstring>

namespace attn::tt {

namespace {

/// The operands of one launch as tensors.
class LaunchOperands {
public:
  LaunchOperands(const std::string &program,
                 std::span<const runtime::BufferView> args)
      : program_(program), args_(args) {}

  Status expect(size_t count) const {
    if (args_.size() == count)
      return Status::ok();
    return errorf("program '", program_, "' takes ", count,
                  " buffers, the launch passes ", args_.size());
  }
  uint64_t bytes(size_t i) const { return args_[i].bytes; }

  Result<Tensor> tensor(size_t i, DType dtype, std::vector<int64_t> shape,
                        const char *what) const {
    Result<Tensor> t = Tensor::create(dtype, std::move(shape));
    if (!t)
      return t;
    if (t->numBytes() > args_[i].bytes)
      return errorf("program '", program_, "': ", what, " ", t->describe(),
                    " needs ", t->numBytes(), " bytes, its buffer has ",
                    args_[i].bytes);
    std::memcpy(t->data(), runtime::HostMemoryDevice::bytesOf(args_[i]),
                t->numBytes());
    return t;
  }

  Status store(size_t i, const Tensor &t, const char *what) const {
    if (t.numBytes() > args_[i].bytes)
      return errorf("program '", program_, "': ", what, " ", t.describe(),
                    " does not fit its ", args_[i].bytes, "-byte buffer");
    std::memcpy(runtime::HostMemoryDevice::bytesOf(args_[i]), t.data(),
                t.numBytes());
    return Status::ok();
  }

private:
  const std::string &program_;
  std::span<const runtime::BufferView> args_;
};

/// The cache's shape for `blocks` blocks.
std::vector<int64_t> cacheShape(const ProgramShape &s, int64_t blocks) {
  if (s.kvParts == 1)
    return {blocks, s.blockSize, s.headSize};
  if (s.layout == KvLayout::NHD)
    return {blocks, 2, s.blockSize, s.numKvHeads, s.headSize};
  return {blocks, 2, s.numKvHeads, s.blockSize, s.headSize};
}

/// Blocks a cache buffer holds (runPlan allocates inputs to their size).
int64_t cacheBlocks(const ProgramShape &s, uint64_t bytes) {
  int64_t row = s.kvParts * s.blockSize * s.numKvHeads * s.headSize *
                int64_t(byteWidth(s.dtype));
  if (s.kvParts == 1)
    row = s.blockSize * s.headSize * int64_t(byteWidth(s.dtype));
  return int64_t(bytes) / row;
}

#define TRY_TENSOR(name, expr)                                                 \
  Result<Tensor> name##Or = (expr);                                            \
  if (!name##Or)                                                               \
    return name##Or.status();                                                  \
  Tensor &name = *name##Or;

Status storeOutput(const LaunchOperands &in, size_t first,
                   const Result<AttentionOutput> &out) {
  if (!out)
    return out.status();
  ATTN_RETURN_IF_ERROR(in.store(first, out->out, "out"));
  return in.store(first + 1, out->lse, "lse");
}

} // namespace

TTPlanDevice::TTPlanDevice(TTDevice &device)
    : device_(device), name_(device.name()) {}

TTPlanDevice::TTPlanDevice(std::unique_ptr<TTDevice> device)
    : owned_(std::move(device)), device_(*owned_), name_(device_.name()) {}

TTPlanDevice::~TTPlanDevice() {
  for (auto &[buffer, r] : resident_)
    dropCache(r);
}

Result<std::shared_ptr<runtime::DeviceBuffer>>
TTPlanDevice::adopt(void *, uint64_t, std::function<void()>) {
  return errorf(name_, ": its buffers are device memory; it adopts none");
}

Result<std::shared_ptr<runtime::DeviceBuffer>>
TTPlanDevice::allocateBuffer(uint64_t bytes) {
  sweep();
  Result<std::shared_ptr<runtime::DeviceBuffer>> buffer =
      HostMemoryDevice::allocateBuffer(bytes);
  if (!buffer)
    return buffer;
  Resident &r = resident_[buffer->get()];
  r = Resident{};
  r.owner = *buffer;
  return buffer;
}

void TTPlanDevice::sweep() {
  for (auto it = resident_.begin(); it != resident_.end();) {
    if (!it->second.owner.expired()) {
      ++it;
      continue;
    }
    dropCache(it->second);
    it = resident_.erase(it);
  }
}

void TTPlanDevice::dropCache(Resident &r) {
  if (r.cache)
    device_.releaseBuffer(r.cache->buffer);
  r.cache.reset();
  r.deviceNewer = r.hostNewer = false;
}

Status TTPlanDevice::syncHost(const runtime::DeviceBuffer *buffer) {
  auto it = resident_.find(buffer);
  if (it == resident_.end() || !it->second.cache || !it->second.deviceNewer)
    return Status::ok();
  Resident &r = it->second;
  Result<Tensor> host = Tensor::create(r.dtype, r.shape);
  if (!host)
    return host.status();
  ATTN_RETURN_IF_ERROR(downloadCache(device_, *r.cache, *host, r.layout));
  runtime::BufferView view{const_cast<runtime::DeviceBuffer *>(buffer),
                           r.offset, host->numBytes()};
  std::memcpy(bytesOf(view), host->data(), host->numBytes());
  r.deviceNewer = false;
  return Status::ok();
}

void TTPlanDevice::hostChanged(const runtime::DeviceBuffer *buffer) {
  auto it = resident_.find(buffer);
  if (it != resident_.end() && it->second.cache)
    it->second.hostNewer = true;
}

Result<const DeviceCache *>
TTPlanDevice::cacheOnDevice(const runtime::BufferView &view,
                            const ProgramShape &s) {
  auto it = resident_.find(view.buffer);
  if (it == resident_.end())
    return errorf(name_, ": a launch's cache is in a buffer of another device");
  Resident &r = it->second;
  TiledCache tc = tiledCacheOf(s, cacheBlocks(s, view.bytes));
  if (r.cache && r.cache->layout == tc && r.offset == view.offset &&
      r.layout == s.layout && !r.hostNewer)
    return &*r.cache;
  // Tiles of another shape may hold the only copy of writes.
  ATTN_RETURN_IF_ERROR(syncHost(view.buffer));
  dropCache(r);
  std::vector<int64_t> shape = cacheShape(s, tc.numBlocks);
  Result<Tensor> host = Tensor::create(s.dtype, shape);
  if (!host)
    return host.status();
  if (host->numBytes() > view.bytes)
    return errorf(name_, ": a cache of ", host->describe(), " in ", view.bytes,
                  " bytes");
  std::memcpy(host->data(), bytesOf(view), host->numBytes());
  Result<Buffer> tiles = uploadCache(device_, tc, *host, s.layout);
  if (!tiles)
    return tiles.status();
  r.cache = DeviceCache{*tiles, tc};
  r.offset = view.offset;
  r.dtype = s.dtype;
  r.shape = std::move(shape);
  r.layout = s.layout;
  return &*r.cache;
}

Status TTPlanDevice::writeBytes(runtime::DeviceBuffer &buffer, uint64_t offset,
                                const void *data, uint64_t bytes) {
  ATTN_RETURN_IF_ERROR(syncHost(&buffer));
  ATTN_RETURN_IF_ERROR(
      HostMemoryDevice::writeBytes(buffer, offset, data, bytes));
  hostChanged(&buffer);
  return Status::ok();
}

Status TTPlanDevice::readBytes(const runtime::DeviceBuffer &buffer,
                               uint64_t offset, void *data, uint64_t bytes) {
  ATTN_RETURN_IF_ERROR(syncHost(&buffer));
  return HostMemoryDevice::readBytes(buffer, offset, data, bytes);
}

Status TTPlanDevice::enqueueCopy(const runtime::BufferView &src,
                                 const runtime::BufferView &dst) {
  ATTN_RETURN_IF_ERROR(syncHost(src.buffer));
  ATTN_RETURN_IF_ERROR(syncHost(dst.buffer));
  ATTN_RETURN_IF_ERROR(HostMemoryDevice::enqueueCopy(src, dst));
  hostChanged(dst.buffer);
  return Status::ok();
}

Status TTPlanDevice::addProgram(const std::string &symbol,
                                const std::string &dir, bool loadNow) {
  if (programs_.count(symbol) || pending_.count(symbol))
    return errorf(name_, " already has a program under the symbol ", symbol);
  if (!loadNow) {
    pending_.emplace(symbol, dir);
    return Status::ok();
  }
  Result<Program> program = loadProgram(dir, device_);
  if (!program)
    return program.status();
  programs_.emplace(symbol, std::move(*program));
  return Status::ok();
}

Status TTPlanDevice::loadKernel(const runtime::Bundle &bundle,
                                const runtime::BundleKernel &kernel,
                                std::string_view) {
  if (parseTarget(kernel.target) != Target::TT)
    return errorf("kernel ", kernel.symbol, " is for target ", kernel.target,
                  "; ", name_, " runs ", toString(Target::TT));
  {
    // A program loads through its program.json; its other files are loaded
    // with it.
    if (kernel.entryPoint != "program.json")
      return Status::ok();
    // The program's identity: its files and their hashes, each checked.
    std::string source;
    for (const runtime::BundleVariant &v : bundle.variants)
      for (const runtime::BundleKernel &k : v.kernels)
        if (k.target == kernel.target && k.symbol == kernel.symbol) {
          if (Result<std::string> file = bundle.readKernel(k); !file)
            return file.status();
          source += runtime::kernelSource(runtime::hashToHex(k.hash),
                                          k.entryPoint, k.launchJson);
        }
    Result<bool> loaded = symbols_.isLoaded(name_, kernel.symbol, source);
    if (!loaded || *loaded)
      return loaded.status();
    size_t slash = kernel.file.find_last_of('/');
    std::string dir =
        bundle.directory + "/" +
        (slash == std::string::npos ? "." : kernel.file.substr(0, slash));
    ATTN_RETURN_IF_ERROR(addProgram(kernel.symbol, dir));
    symbols_.record(kernel.symbol, std::move(source));
    return Status::ok();
  }
}

Status TTPlanDevice::enqueueLaunch(std::string_view kernel,
                            const std::array<uint32_t, 3> &grid,
                            const std::array<int64_t, 3> &,
                            std::span<const runtime::BufferView> args) {
  std::string symbol(kernel);
  if (auto p = pending_.find(symbol); p != pending_.end()) {
    std::string dir = p->second;
    pending_.erase(p);
    ATTN_RETURN_IF_ERROR(addProgram(symbol, dir));
  }
  auto it = programs_.find(symbol);
  if (it == programs_.end())
    return errorf(name_, ": no TT program is loaded under the symbol ", kernel);
  const Program &program = it->second;
  const ProgramDescription &d = program.description;
  Result<ProgramShape> shapeOr = readProgramShape(d);
  if (!shapeOr)
    return shapeOr.status();
  const ProgramShape &s = *shapeOr;
  // The cache operand stays tiled in DRAM; every other operand is read from
  // and written to the host copy, current before and marked after.
  size_t cacheArg = d.op == "reshape_and_cache" ? 3
                    : d.op == "paged_attention" || d.op == "mla_decode"
                        ? 1
                        : args.size();
  for (size_t i = 0; i < args.size(); ++i)
    if (i != cacheArg)
      ATTN_RETURN_IF_ERROR(syncHost(args[i].buffer));
  Status status = launchOp(program, s, grid, args, cacheArg);
  for (size_t i = 0; i < args.size(); ++i)
    if (i != cacheArg)
      hostChanged(args[i].buffer);
  return status;
}

Status TTPlanDevice::launchOp(const Program &program, const ProgramShape &s,
                              const std::array<uint32_t, 3> &grid,
                              std::span<const runtime::BufferView> args,
                              size_t cacheArg) {
  const ProgramDescription &d = program.description;
  LaunchOperands in(d.name, args);
  int64_t H = s.numHeads, G = s.numKvHeads;
  // Called once the operand count is checked.
  auto cache = [&] { return cacheOnDevice(args[cacheArg], s); };

  if (d.op == "paged_attention") {
    // grid: T, R, M.
    int64_t T = grid[0], R = grid[1], M = grid[2];
    size_t n = 5 + (s.alibi ? 1 : 0) + (s.sinks ? 1 : 0);
    ATTN_RETURN_IF_ERROR(in.expect(n + 2));
    TRY_TENSOR(query, in.tensor(0, s.dtype, {T, H, s.headSize}, "query"));
    Result<const DeviceCache *> kv = cache();
    if (!kv)
      return kv.status();
    TRY_TENSOR(table, in.tensor(2, DType::I32, {R, M}, "block_table"));
    TRY_TENSOR(lens, in.tensor(3, DType::I32, {R}, "seq_lens"));
    TRY_TENSOR(starts, in.tensor(4, DType::I32, {R + 1}, "query_start_loc"));
    size_t next = 5;
    std::optional<Tensor> slopes, sinks;
    if (s.alibi) {
      TRY_TENSOR(t, in.tensor(next++, DType::F32, {H}, "alibi_slopes"));
      slopes = std::move(t);
    }
    if (s.sinks) {
      TRY_TENSOR(t, in.tensor(next++, DType::F32, {H}, "sinks"));
      sinks = std::move(t);
    }
    return storeOutput(in, n,
                       runAttentionProgram(device_, program, query, **kv, table,
                                           lens, &starts,
                                           sinks ? &*sinks : nullptr,
                                           slopes ? &*slopes : nullptr));
  }
  if (d.op == "mla_decode") {
    // grid: R, M.
    int64_t R = grid[0], M = grid[1];
    ATTN_RETURN_IF_ERROR(in.expect(6));
    TRY_TENSOR(q, in.tensor(0, s.dtype, {R, H, s.headSize}, "q"));
    Result<const DeviceCache *> kv = cache();
    if (!kv)
      return kv.status();
    TRY_TENSOR(table, in.tensor(2, DType::I32, {R, M}, "block_table"));
    TRY_TENSOR(lens, in.tensor(3, DType::I32, {R}, "seq_lens"));
    return storeOutput(in, 4,
                       runAttentionProgram(device_, program, q, **kv, table,
                                           lens, nullptr, nullptr, nullptr));
  }
  if (d.op == "reshape_and_cache") {
    // grid: T.
    int64_t T = grid[0];
    ATTN_RETURN_IF_ERROR(in.expect(4));
    bool latent = s.kvParts == 1;
    std::vector<int64_t> keyShape =
        latent ? std::vector<int64_t>{T, s.keyWidth}
               : std::vector<int64_t>{T, G, s.headSize};
    std::vector<int64_t> valueShape =
        latent ? std::vector<int64_t>{T, s.valueWidth}
               : std::vector<int64_t>{T, G, s.headSize};
    TRY_TENSOR(key, in.tensor(0, s.dtype, keyShape, "key"));
    TRY_TENSOR(value, in.tensor(1, s.dtype, valueShape, "value"));
    TRY_TENSOR(slots, in.tensor(2, DType::I64, {T}, "slot_mapping"));
    Result<const DeviceCache *> kv = cache();
    if (!kv)
      return kv.status();
    // The new rows go into the tiles; the host copy is now behind them.
    resident_[args[3].buffer].deviceNewer = true;
    return runReshapeAndCacheProgram(device_, program, key, value, **kv, slots);
  }
  if (d.op == "merge_states") {
    // grid: T.
    int64_t T = grid[0];
    ATTN_RETURN_IF_ERROR(in.expect(6));
    TRY_TENSOR(outA, in.tensor(0, s.dtype, {T, H, s.valueSize}, "out_a"));
    TRY_TENSOR(lseA, in.tensor(1, DType::F32, {T, H}, "lse_a"));
    TRY_TENSOR(outB, in.tensor(2, s.dtype, {T, H, s.valueSize}, "out_b"));
    TRY_TENSOR(lseB, in.tensor(3, DType::F32, {T, H}, "lse_b"));
    return storeOutput(
        in, 4, runMergeStatesProgram(device_, program, outA, lseA, outB, lseB));
  }
  return errorf("program '", d.name, "' computes ", d.op,
                ", which TT plans do not launch");
}

} // namespace attn::tt

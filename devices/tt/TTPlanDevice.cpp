//===- TTPlanDevice.cpp - TT programs behind the runtime's PlanDevice -----===//
#include "devices/tt/TTPlanDevice.h"

#include "core/Target.h"
#include "runtime/bundle/Bundle.h"
#include "devices/tt/AttentionOps.h"

#include <cstring>

namespace attn::tt {

namespace {

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

/// The operand count a program takes, against the launch's.
Status expectOperands(const ProgramDescription &d,
                      std::span<const runtime::BufferView> args, size_t count) {
  if (args.size() == count)
    return Status::ok();
  return errorf("program '", d.name, "' takes ", count,
                " buffers, the launch passes ", args.size());
}

#define TRY(name, expr)                                                        \
  auto name##Or = (expr);                                                      \
  if (!name##Or)                                                               \
    return name##Or.status();                                                  \
  auto &name = *name##Or;

} // namespace

TTPlanDevice::TTPlanDevice(TTDevice &device)
    : device_(device), name_(device.name()) {}

TTPlanDevice::TTPlanDevice(std::unique_ptr<TTDevice> device)
    : owned_(std::move(device)), device_(*owned_), name_(device_.name()) {}

TTPlanDevice::~TTPlanDevice() {
  for (auto &[buffer, r] : resident_)
    for (const Image &image : r.images)
      release(image);
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
    for (const Image &image : it->second.images)
      release(image);
    it = resident_.erase(it);
  }
}

void TTPlanDevice::release(const Image &image) {
  if (launching_)
    retired_.push_back(image.buffer);
  else
    device_.releaseBuffer(image.buffer);
}

uint64_t TTPlanDevice::Form::hostBytes() const {
  if (!tiles)
    return rows.hostBytes();
  uint64_t n = byteWidth(tiles->dtype);
  for (int64_t d : shape)
    n *= uint64_t(d);
  return n;
}

Status TTPlanDevice::syncHost(const runtime::DeviceBuffer *buffer,
                              uint64_t offset, uint64_t bytes) {
  auto it = resident_.find(buffer);
  if (it == resident_.end())
    return Status::ok();
  for (Image &image : it->second.images) {
    if (!image.deviceNewer || !image.overlaps(offset, bytes))
      continue;
    runtime::BufferView view{const_cast<runtime::DeviceBuffer *>(buffer),
                             image.offset, image.form.hostBytes()};
    if (image.form.tiles) {
      Result<Tensor> host =
          Tensor::create(image.form.tiles->dtype, image.form.shape);
      if (!host)
        return host.status();
      ATTN_RETURN_IF_ERROR(downloadCache(
          device_, DeviceCache{image.buffer, *image.form.tiles}, *host,
          image.form.layout));
      std::memcpy(bytesOf(view), host->data(), host->numBytes());
    } else {
      ATTN_RETURN_IF_ERROR(downloadRows(device_, image.buffer, image.form.rows,
                                        bytesOf(view)));
    }
    image.deviceNewer = false;
  }
  return Status::ok();
}

void TTPlanDevice::hostChanged(const runtime::DeviceBuffer *buffer,
                               uint64_t offset, uint64_t bytes) {
  auto it = resident_.find(buffer);
  if (it == resident_.end())
    return;
  for (Image &image : it->second.images)
    if (image.overlaps(offset, bytes))
      image.hostNewer = true;
}

Result<Buffer> TTPlanDevice::onDevice(const runtime::BufferView &view,
                                      const Form &form, Use use) {
  auto it = resident_.find(view.buffer);
  if (it == resident_.end())
    return errorf(name_, ": a launch's operand is in a buffer of another "
                         "device");
  std::vector<Image> &images = it->second.images;
  uint64_t bytes = form.hostBytes();
  if (bytes > view.bytes)
    return errorf(name_, ": an operand of ", bytes, " bytes in a ", view.bytes,
                  "-byte buffer");
  for (Image &image : images) {
    if (image.offset != view.offset || image.form != form ||
        (image.hostNewer && use != Use::Write))
      continue;
    // A launch that writes the whole region makes the host copy stale.
    if (use != Use::Read) {
      image.deviceNewer = true;
      image.hostNewer = false;
    }
    return image.buffer;
  }
  // The images this one displaces may hold the only copy of writes.
  ATTN_RETURN_IF_ERROR(syncHost(view.buffer, view.offset, bytes));
  for (auto i = images.begin(); i != images.end();) {
    if (!i->overlaps(view.offset, bytes)) {
      ++i;
      continue;
    }
    release(*i);
    i = images.erase(i);
  }
  Image image;
  image.offset = view.offset;
  image.form = form;
  image.deviceNewer = use != Use::Read;
  const uint8_t *host = bytesOf(view);
  Result<Buffer> buffer = Buffer{};
  if (form.tiles) {
    Result<Tensor> t = Tensor::create(form.tiles->dtype, form.shape);
    if (!t)
      return t.status();
    std::memcpy(t->data(), host, t->numBytes());
    buffer = uploadCache(device_, *form.tiles, *t, form.layout);
  } else if (use == Use::Write || form.rows.rows == 0) {
    // Nothing to move: the launch writes it all (or there is nothing).
    buffer = device_.createBuffer(form.rows.pageBytes,
                                  std::max<uint32_t>(form.rows.rows, 1));
  } else {
    buffer = uploadRows(device_, form.rows, host);
  }
  if (!buffer)
    return buffer.status();
  image.buffer = *buffer;
  images.push_back(image);
  return *buffer;
}

Result<Tensor> TTPlanDevice::hostTensor(const runtime::BufferView &view,
                                        DType dtype,
                                        std::vector<int64_t> shape,
                                        const char *what) {
  Result<Tensor> t = Tensor::create(dtype, std::move(shape));
  if (!t)
    return t;
  if (t->numBytes() > view.bytes)
    return errorf(name_, ": ", what, " ", t->describe(), " needs ",
                  t->numBytes(), " bytes, its buffer has ", view.bytes);
  ATTN_RETURN_IF_ERROR(syncHost(view.buffer, view.offset, t->numBytes()));
  std::memcpy(t->data(), bytesOf(view), t->numBytes());
  return t;
}

Status TTPlanDevice::writeBytes(runtime::DeviceBuffer &buffer, uint64_t offset,
                                const void *data, uint64_t bytes) {
  // A region the write covers only in part keeps the rest.
  ATTN_RETURN_IF_ERROR(syncHost(&buffer, offset, bytes));
  ATTN_RETURN_IF_ERROR(
      HostMemoryDevice::writeBytes(buffer, offset, data, bytes));
  hostChanged(&buffer, offset, bytes);
  return Status::ok();
}

Status TTPlanDevice::readBytes(const runtime::DeviceBuffer &buffer,
                               uint64_t offset, void *data, uint64_t bytes) {
  ATTN_RETURN_IF_ERROR(syncHost(&buffer, offset, bytes));
  return HostMemoryDevice::readBytes(buffer, offset, data, bytes);
}

Status TTPlanDevice::enqueueCopy(const runtime::BufferView &src,
                                 const runtime::BufferView &dst) {
  ATTN_RETURN_IF_ERROR(syncHost(src.buffer, src.offset, src.bytes));
  ATTN_RETURN_IF_ERROR(syncHost(dst.buffer, dst.offset, dst.bytes));
  ATTN_RETURN_IF_ERROR(HostMemoryDevice::enqueueCopy(src, dst));
  hostChanged(dst.buffer, dst.offset, dst.bytes);
  return Status::ok();
}

Status TTPlanDevice::addProgram(const std::string &symbol,
                                const std::string &dir, bool loadNow) {
  if (programs_.count(symbol) || pending_.count(symbol))
    return errorf(name_, " already has a program under the symbol ", symbol);
  ATTN_RETURN_IF_ERROR(keepLaunchBounds(symbol, "tt", std::nullopt));
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

Status TTPlanDevice::loadKernelCode(const runtime::Bundle &bundle,
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
    Result<std::vector<const runtime::BundleKernel *>> same =
        bundle.kernelsOfSymbol(kernel.symbol);
    if (!same)
      return same.status();
    for (const runtime::BundleKernel *k : *same)
      if (k->target == kernel.target) {
        if (Result<std::string> file = bundle.readKernel(*k); !file)
          return file.status();
        source += runtime::kernelSource(k->hash, k->entryPoint, k->launchJson);
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
  launching_ = true;
  Status status = launchOp(program, s, grid, args);
  launching_ = false;
  for (const Buffer &buffer : retired_)
    device_.releaseBuffer(buffer);
  retired_.clear();
  return status;
}

Status TTPlanDevice::launchOp(const Program &program, const ProgramShape &s,
                              const std::array<uint32_t, 3> &grid,
                              std::span<const runtime::BufferView> args) {
  const ProgramDescription &d = program.description;
  int64_t H = s.numHeads, G = s.numKvHeads;
  uint32_t esz = uint32_t(byteWidth(s.dtype));
  auto rows = [](RowPages pages) {
    Form form;
    form.rows = pages;
    return form;
  };
  // Called once the operand count is checked.
  auto cache = [&](size_t i, Use use) -> Result<DeviceCache> {
    Form form;
    form.tiles = tiledCacheOf(s, cacheBlocks(s, args[i].bytes));
    form.shape = cacheShape(s, form.tiles->numBlocks);
    form.layout = s.layout;
    Result<Buffer> buffer = onDevice(args[i], form, use);
    if (!buffer)
      return buffer.status();
    return DeviceCache{*buffer, *form.tiles};
  };
  auto in = [&](size_t i, RowPages pages) {
    return onDevice(args[i], rows(pages), Use::Read);
  };
  auto out = [&](size_t i, RowPages pages) {
    return onDevice(args[i], rows(pages), Use::Write);
  };

  if (d.op == "paged_attention" || d.op == "mla_decode") {
    // grid: T, R, M for paged attention; R, M for MLA (a query per request).
    bool mla = d.op == "mla_decode";
    int64_t T = grid[0];
    int64_t R = mla ? grid[0] : grid[1], M = mla ? grid[1] : grid[2];
    size_t n = mla ? 4 : 5 + (s.alibi ? 1 : 0) + (s.sinks ? 1 : 0);
    ATTN_RETURN_IF_ERROR(expectOperands(d, args, n + 2));
    AttentionBuffers b;
    TRY(query, in(0, stickPages(T * H, s.headSize * esz)));
    b.query = query;
    TRY(kv, cache(1, Use::Read));
    b.kvCache = kv;
    // The metadata lays out the work on the host and is read in DRAM.
    TRY(table, hostTensor(args[2], DType::I32, {R, M}, "block_table"));
    TRY(tableBuffer, in(2, blockTablePages(R, M)));
    b.blockTable = tableBuffer;
    TRY(lens, hostTensor(args[3], DType::I32, {R}, "seq_lens"));
    std::optional<Tensor> starts, sinks;
    if (!mla) {
      TRY(t, hostTensor(args[4], DType::I32, {R + 1}, "query_start_loc"));
      starts = std::move(t);
    }
    size_t next = 5;
    if (s.alibi) {
      TRY(slopes, in(next++, headPages(H)));
      b.alibiSlopes = slopes;
    }
    if (s.sinks) {
      TRY(t, hostTensor(args[next], DType::F32, {H}, "sinks"));
      sinks = std::move(t);
      TRY(sinkBuffer, in(next++, headPages(H)));
      b.sinks = sinkBuffer;
    }
    TRY(o, out(n, stickPages(T * H, s.valueSize * esz)));
    b.out = o;
    TRY(l, out(n + 1, stickPages(T, H * 4)));
    b.lse = l;
    return runAttentionProgram(device_, program, b, T, table, lens,
                               starts ? &*starts : nullptr,
                               sinks ? &*sinks : nullptr);
  }
  if (d.op == "reshape_and_cache") {
    // grid: T.
    int64_t T = grid[0];
    ATTN_RETURN_IF_ERROR(expectOperands(d, args, 4));
    TRY(slots, hostTensor(args[2], DType::I64, {T}, "slot_mapping"));
    TRY(key, in(0, stickPages(T * G, s.keyWidth * esz)));
    TRY(value, in(1, stickPages(T * G, s.valueWidth * esz)));
    TRY(slotBuffer, in(2, stickPages(T, 8)));
    // The new rows go into the tiles; the host copy is then behind them.
    TRY(kv, cache(3, Use::Update));
    return runReshapeAndCacheProgram(device_, program, key, value, slotBuffer,
                                     kv, slots);
  }
  if (d.op == "merge_states") {
    // grid: T. The states go down from the host, in the one buffer each the
    // merge program reads.
    int64_t T = grid[0];
    ATTN_RETURN_IF_ERROR(expectOperands(d, args, 6));
    TRY(outA, hostTensor(args[0], s.dtype, {T, H, s.valueSize}, "out_a"));
    TRY(lseA, hostTensor(args[1], DType::F32, {T, H}, "lse_a"));
    TRY(outB, hostTensor(args[2], s.dtype, {T, H, s.valueSize}, "out_b"));
    TRY(lseB, hostTensor(args[3], DType::F32, {T, H}, "lse_b"));
    TRY(o, out(4, stickPages(T * H, s.valueSize * esz)));
    TRY(l, out(5, stickPages(T, H * 4)));
    return runMergeStatesProgram(device_, program, outA, lseA, outB, lseB, o,
                                 l);
  }
  return errorf("program '", d.name, "' computes ", d.op,
                ", which TT plans do not launch");
}

} // namespace attn::tt

//===- BundleFuzzer.cpp - Fuzz target: bundle loading + a plan run -------===//
//
// Input: a bundle directory flattened into one text —
//
//   <manifest.json>
//   #file kernels/a.spv
//   <the file's bytes>
//   #dir kernels/b.spv          (a directory where a file may be expected)
//   #inputs
//   <bytes that pick the plan arguments' dynamic sizes and contents>
//
// A manifest whose "manifest_hash" is "restamp" gets its true hash written
// in, as a deliberate editor would, so that mutations reach the checks
// behind the hash; any other manifest is written as it is.
//
// The target writes it into a fresh temporary directory, loads it with
// loadBundle (manifest parse, plan checks, kernel hashes), then runs every
// plan it holds on a host device whose kernels touch every byte of their
// arguments. Bad bundles must be rejected with a Status; a loaded plan must
// run or fail with one, never read or write outside a buffer.
//
//===----------------------------------------------------------------------===//

#include "runtime/bundle/Bundle.h"
#include "runtime/device/HostMemory.h"
#include "runtime/device/PlanRunner.h"
#include "test/fuzz/FuzzInput.h"
#include "test/fuzz/PlanInputs.h"
#include "test/fuzz/Restamp.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

using namespace attn;
using namespace attn::runtime;
using attn::fuzz::FuzzInput;
using attn::fuzz::restamp;
namespace fs = std::filesystem;

namespace {

/// What a device refuses to allocate: the largest buffer a fuzz input may
/// have the runner ask for.
constexpr uint64_t kMaxDeviceBytes = uint64_t{1} << 26;

/// A device in host memory (the CPU device's) with the memory limit above,
/// whose kernels touch every byte their arguments bind: an argument that
/// binds more than its buffer holds is an ASan report.
class FuzzDevice : public HostMemoryDevice {
public:
  std::string_view name() const override { return "fuzz"; }
  Status loadKernelCode(const Bundle &, const BundleKernel &,
                        std::string_view) override {
    return Status::ok();
  }

protected:
  Result<std::shared_ptr<DeviceBuffer>>
  allocateBuffer(uint64_t bytes) override {
    if (bytes > kMaxDeviceBytes)
      return errorf("out of device memory for ", bytes, " bytes");
    return HostMemoryDevice::allocateBuffer(bytes);
  }
  Status enqueueLaunch(std::string_view, const std::array<uint32_t, 3> &,
                       const std::array<int64_t, 3> &,
                       std::span<const BufferView> args) override {
    for (const BufferView &view : args) {
      uint8_t *bytes = bytesOf(view);
      for (uint64_t i = 0; i < view.bytes; ++i)
        bytes[i] = static_cast<uint8_t>(bytes[i] * 31 + 7);
    }
    return Status::ok();
  }
};

/// A name the target may create under its directory: relative, no "..".
bool safeName(std::string_view name) {
  if (name.empty() || name.size() > 200 || name.front() == '/' ||
      name.find("..") != std::string_view::npos)
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
          c == '_' || c == '-' || c == '/' || c == '@' || c == ':'))
      return false;
  return true;
}

const fs::path &scratchDir() {
  static const fs::path dir = [] {
    std::string templ =
        (fs::temp_directory_path() / "attn-fuzz-bundle-XXXXXX").string();
    if (!mkdtemp(templ.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    return fs::path(templ);
  }();
  return dir;
}

/// Where the next section header ("\n#file ", "\n#dir ", "\n#inputs")
/// starts in `text`, or npos.
size_t nextHeader(std::string_view text) {
  size_t at = std::string_view::npos;
  for (std::string_view h : {"\n#file ", "\n#dir ", "\n#inputs"})
    at = std::min(at, text.find(h));
  return at;
}

/// Lays the input out as a bundle directory; returns the #inputs bytes.
std::string_view writeBundle(std::string_view text, const fs::path &dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir / "kernels", ec);
  std::string name = "manifest.json";
  bool isDir = false;
  while (true) {
    const size_t at = nextHeader(text);
    std::string_view body = text.substr(0, at);
    std::string stamped;
    if (name == "manifest.json") {
      stamped = restamp(body);
      if (!stamped.empty())
        body = stamped;
    }
    if (safeName(name)) {
      const fs::path p = dir / name;
      fs::create_directories(p.parent_path(), ec);
      if (isDir)
        fs::create_directories(p, ec);
      else
        std::ofstream(p, std::ios::binary).write(body.data(), body.size());
    }
    if (at == std::string_view::npos)
      return {};
    text.remove_prefix(at + 2);
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (line.starts_with("inputs"))
      return text;
    isDir = line.starts_with("dir ");
    name = std::string(line.substr(isDir ? 4 : 5));
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fs::path dir = scratchDir() / "b.attnb";
  std::string_view inputBytes = writeBundle(
      std::string_view(reinterpret_cast<const char *>(data), size), dir);
  // ATTN_FUZZ_VERBOSE=1: say how far each input got (to check the seeds).
  static const bool verbose = std::getenv("ATTN_FUZZ_VERBOSE");
  Result<Bundle> bundle = loadBundle(dir.string());
  if (!bundle) {
    if (verbose)
      std::fprintf(stderr, "bundle: not loaded: %s\n",
                   bundle.message().c_str());
    return 0;
  }
  FuzzInput in(reinterpret_cast<const uint8_t *>(inputBytes.data()),
               inputBytes.size());
  FuzzDevice device;
  for (const BundleVariant &v : bundle->variants) {
    Status onDevice = Status::ok();
    for (const BundleKernel &k : v.kernels) {
      Result<std::string> bytes = bundle->readKernel(k);
      if (!bytes) {
        std::fprintf(stderr, "bundle: loaded, but kernel %s does not read\n",
                     k.file.c_str());
        std::abort();
      }
      // As an executor does: the device keeps each kernel's launch bounds.
      if (onDevice)
        onDevice = device.loadKernel(*bundle, k, *bytes);
    }
    if (!onDevice)
      continue;
    const Plan *plan = v.plan();
    if (!plan)
      continue;
    std::vector<Tensor> inputs =
        attn::fuzz::drawPlanInputs(*plan, in, kMaxDeviceBytes);
    if (inputs.size() != plan->arguments.size())
      continue;
    Result<std::vector<Tensor>> results = runPlan(*plan, device, inputs);
    if (verbose)
      std::fprintf(stderr, "bundle: plan %s: %s\n", plan->function.c_str(),
                   results ? "ran" : results.message().c_str());
    if (results && results->size() != plan->results.size()) {
      std::fprintf(stderr, "bundle: plan %s returned %zu results, not %zu\n",
                   plan->function.c_str(), results->size(),
                   plan->results.size());
      std::abort();
    }
  }
  return 0;
}

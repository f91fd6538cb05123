//===- SPIRVToMSL.cpp - attn's SPIR-V kernels as Metal source -------------===//
//
// Drives SPIRV-Cross's C API (spirv_cross_c.h): parse, map bindings to
// buffer indices, pick the MSL version, compile, and read back the entry
// point's final name and LocalSize.
//
//===----------------------------------------------------------------------===//

#include "lowering/SPIRVToMSL/SPIRVToMSL.h"
#include "core/LaunchFacts.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <spirv_cross_c.h>

#include <memory>

using namespace mlir;
using namespace mlir::attn;

namespace {

struct ContextDeleter {
  void operator()(spvc_context context) const { spvc_context_destroy(context); }
};
using ContextPtr = std::unique_ptr<spvc_context_s, ContextDeleter>;

llvm::Error makeError(StringRef entryPoint, const llvm::Twine &message) {
  return llvm::createStringError("kernel " + entryPoint + ": " + message);
}

/// The lowest MSL version SPIRV-Cross accepts for `capabilities`, and the
/// capability that asks for it (empty for the floor).
std::pair<uint32_t, StringRef>
getRequiredVersion(ArrayRef<SpvCapability> capabilities) {
  std::pair<uint32_t, StringRef> required = {makeMSLVersion(1, 2), ""};
  auto raise = [&](uint32_t version, StringRef why) {
    if (version > required.first)
      required = {version, why};
  };
  for (SpvCapability cap : capabilities) {
    switch (cap) {
    case SpvCapabilityInt64:
      raise(makeMSLVersion(2, 3), "64-bit integers in buffers");
      break;
    case SpvCapabilityGroupNonUniformArithmetic:
    case SpvCapabilityGroupNonUniformBallot:
    case SpvCapabilityGroupNonUniformVote:
    case SpvCapabilityGroupNonUniformClustered:
    case SpvCapabilityGroupNonUniformQuad:
      raise(makeMSLVersion(2, 1), "SIMD-group reductions, ballot or vote");
      break;
    case SpvCapabilityGroupNonUniform:
    case SpvCapabilityGroupNonUniformShuffle:
    case SpvCapabilityGroupNonUniformShuffleRelative:
      raise(makeMSLVersion(2, 0), "SIMD-group shuffles");
      break;
    default:
      break;
    }
  }
  return required;
}

/// One kernel's SPIRV-Cross MSL compiler, with the context that owns it and
/// the entry point every error names.
struct Compilation {
  ContextPtr context;
  spvc_compiler compiler = nullptr;
  StringRef entryPoint;
  /// `entryPoint` NUL-terminated, for the C API.
  std::string entry;

  /// The error of a failed SPIRV-Cross call that was to `what`, with
  /// SPIRV-Cross's own message.
  llvm::Error error(StringRef what) const {
    const char *reason = spvc_context_get_last_error_string(context.get());
    return makeError(entryPoint,
                     "spirv-cross cannot " + what + ": " +
                         (reason && *reason ? reason : "no reason"));
  }
};

/// Parses `words` and makes an MSL compiler for its GLCompute entry point
/// `entryPoint`.
llvm::Expected<Compilation> createCompilation(ArrayRef<uint32_t> words,
                                              StringRef entryPoint) {
  spvc_context rawContext = nullptr;
  if (spvc_context_create(&rawContext) != SPVC_SUCCESS)
    return makeError(entryPoint, "cannot create a spirv-cross context");
  Compilation c{ContextPtr(rawContext), nullptr, entryPoint, entryPoint.str()};
  spvc_context ctx = c.context.get();

  spvc_parsed_ir ir = nullptr;
  if (spvc_context_parse_spirv(ctx, words.data(), words.size(), &ir) !=
      SPVC_SUCCESS)
    return c.error("parse the SPIR-V");
  if (spvc_context_create_compiler(ctx, SPVC_BACKEND_MSL, ir,
                                   SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                   &c.compiler) != SPVC_SUCCESS)
    return c.error("create an MSL compiler");
  if (spvc_compiler_set_entry_point(c.compiler, c.entry.c_str(),
                                    SpvExecutionModelGLCompute) != SPVC_SUCCESS)
    return c.error("find the compute entry point");
  return c;
}

/// The threads per threadgroup, from the entry point's LocalSize.
llvm::Error readThreadgroupSize(const Compilation &c, MSLKernel &kernel) {
  for (int i = 0; i < 3; ++i)
    kernel.threadgroupSize[i] =
        spvc_compiler_get_execution_mode_argument_by_index(
            c.compiler, SpvExecutionModeLocalSize, i);
  if (llvm::is_contained(kernel.threadgroupSize, 0u))
    return makeError(c.entryPoint, "expects a LocalSize execution mode");
  return llvm::Error::success();
}

/// Fails unless storage buffers are all that crosses the kernel boundary (no
/// push constants, images or uniforms).
llvm::Error checkOnlyStorageBuffers(const Compilation &c,
                                    spvc_resources resources) {
  for (spvc_resource_type type :
       {SPVC_RESOURCE_TYPE_UNIFORM_BUFFER, SPVC_RESOURCE_TYPE_PUSH_CONSTANT,
        SPVC_RESOURCE_TYPE_STORAGE_IMAGE, SPVC_RESOURCE_TYPE_SAMPLED_IMAGE,
        SPVC_RESOURCE_TYPE_SEPARATE_IMAGE,
        SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS}) {
    const spvc_reflected_resource *list = nullptr;
    size_t count = 0;
    spvc_resources_get_resource_list_for_type(resources, type, &list, &count);
    if (count != 0)
      return makeError(c.entryPoint, "expects only storage buffers as kernel "
                                     "arguments, found " +
                                         llvm::Twine(list[0].name));
  }
  return llvm::Error::success();
}

/// Maps the storage buffer at set 0, binding i to [[buffer(i)]], after
/// checking that the bindings are 0..N-1, once each.
llvm::Error mapStorageBuffers(const Compilation &c, spvc_resources resources,
                              MSLKernel &kernel) {
  const spvc_reflected_resource *buffers = nullptr;
  size_t numBuffers = 0;
  spvc_resources_get_resource_list_for_type(
      resources, SPVC_RESOURCE_TYPE_STORAGE_BUFFER, &buffers, &numBuffers);
  SmallVector<bool> seen(numBuffers, false);
  for (const spvc_reflected_resource &buffer :
       ArrayRef<spvc_reflected_resource>(buffers, numBuffers)) {
    unsigned set = spvc_compiler_get_decoration(c.compiler, buffer.id,
                                                SpvDecorationDescriptorSet);
    unsigned binding = spvc_compiler_get_decoration(c.compiler, buffer.id,
                                                    SpvDecorationBinding);
    if (set != 0 || binding >= numBuffers || seen[binding])
      return makeError(c.entryPoint,
                       "expects storage buffers at set 0, bindings 0.." +
                           llvm::Twine(numBuffers - 1) + " once each, found " +
                           buffer.name + " at set " + llvm::Twine(set) +
                           ", binding " + llvm::Twine(binding));
    seen[binding] = true;
  }
  for (unsigned binding = 0; binding < numBuffers; ++binding) {
    spvc_msl_resource_binding map;
    spvc_msl_resource_binding_init(&map);
    map.stage = SpvExecutionModelGLCompute;
    map.desc_set = 0;
    map.binding = binding;
    map.msl_buffer = binding;
    if (spvc_compiler_msl_add_resource_binding(c.compiler, &map) !=
        SPVC_SUCCESS)
      return c.error("map a binding to a buffer index");
    kernel.bufferIndices.push_back(binding);
  }
  return llvm::Error::success();
}

/// Argument i is the storage buffer at set 0, binding i; nothing else may
/// cross the kernel boundary.
llvm::Error mapArguments(const Compilation &c, MSLKernel &kernel) {
  spvc_resources resources = nullptr;
  if (spvc_compiler_create_shader_resources(c.compiler, &resources) !=
      SPVC_SUCCESS)
    return c.error("reflect the resources");
  if (llvm::Error err = checkOnlyStorageBuffers(c, resources))
    return err;
  return mapStorageBuffers(c, resources, kernel);
}

/// The MSL version to emit: `requested`, or when that is 0 the lowest the
/// declared capabilities need; a requested version below that is an error.
llvm::Expected<uint32_t> chooseVersion(const Compilation &c,
                                       uint32_t requested) {
  const SpvCapability *capabilities = nullptr;
  size_t numCapabilities = 0;
  if (spvc_compiler_get_declared_capabilities(c.compiler, &capabilities,
                                              &numCapabilities) != SPVC_SUCCESS)
    return c.error("list the capabilities");
  auto [required, reason] = getRequiredVersion(
      ArrayRef<SpvCapability>(capabilities, numCapabilities));
  uint32_t version = requested ? requested : required;
  if (version < required)
    return makeError(c.entryPoint, "needs MSL " + formatMSLVersion(required) +
                                       " (" + reason + "), not " +
                                       formatMSLVersion(version));
  return version;
}

/// Installs the options of every attn kernel: `version`, macOS, native
/// arrays.
llvm::Error setOptions(const Compilation &c, uint32_t version) {
  spvc_compiler_options mslOptions = nullptr;
  if (spvc_compiler_create_compiler_options(c.compiler, &mslOptions) !=
          SPVC_SUCCESS ||
      spvc_compiler_options_set_uint(mslOptions,
                                     SPVC_COMPILER_OPTION_MSL_VERSION,
                                     version) != SPVC_SUCCESS ||
      spvc_compiler_options_set_uint(mslOptions,
                                     SPVC_COMPILER_OPTION_MSL_PLATFORM,
                                     SPVC_MSL_PLATFORM_MACOS) != SPVC_SUCCESS ||
      // Plain C arrays (the workgroup merge buffer) rather than SPIRV-Cross's
      // spvUnsafeArray wrapper: the kernels never copy arrays by value.
      spvc_compiler_options_set_bool(
          mslOptions, SPVC_COMPILER_OPTION_MSL_FORCE_NATIVE_ARRAYS,
          SPVC_TRUE) != SPVC_SUCCESS ||
      spvc_compiler_install_compiler_options(c.compiler, mslOptions) !=
          SPVC_SUCCESS)
    return c.error("set the MSL options");
  return llvm::Error::success();
}

/// Emits the MSL source and the entry point's final name.
llvm::Error emitSource(const Compilation &c, MSLKernel &kernel) {
  const char *source = nullptr;
  if (spvc_compiler_compile(c.compiler, &source) != SPVC_SUCCESS)
    return c.error("emit MSL");
  kernel.source = source;
  // Valid only after compiling: SPIRV-Cross renames while it emits.
  kernel.entryPoint = spvc_compiler_get_cleansed_entry_point_name(
      c.compiler, c.entry.c_str(), SpvExecutionModelGLCompute);
  return llvm::Error::success();
}

} // namespace

std::string mlir::attn::formatMSLVersion(uint32_t version) {
  return std::to_string(mslMajorVersion(version)) + "." +
         std::to_string(mslMinorVersion(version));
}

llvm::Expected<MSLKernel>
mlir::attn::translateSPIRVToMSL(ArrayRef<uint32_t> words, StringRef entryPoint,
                                const MSLOptions &options) {
  llvm::Expected<Compilation> c = createCompilation(words, entryPoint);
  if (!c)
    return c.takeError();
  MSLKernel kernel;
  if (llvm::Error err = readThreadgroupSize(*c, kernel))
    return std::move(err);
  if (llvm::Error err = mapArguments(*c, kernel))
    return std::move(err);
  llvm::Expected<uint32_t> version = chooseVersion(*c, options.version);
  if (!version)
    return version.takeError();
  kernel.version = *version;
  if (llvm::Error err = setOptions(*c, kernel.version))
    return std::move(err);
  if (llvm::Error err = emitSource(*c, kernel))
    return std::move(err);
  return kernel;
}

std::string mlir::attn::mslLaunchFacts(const MSLKernel &kernel,
                                       uint32_t subgroupSize,
                                       ::attn::LaunchBounds bounds) {
  ::attn::LaunchFacts launch;
  launch.bounds = std::move(bounds);
  launch.entryPoint = kernel.entryPoint;
  launch.mslMajor = mslMajorVersion(kernel.version);
  launch.mslMinor = mslMinorVersion(kernel.version);
  for (int i = 0; i < 3; ++i)
    launch.workgroup[i] = kernel.threadgroupSize[i];
  launch.subgroupSize = subgroupSize;
  launch.bufferIndices.assign(kernel.bufferIndices.begin(),
                              kernel.bufferIndices.end());
  return ::attn::writeLaunchFacts(launch, ::attn::Target::MSL);
}

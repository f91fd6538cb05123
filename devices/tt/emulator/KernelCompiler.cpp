//===- KernelCompiler.cpp - Builds emitted TT kernels for the emulator ---===//
#include "devices/tt/emulator/KernelCompiler.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace attn::tt {

namespace fs = std::filesystem;

const std::vector<std::string> &jitKernelFlags() {
  static const std::vector<std::string> flags = {
      "-std=c++17",
      "-fno-exceptions",
      "-fno-use-cxa-atexit",
      "-Wall",
      "-Werror",
      "-Wno-unknown-pragmas",
      "-Wno-deprecated-declarations",
      "-Wno-error=multistatement-macros",
      "-Wno-error=parentheses",
      "-Wno-error=unused-but-set-variable",
      "-Wno-unused-variable",
      "-Wno-unused-function"};
  return flags;
}

const std::vector<std::string> &deprecationFlags() {
  static const std::vector<std::string> flags = {
      "-Werror=deprecated-declarations"};
  return flags;
}

std::vector<std::string> archDefines(Arch arch) {
  if (arch == Arch::Blackhole)
    return {"-DARCH_BLACKHOLE"};
  return {"-DARCH_WORMHOLE"};
}

static std::string envOr(const char *name, const std::string &fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

static uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

/// Single-quotes `s` for /bin/sh.
static std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The defines of the RISC a kernel is built for, as the JIT build sets
/// them: a data movement kernel also gets its NOC (the reader's RISC-V 1
/// issues on NOC 1, the writer's RISC-V 0 on NOC 0, their defaults in
/// MetalDevice). The emulator runs the three compute RISCs as one thread,
/// so a compute kernel is built once, as for the math RISC.
static const char *riscDefine(KernelKind kind) {
  switch (kind) {
  case KernelKind::Reader:
    return "-DCOMPILE_FOR_NCRISC -DNOC_INDEX=1";
  case KernelKind::Writer:
    return "-DCOMPILE_FOR_BRISC -DNOC_INDEX=0";
  case KernelKind::Compute:
    return "-DCOMPILE_FOR_TRISC=1 -DTRISC_MATH";
  }
  return "";
}

static std::string compileTimeArgsDefine(const std::vector<uint32_t> &args) {
  std::string list;
  for (size_t i = 0; i < args.size(); ++i)
    list += (i ? "," : "") + std::to_string(args[i]) + "u";
  return "-DKERNEL_COMPILE_TIME_ARGS=" + list;
}

/// Runs `cmd` (stdout and stderr to a log); returns the log on failure.
static Status runLogged(const std::string &cmd, const std::string &log,
                        const std::string &what) {
  std::string full = cmd + " > " + shellQuote(log) + " 2>&1";
  int rc = std::system(full.c_str());
  std::ifstream logIn(log);
  std::stringstream msg;
  msg << logIn.rdbuf();
  std::error_code ec;
  fs::remove(log, ec);
  if (rc != 0)
    return errorf(what, " failed (", cmd, "):\n", msg.str());
  return Status::ok();
}

Status checkDeviceBuild(const std::string &sourcePath, KernelKind kind,
                        Arch arch,
                        const std::vector<uint32_t> &compileTimeArgs,
                        SdkDeclarations decls) {
  std::string cxx = envOr("ATTN_TT_CXX", ATTN_TT_DEFAULT_CXX);
  std::string flags = "-O3 -flto=auto -ffast-math -DKERNEL_BUILD "
                      "-DTENSIX_FIRMWARE -DLOCAL_MEM_EN=0";
  for (const std::string &f : jitKernelFlags())
    flags += " " + f;
  for (const std::string &f : deprecationFlags())
    flags += " " + f;
  if (decls == SdkDeclarations::WithoutDeprecated)
    flags += " -DATTN_TT_SDK_WITHOUT_DEPRECATED";
  for (const std::string &d : archDefines(arch))
    flags += " " + d;
  flags += " -I" + shellQuote(ATTN_TT_SDK_INCLUDE_DIR) + " " +
           compileTimeArgsDefine(compileTimeArgs);
  std::vector<std::string> riscs;
  if (kind == KernelKind::Compute)
    riscs = {"-DCOMPILE_FOR_TRISC=0 -DTRISC_UNPACK",
             "-DCOMPILE_FOR_TRISC=1 -DTRISC_MATH",
             "-DCOMPILE_FOR_TRISC=2 -DTRISC_PACK"};
  else
    riscs = {riscDefine(kind)};
  std::string object = (fs::temp_directory_path() /
                        ("attn-tt-check-" + std::to_string(getpid()) + ".o"))
                           .string();
  for (const std::string &risc : riscs) {
    std::string cmd = shellQuote(cxx) + " " + flags + " " + risc + " -c -o " +
                      shellQuote(object) + " " + shellQuote(sourcePath);
    ATTN_RETURN_IF_ERROR(
        runLogged(cmd, object + ".log", "building kernel '" + sourcePath + "'"));
  }
  std::error_code ec;
  fs::remove(object, ec);
  return Status::ok();
}

KernelCompiler::KernelCompiler()
    : cacheDir_(envOr("ATTN_TT_CACHE_DIR",
                      "/tmp/attn-tt-kernels-" + std::to_string(getuid()))) {}

KernelCompiler::~KernelCompiler() {
  for (void *h : handles_)
    dlclose(h);
}

Result<KernelEntry>
KernelCompiler::load(const std::string &sourcePath, KernelKind kind,
                     Arch arch,
                     const std::vector<uint32_t> &compileTimeArgs) {
  std::ifstream in(sourcePath);
  if (!in)
    return errorf("cannot read kernel source '", sourcePath, "'");
  std::stringstream text;
  text << in.rdbuf();
  std::error_code ec;
  fs::path absolute = fs::absolute(sourcePath, ec);
  if (absolute.string().find_first_of("\"\n") != std::string::npos)
    return errorf("kernel path '", sourcePath, "' cannot be #included");

  std::string cxx = envOr("ATTN_TT_CXX", ATTN_TT_DEFAULT_CXX);
  std::string flags = "-O2 -fPIC -shared -DKERNEL_BUILD";
  for (const std::string &f : jitKernelFlags())
    flags += " " + f;
  for (const std::string &f : deprecationFlags())
    flags += " " + f;
  for (const std::string &d : archDefines(arch))
    flags += " " + d;
  flags += std::string(" ") + riscDefine(kind) + " -I" +
           shellQuote(ATTN_TT_SDK_INCLUDE_DIR) +
           " " + compileTimeArgsDefine(compileTimeArgs);

  fs::create_directories(cacheDir_, ec);
  if (ec)
    return errorf("cannot create kernel cache '", cacheDir_,
                  "': ", ec.message());
  // The key covers the kernel's text, not its path, so equal kernels share an
  // object; the wrapper includes the kernel by path, as the JIT build does.
  char key[17];
  std::snprintf(key, sizeof(key), "%016llx",
                static_cast<unsigned long long>(
                    fnv1a(text.str() + "\n" + cxx + " " + flags)));
  std::string object = cacheDir_ + "/kernel-" + key + ".so";

  if (!fs::exists(object)) {
    // Compile next to the final name and rename, so concurrent runs never
    // load a half-written object.
    std::string tmp =
        object + ".tmp" + std::to_string(getpid()) + std::to_string(rand());
    std::string wrapper = tmp + ".cpp";
    {
      std::ofstream w(wrapper);
      w << "#include \"" << absolute.string() << "\"\n"
        << "extern \"C\" __attribute__((visibility(\"default\"))) void "
           "attn_tt_kernel_entry() { kernel_main(); }\n";
    }
    std::string cmd = shellQuote(cxx) + " " + flags + " -o " +
                      shellQuote(tmp) + " " + shellQuote(wrapper);
    Status built =
        runLogged(cmd, tmp + ".log", "compiling kernel '" + sourcePath + "'");
    fs::remove(wrapper, ec);
    ATTN_RETURN_IF_ERROR(built);
    fs::rename(tmp, object, ec);
    if (ec)
      return errorf("cannot move kernel object to '", object,
                    "': ", ec.message());
  }

  void *handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return errorf("cannot load kernel '", object, "': ", dlerror());
  handles_.push_back(handle);
  auto *entry =
      reinterpret_cast<void (*)()>(dlsym(handle, "attn_tt_kernel_entry"));
  if (!entry)
    return errorf("kernel '", sourcePath, "' has no entry point");
  return KernelEntry(entry);
}

} // namespace attn::tt

//===- KernelCompiler.cpp - Builds emitted TT kernels for the emulator ---===//
#include "runtime/executors/tt/KernelCompiler.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace attn::tt {

namespace fs = std::filesystem;

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

KernelCompiler::KernelCompiler()
    : cacheDir_(envOr("ATTN_TT_CACHE_DIR",
                      "/tmp/attn-tt-kernels-" + std::to_string(getuid()))) {}

KernelCompiler::~KernelCompiler() {
  for (void *h : handles_)
    dlclose(h);
}

Result<KernelEntry>
KernelCompiler::load(const std::string &sourcePath,
                     const std::vector<uint32_t> &compileTimeArgs) {
  std::ifstream in(sourcePath);
  if (!in)
    return errorf("cannot read kernel source '", sourcePath, "'");
  std::stringstream text;
  text << in.rdbuf();

  std::string args;
  for (size_t i = 0; i < compileTimeArgs.size(); ++i)
    args += (i ? "," : "") + std::to_string(compileTimeArgs[i]) + "u";
  if (args.empty())
    args = "0u";
  std::string cxx = envOr("ATTN_TT_CXX", ATTN_TT_DEFAULT_CXX);
  std::string flags = "-std=c++17 -O2 -fPIC -shared -w -I" +
                      shellQuote(ATTN_TT_INCLUDE_DIR) +
                      " -DKERNEL_COMPILE_TIME_ARGS=" + args;

  std::error_code ec;
  fs::create_directories(cacheDir_, ec);
  if (ec)
    return errorf("cannot create kernel cache '", cacheDir_,
                  "': ", ec.message());
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
    std::string log = tmp + ".log";
    std::string cmd = shellQuote(cxx) + " " + flags + " -o " +
                      shellQuote(tmp) + " " + shellQuote(sourcePath) + " > " +
                      shellQuote(log) + " 2>&1";
    int rc = std::system(cmd.c_str());
    if (rc != 0) {
      std::ifstream logIn(log);
      std::stringstream msg;
      msg << logIn.rdbuf();
      fs::remove(log, ec);
      return errorf("compiling kernel '", sourcePath, "' failed (", cmd,
                    "):\n", msg.str());
    }
    fs::remove(log, ec);
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
    return errorf("kernel '", sourcePath,
                  "' has no entry point (kernel_main or MAIN)");
  return KernelEntry(entry);
}

} // namespace attn::tt

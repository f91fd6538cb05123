//===- CpuEmulator.cpp - AArch64 cpu kernels under qemu-user --------------===//

#include "devices/cpu/CpuEmulator.h"

#include "devices/cpu/CpuKernelLoader.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace attn::cpu {

namespace {

/// Where each buffer starts in the launch's memory file.
constexpr uint64_t kArgAlignment = 64;
/// How much of the launcher's output an error quotes.
constexpr size_t kMaxOutputText = 4096;
/// The line attn-cpu-launch prints when it has done its work.
constexpr std::string_view kLauncherDone = "attn-cpu-launch: done";

std::string procName(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

/// `program` as a path: itself when it has a slash, else the first
/// executable of that name in PATH; empty when there is none.
std::string findProgram(const std::string &program) {
  if (program.find('/') != std::string::npos)
    return program;
  const char *path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    size_t end = std::min(dirs.find(':'), dirs.size());
    std::string candidate =
        std::string(end ? dirs.substr(0, end) : ".") + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    dirs.remove_prefix(std::min(end + 1, dirs.size()));
  }
  return "";
}

/// Fails unless `path` is an executable file; `what` and `remedy` say what
/// it is for and where it comes from.
Status checkProgram(const std::string &path, std::string_view what,
                    std::string_view remedy) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return errorf(what, " ", path, ": ", std::strerror(errno), " (", remedy,
                  ")");
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0)
    return errorf(what, " ", path, " is not an executable file (", remedy, ")");
  return Status::ok();
}

/// The launcher's output, one line, at most kMaxOutputText bytes of it.
std::string readOutput(int fd) {
  std::string text;
  char chunk[512];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    if (text.size() < kMaxOutputText)
      text.append(chunk, std::min(size_t(n), kMaxOutputText - text.size()));
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

/// How a process that did not exit with 0 ended.
std::string describeExit(int status) {
  if (WIFEXITED(status))
    return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended with wait status " + std::to_string(status);
}

/// A region of host memory the launch's memory file holds a copy of: one
/// or more arguments that overlap.
struct Segment {
  uint8_t *begin;
  uint8_t *end;
  uint64_t offset;
};

/// The segments of `args`' buffers, and each argument's offset in the file
/// (-1: no buffer); `fileBytes` is the file's size.
std::vector<Segment> layOut(std::span<const EmulatedArg> args,
                            std::vector<int64_t> &argOffsets,
                            uint64_t &fileBytes) {
  std::vector<size_t> order;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].data)
      order.push_back(i);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return args[a].data < args[b].data; });
  std::vector<Segment> segments;
  argOffsets.assign(args.size(), -1);
  fileBytes = 0;
  for (size_t i : order) {
    uint8_t *begin = args[i].data, *end = begin + args[i].bytes;
    if (segments.empty() || begin > segments.back().end) {
      fileBytes =
          (fileBytes + kArgAlignment - 1) / kArgAlignment * kArgAlignment;
      segments.push_back({begin, end, fileBytes});
    }
    Segment &s = segments.back();
    s.end = std::max(s.end, end);
    fileBytes = s.offset + uint64_t(s.end - s.begin);
    argOffsets[i] = int64_t(s.offset + uint64_t(begin - s.begin));
  }
  return segments;
}

/// A memory file of `bytes` bytes mapped shared (`map`, null when empty).
class LaunchMemory {
public:
  ~LaunchMemory() {
    if (map && map != MAP_FAILED)
      ::munmap(map, bytes);
    if (fd >= 0)
      ::close(fd);
  }

  Status create(std::string_view what, uint64_t size) {
    bytes = size;
    fd = memfd_create("attn-cpu-launch-memory", MFD_CLOEXEC);
    if (fd < 0)
      return errorf(what, ": memfd_create failed: ", std::strerror(errno));
    if (::ftruncate(fd, off_t(bytes)) != 0)
      return errorf(what, ": sizing the launch's memory file to ", bytes,
                    " bytes failed: ", std::strerror(errno));
    if (bytes == 0)
      return Status::ok();
    void *mapped =
        ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED)
      return errorf(what, ": mapping the launch's memory file failed: ",
                    std::strerror(errno));
    map = static_cast<uint8_t *>(mapped);
    return Status::ok();
  }

  int fd = -1;
  uint8_t *map = nullptr;
  uint64_t bytes = 0;
};

} // namespace

EmulatedKernel::~EmulatedKernel() {
  if (fd_ >= 0)
    ::close(fd_);
}

EmulatedKernel::EmulatedKernel(EmulatedKernel &&other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      entryPoint_(std::move(other.entryPoint_)) {}

EmulatedKernel &EmulatedKernel::operator=(EmulatedKernel &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    entryPoint_ = std::move(other.entryPoint_);
  }
  return *this;
}

Result<std::unique_ptr<CpuEmulator>>
CpuEmulator::create(const CpuEmulatorOptions &options) {
  CpuEmulatorOptions found = options;
  found.emulator = findProgram(options.emulator);
  if (found.emulator.empty())
    return errorf("the cpu emulator ", options.emulator,
                  " is not in PATH (Debian package qemu-user)");
  ATTN_RETURN_IF_ERROR(checkProgram(found.emulator, "the cpu emulator",
                                    "Debian package qemu-user"));
  if (options.launcher.empty())
    return errorf("the cpu emulator ", found.emulator,
                  " needs attn-cpu-launch built for AArch64, and none was "
                  "named");
  ATTN_RETURN_IF_ERROR(checkProgram(
      options.launcher, "the cpu emulator's launcher",
      "attn-cpu-launch, built for AArch64 where clang and Debian's "
      "libc6-dev-arm64-cross are installed"));
  struct stat st;
  if (!options.sysroot.empty() &&
      (::stat(options.sysroot.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)))
    return errorf("the cpu emulator's AArch64 libraries ", options.sysroot,
                  " are not a folder (Debian package libc6-arm64-cross)");
  return std::unique_ptr<CpuEmulator>(new CpuEmulator(found));
}

Status CpuEmulator::runLauncher(std::string_view what,
                                const EmulatedKernel &kernel, int memoryFd,
                                std::span<const std::string> args) const {
  std::vector<std::string> argv = {options_.emulator};
  if (!options_.sysroot.empty()) {
    argv.push_back("-L");
    argv.push_back(options_.sysroot);
  }
  argv.push_back(options_.launcher);
  argv.push_back(procName(kernel.fd_));
  argv.push_back(kernel.entryPoint_);
  if (memoryFd >= 0)
    argv.push_back(procName(memoryFd));
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char *> argvPointers;
  for (std::string &arg : argv)
    argvPointers.push_back(arg.data());
  argvPointers.push_back(nullptr);

  // Its stdout and stderr come back through a pipe (the tool's own stay
  // clean). Duplicating a descriptor onto itself clears its close-on-exec
  // flag, so the memory files are open in the process and nothing else of
  // ours is.
  int output[2];
  if (::pipe2(output, O_CLOEXEC) != 0)
    return errorf(what, ": pipe2 failed: ", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output[1], STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, kernel.fd_, kernel.fd_);
  if (memoryFd >= 0)
    posix_spawn_file_actions_adddup2(&actions, memoryFd, memoryFd);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, options_.emulator.c_str(), &actions, nullptr,
                            argvPointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(output[1]);
  if (spawned != 0) {
    ::close(output[0]);
    return errorf(what, ": cannot run the cpu emulator ", options_.emulator,
                  ": ", std::strerror(spawned));
  }
  std::string text = readOutput(output[0]);
  ::close(output[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return errorf(what, ": waiting for the cpu emulator failed: ",
                    std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (text == kLauncherDone)
      return Status::ok();
    return errorf(what, " under ", options_.emulator, ": ", options_.launcher,
                  " exited without saying '", kLauncherDone,
                  "'; is it attn-cpu-launch?",
                  text.empty() ? "" : " It printed: " + text);
  }
  // The launcher exits with 1 after one line that says why.
  bool explained = WIFEXITED(status) && WEXITSTATUS(status) == 1;
  std::string how = describeExit(status);
  return errorf(what, " under ", options_.emulator, ": ",
                text.empty() ? how
                : explained  ? text
                             : text + " (" + how + ")");
}

Result<EmulatedKernel> CpuEmulator::load(std::string_view what,
                                         std::string_view bytes,
                                         std::string_view entryPoint) const {
  Result<int> fd = sealedMemoryFile(what, bytes);
  if (!fd)
    return fd.status();
  EmulatedKernel kernel;
  kernel.fd_ = *fd;
  kernel.entryPoint_ = std::string(entryPoint);
  ATTN_RETURN_IF_ERROR(runLauncher(what, kernel, /*memoryFd=*/-1, {}));
  return kernel;
}

Status CpuEmulator::launch(std::string_view what, const EmulatedKernel &kernel,
                           const std::array<uint32_t, 3> &grid,
                           std::span<const EmulatedArg> args) const {
  std::vector<int64_t> offsets;
  uint64_t fileBytes = 0;
  std::vector<Segment> segments = layOut(args, offsets, fileBytes);
  LaunchMemory memory;
  ATTN_RETURN_IF_ERROR(memory.create(what, fileBytes));
  for (const Segment &s : segments)
    std::copy(s.begin, s.end, memory.map + s.offset);

  std::vector<std::string> launchArgs;
  for (uint32_t size : grid)
    launchArgs.push_back(std::to_string(size));
  for (size_t i = 0; i < args.size(); ++i)
    launchArgs.push_back(
        (offsets[i] < 0 ? std::string("-") : std::to_string(offsets[i])) + ":" +
        std::to_string(args[i].elements));
  ATTN_RETURN_IF_ERROR(runLauncher(what, kernel, memory.fd, launchArgs));

  // Segments the kernel only read come back unchanged.
  for (const Segment &s : segments)
    std::copy(memory.map + s.offset, memory.map + s.offset + (s.end - s.begin),
              s.begin);
  return Status::ok();
}

} // namespace attn::cpu

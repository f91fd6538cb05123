/*===- attn-cpu-launch.c - One launch of a cpu kernel, in a process ------===*
 *
 * The other half of the CPU device's emulated path (devices/cpu/
 * CpuEmulator.h): built for AArch64 and run under qemu-user on an x86-64
 * host, it loads one cpu kernel (core/CpuKernel.h) and runs the work items
 * of one launch over buffers the host shares with it through a file. Test
 * tooling, so that CI runs the AArch64 kernels; not a serving path. Plain C,
 * so that it needs the target's C library alone.
 *
 *   attn-cpu-launch KERNEL ENTRY
 *       loads the shared object KERNEL and checks its attn_cpu_abi and
 *       entry point ENTRY, then exits
 *   attn-cpu-launch KERNEL ENTRY MEMORY X Y Z ARG...
 *       also maps the file MEMORY (shared, so that what the kernel writes
 *       lands in it) and calls ENTRY once per work item of the grid
 *       X x Y x Z; ARG i is argument i as OFFSET:ELEMENTS, its first byte's
 *       offset in MEMORY and its element count, or -:ELEMENTS for none
 *
 * The device passes KERNEL and MEMORY as /proc/self/fd/N of memory files it
 * made and the process inherits. Exits 0 after printing "attn-cpu-launch:
 * done" (so that the device knows it ran the launcher, not some other
 * program that exits 0), or 1 with one line on stderr.
 *
 *===---------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* core/CpuKernel.h's kCpuKernelAbi and its symbol. */
#define ATTN_CPU_KERNEL_ABI 1u
#define ATTN_CPU_KERNEL_ABI_SYMBOL "attn_cpu_abi"

typedef void (*Entry)(const int64_t *workItem, void *const *buffers,
                      const int64_t *elements);

static int fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("attn-cpu-launch: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  return 1;
}

/* What the device waits for on stdout before it believes a launch ran. */
static int done(void) {
  puts("attn-cpu-launch: done");
  return fflush(stdout) == 0 ? 0 : 1;
}

/* The address of `symbol` when the object at `path` defines it itself:
 * dlsym also finds its dependencies' symbols (the C library's...). */
static void *lookup(void *handle, const char *path, const char *symbol,
                    const char **why) {
  dlerror();
  void *address = dlsym(handle, symbol);
  if (!address) {
    const char *error = dlerror();
    *why = error ? error : "not found";
    return NULL;
  }
  Dl_info info;
  if (!dladdr(address, &info) || !info.dli_fname ||
      strcmp(info.dli_fname, path) != 0) {
    *why = "defined by another object, not by the kernel object";
    return NULL;
  }
  return address;
}

/* Parses all of `text` as a number from 0 to `max`. */
static int parseCount(const char *text, int64_t max, int64_t *value) {
  char *end = NULL;
  errno = 0;
  long long parsed = strtoll(text, &end, 10);
  if (errno || end == text || *end || parsed < 0 || parsed > max)
    return 0;
  *value = parsed;
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc < 7)
    return fail("usage: attn-cpu-launch KERNEL ENTRY [MEMORY X Y Z "
                "OFFSET:ELEMENTS...]");
  const char *path = argv[1], *entryName = argv[2];
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail("cannot load the kernel object: %s", dlerror());
  const char *why = NULL;
  const uint32_t *abi = lookup(handle, path, ATTN_CPU_KERNEL_ABI_SYMBOL, &why);
  if (!abi)
    return fail("the kernel exports no %s (%s); this runtime runs kernels "
                "of %s = %u",
                ATTN_CPU_KERNEL_ABI_SYMBOL, why, ATTN_CPU_KERNEL_ABI_SYMBOL,
                ATTN_CPU_KERNEL_ABI);
  if (*abi != ATTN_CPU_KERNEL_ABI)
    return fail("the kernel has %s = %u; this runtime runs kernels of %s = "
                "%u (recompile it with a matching attn-compile)",
                ATTN_CPU_KERNEL_ABI_SYMBOL, *abi, ATTN_CPU_KERNEL_ABI_SYMBOL,
                ATTN_CPU_KERNEL_ABI);
  /* POSIX allows converting dlsym's object pointer to a function pointer. */
  Entry entry;
  void *entryAddress = lookup(handle, path, entryName, &why);
  if (!entryAddress)
    return fail("the kernel has no entry point %s (%s)", entryName, why);
  memcpy(&entry, &entryAddress, sizeof entry);
  if (argc == 3)
    return done();

  int fd = open(argv[3], O_RDWR | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0)
    return fail("cannot open the launch's memory %s: %s", argv[3],
                strerror(errno));
  uint8_t *memory = NULL;
  if (st.st_size > 0) {
    memory = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                  fd, 0);
    if (memory == MAP_FAILED)
      return fail("cannot map the launch's memory: %s", strerror(errno));
  }
  close(fd);

  int64_t grid[3];
  for (int d = 0; d < 3; ++d)
    if (!parseCount(argv[4 + d], UINT32_MAX, &grid[d]))
      return fail("grid size '%s' is not a count from 0 to 2^32 - 1",
                  argv[4 + d]);
  int args = argc - 7;
  void **buffers = calloc((size_t)args + 1, sizeof *buffers);
  int64_t *elements = calloc((size_t)args + 1, sizeof *elements);
  if (!buffers || !elements)
    return fail("out of memory");
  for (int i = 0; i < args; ++i) {
    const char *arg = argv[7 + i];
    const char *colon = strchr(arg, ':');
    char offsetText[32];
    size_t length = colon ? (size_t)(colon - arg) : 0;
    if (!colon || length == 0 || length >= sizeof offsetText)
      return fail("argument %d is '%s', not OFFSET:ELEMENTS", i, arg);
    memcpy(offsetText, arg, length);
    offsetText[length] = '\0';
    int64_t offset = 0;
    if (!parseCount(colon + 1, INT64_MAX, &elements[i]))
      return fail("argument %d's element count '%s' is not a count", i,
                  colon + 1);
    if (strcmp(offsetText, "-") == 0)
      continue;
    if (!parseCount(offsetText, st.st_size, &offset))
      return fail("argument %d's offset '%s' is not within the %lld bytes of "
                  "the launch's memory",
                  i, offsetText, (long long)st.st_size);
    buffers[i] = memory ? memory + offset : NULL;
  }

  int64_t item[3];
  for (item[2] = 0; item[2] < grid[2]; ++item[2])
    for (item[1] = 0; item[1] < grid[1]; ++item[1])
      for (item[0] = 0; item[0] < grid[0]; ++item[0])
        entry(item, buffers, elements);
  return done();
}

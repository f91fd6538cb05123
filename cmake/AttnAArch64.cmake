# What the CPU device's emulated AArch64 path (devices/cpu/CpuEmulator.h)
# needs besides the device: qemu-aarch64 to run AArch64 programs, and clang
# with Debian's arm64 C library (libc6-dev-arm64-cross, libgcc-12-dev-arm64-
# cross) to build them: tools/attn-cpu-launch and the unit tests' AArch64
# kernels. scripts/setup installs all of it. Where a piece is missing,
# ATTN_AARCH64_EMULATION is OFF, none of it is built, and the tests that
# need it report UNSUPPORTED (lit) or skip (GoogleTest), saying why.
find_program(ATTN_AARCH64_CLANG NAMES clang-22 clang
  HINTS /usr/lib/llvm-22/bin)
find_program(ATTN_QEMU_AARCH64 qemu-aarch64)
set(ATTN_AARCH64_SYSROOT /usr/aarch64-linux-gnu CACHE PATH
  "The AArch64 C library's root: qemu-aarch64's -L")

set(ATTN_AARCH64_EMULATION OFF)
if(NOT ATTN_AARCH64_CLANG)
  message(STATUS "AArch64 emulation: off (no clang-22)")
elseif(NOT ATTN_QEMU_AARCH64)
  message(STATUS "AArch64 emulation: off (no qemu-aarch64: Debian package "
                 "qemu-user)")
elseif(NOT EXISTS ${ATTN_AARCH64_SYSROOT}/lib/libc.so)
  message(STATUS "AArch64 emulation: off (no ${ATTN_AARCH64_SYSROOT}/lib/"
                 "libc.so: Debian package libc6-dev-arm64-cross)")
else()
  set(ATTN_AARCH64_EMULATION ON)
  message(STATUS "AArch64 emulation: ${ATTN_QEMU_AARCH64}")
endif()

# attn_add_aarch64_binary(TARGET OUTPUT SOURCE [FLAGS...]): builds OUTPUT
# (a program, or with -shared a shared object) for AArch64 Linux from the C
# file SOURCE, as target TARGET of `all`.
function(attn_add_aarch64_binary target output source)
  add_custom_command(OUTPUT ${output}
    COMMAND ${ATTN_AARCH64_CLANG} --target=aarch64-linux-gnu -fuse-ld=lld
            -O2 -Wall -Wextra -Werror ${ARGN}
            ${CMAKE_CURRENT_SOURCE_DIR}/${source} -o ${output}
    DEPENDS ${source}
    COMMENT "Building AArch64 ${target}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${output})
endfunction()

# -*- Python -*-
"""lit configuration for attn's tests, loaded by lit.cfg.py once the build
tree's lit.site.cfg.py has set the paths."""

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "attn"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.attn.cfg.py",
                   "lit.site.cfg.py", "unit", "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# attn's tools too, for the scripts under Inputs/ (attn-bundle show).
llvm_config.with_environment("PATH", config.attn_tools_dir, append_path=True)

config.substitutions.append(("%PYTHON", config.python_executable))
config.substitutions.append(("%attn_src", config.attn_src_root))
config.substitutions.append(("%attn_tools_dir", config.attn_tools_dir))
config.substitutions.append(("%attn_version", config.attn_version))
# The host compiler, for tests that compile C++ against attn's declarations
# of the TT-Metalium SDK.
config.substitutions.append(("%cxx", config.cxx_compiler))

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = ["attn-opt", "attn-translate", "attn-run", "attn-compile", "attn-diff",
         "attn-host-example", "attn-tt-run", "attn-vulkan-info",
         "attn-bundle", "attn-bundle-check", "attn-serving-step", "attn-cuda-check",
         "FileCheck", "not", "count", "split-file"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], tool_dirs)

# Optional external tools become lit features; tests that need one say
# `REQUIRES: <feature>` and are reported as skipped (with this reason) when it
# is missing.
def _which(name, extra=()):
    for d in extra:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return shutil.which(name)

spirv_val = _which("spirv-val")
if spirv_val:
    config.available_features.add("spirv-val")
    config.substitutions.append(("%spirv-val", spirv_val))

ptxas = _which("ptxas", ["/usr/local/cuda/bin"])
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# No Metal compiler here: emitted MSL is type-checked as C++14 (what MSL 2.x
# is based on) by clang 22 against a stub of the Metal declarations it uses;
# an attribute the stub does not know is an error.
clang_msl = next((c for c in ["/usr/lib/llvm-22/bin/clang++",
                              shutil.which("clang++-22")]
                  if c and os.path.exists(c)), None)
if clang_msl:
    config.available_features.add("msl-syntax-check")
    msl_inputs = os.path.join(config.test_source_root, "Target", "MSL",
                              "Inputs", "include")
    config.substitutions.append(
        ("%clang_msl_check",
         f"{clang_msl} -x c++ -std=c++14 -fsyntax-only "
         f"-Werror=unknown-attributes -I {msl_inputs}"))

# Headless Chromium renders attn-diff --report pages to screenshots that
# the report test reads back by colour: `REQUIRES: chromium`.
chromium = _which("chromium")
if chromium:
    config.available_features.add("chromium")
    config.substitutions.append(
        ("%chromium_screenshot",
         f"timeout 120 {chromium} --headless --no-sandbox --disable-gpu "
         "--force-color-profile=srgb --hide-scrollbars"))

# NumPy for the independent oracle in Reference tests: Debian's python3-numpy
# lives under /usr/bin/python3, which may not be the python3 first on PATH.
for py in ["/usr/bin/python3", config.python_executable]:
    if py and os.path.exists(py) and os.system(
            f'"{py}" -c "import numpy" >/dev/null 2>&1') == 0:
        config.available_features.add("numpy")
        config.substitutions.append(("%numpy_python", py))
        break

# A Vulkan device (lavapipe in CI): tests that run kernels say
# `REQUIRES: vulkan` and are reported as skipped, with this reason, where the
# build has no Vulkan executor or the machine no device.
import subprocess
vulkan_info = os.path.join(config.attn_tools_dir, "attn-vulkan-info")
if os.path.exists(vulkan_info) and subprocess.run(
        [vulkan_info], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("vulkan")

# The tools built only with their device: a feature each where built.
for tool in ["attn-vulkan-info", "attn-cuda-check", "attn-tt-run"]:
    if os.path.exists(os.path.join(config.attn_tools_dir, tool)):
        config.available_features.add(tool)

# The CUDA device: `cuda-device-built` where this build has it,
# `cuda-driver` where this machine has libcuda.so.1 (the device dlopens it).
import ctypes
if getattr(config, "attn_cuda_device", False):
    config.available_features.add("cuda-device-built")
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# AArch64 cpu kernels under qemu-user (devices/cpu/CpuEmulator.h): the build
# makes attn-cpu-launch only where cmake/AttnAArch64.cmake found qemu-aarch64,
# clang-22 and the arm64 C library. `REQUIRES: qemu-aarch64`.
qemu_aarch64 = _which("qemu-aarch64")
if qemu_aarch64 and os.path.exists(
        os.path.join(config.attn_tools_dir, "attn-cpu-launch")):
    config.available_features.add("qemu-aarch64")
    config.substitutions.append(
        ("%cpu_aarch64", "--backend cpu --cpu-isa=aarch64 "
         f"--cpu-emulator={qemu_aarch64}"))

for var in ["XDG_RUNTIME_DIR", "VK_ICD_FILENAMES", "VK_DRIVER_FILES",
            "VK_INSTANCE_LAYERS", "HOME"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

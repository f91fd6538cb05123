//===- Passes.td - attn lowering passes --------------------*- tablegen -*-===//
//
// Conversions from the attn dialect towards device code. Each conversion lives
// in its own folder (AttnToGPU/, GPUToSPIRV/, ...); this file declares them
// all.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LOWERING_PASSES_TD
#define ATTN_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToGPU : Pass<"convert-attn-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lowers attn ops on memrefs to one target-neutral GPU kernel "
                "per op and its launch";
  let description = [{
    Works on bufferized IR: attn ops on memrefs inside `func.func`. Every op
    instance becomes one or more `gpu.func` kernels, each in a `gpu.module`
    of its own (so every target's binary is one kernel), written with
    upstream dialects only (gpu, scf, arith, math, memref, vector), and the
    op itself is replaced, in the host
    function, by the `gpu.launch_func` ops that run those kernels. The host
    function is the launch description: grid sizes come from `memref.dim` of
    the operands, and a small i32 params buffer carries the dynamic sizes.

    Kernel ABI (the same for SPIR-V and NVVM, see
    lowering/AttnToGPU/KernelABI.h): every argument is a 1-D `memref<?xT>`
    (operands flattened on the host, indices computed in the kernel), in op
    operand order with `!attn.metadata` expanded to its tensors, followed by
    one `memref<?xi32>` params buffer whose fields the `attn.params` attribute
    of the kernel names. Head counts, head sizes and block sizes must be
    static: they shape the kernel.

    Kernels: paged_attention computes the online softmax (running max, sum
    and accumulator, exp2 of log2(e)-scaled scores) of one query token and
    the query heads of one kv head per workgroup of `attention-subgroups`
    subgroups; a head row is spread over a group of lanes (chunks of
    `vector-load-bytes`, or `vector-width` elements), several rows per
    subgroup, keys dealt round-robin to the row groups a few per step, and
    the partial states merged by shuffles and through workgroup memory (see
    lowering/AttnToGPU/PagedAttention.cpp). With `tiled-prefill`, that
    kernel takes the decodes of a batch and a tiled FlashAttention-2 kernel
    the longer requests: a workgroup takes a tile of query tokens times
    query heads of one kv head and walks the keys they see in tiles staged
    in workgroup memory (lowering/AttnToGPU/PagedPrefill.cpp); the host
    launches both over grids bounded by the shapes, and each kernel skips
    the requests that are not its own. Then reshape_and_cache,
    merge_states, mla_decode, and split-KV decode (a partial kernel writing
    per-split outputs and log-sum-exps, then a reduce kernel).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
  let options = [
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"32",
           "Invocations per subgroup (a power of two); attention kernels "
           "reduce dot products across lanes of one subgroup">,
    Option<"workgroupSize", "workgroup-size", "int64_t", /*default=*/"0",
           "Invocations per workgroup of the element-wise kernels "
           "(reshape_and_cache, merge_states, split-KV reduce); 0: the "
           "subgroup size">,
    Option<"maxWorkgroupMemory", "max-workgroup-memory", "int64_t",
           /*default=*/"16384",
           "Bytes of workgroup memory a kernel may use (16384 is Vulkan's "
           "guaranteed minimum); paged_attention uses fewer subgroups when "
           "its merge buffer would not fit">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"1",
           "Contiguous elements of the head dimension one lane owns, so that "
           "a lane's loads are contiguous (scalar loads)">,
    Option<"vectorLoadBytes", "vector-load-bytes", "int64_t",
           /*default=*/"0",
           "Widest load, in bytes, a lane of paged_attention issues: lanes "
           "own chunks of that many bytes of a cache row and read each with "
           "one aligned vector load (16 on NVIDIA); 0: scalar loads with "
           "vector-width">,
    Option<"attentionSubgroups", "attention-subgroups", "int64_t",
           /*default=*/"4",
           "Subgroups per paged_attention workgroup; they share the keys and "
           "merge through workgroup memory">,
    Option<"bf16AsI16", "bf16-as-i16", "bool", /*default=*/"false",
           "Pass bf16 buffers to kernels as i16 words and convert them with "
           "integer ops in the kernel, for devices without bf16">,
    Option<"splitKv", "split-kv", "int64_t", /*default=*/"0",
           "Split-KV decode: 0 chooses (num_kv_splits for mla_decode, one "
           "pass for paged_attention), N forces N splits followed by a reduce "
           "kernel">,
    Option<"laneRegisters", "lane-registers", "int64_t", /*default=*/"128",
           "Values (32-bit registers) one lane may keep live; the attention "
           "kernels size their tiles by it (a GPU: about half its registers "
           "per thread; a CPU device spills to cache cheaply and can take "
           "thousands)">,
    Option<"tiledPrefill", "tiled-prefill", "bool", /*default=*/"true",
           "paged_attention: a tiled FlashAttention-2 kernel takes the "
           "requests longer than the decode threshold, the per-token kernel "
           "the others (false: the per-token kernel takes every request)">,
    Option<"prefillMatrix", "prefill-matrix", "std::string",
           /*default=*/"\"none\"",
           "Products of the tiled prefill kernel: none (SIMT lanes), "
           "subgroup-mma (a subgroup's matrix unit through gpu.subgroup_mma_*, "
           "for f16 caches with head sizes a multiple of 16 whose tiles fit "
           "matrix-workgroup-memory and need no more subgroups than the SIMT "
           "kernel's; other variants keep SIMT products, with a warning), "
           "auto (subgroup-mma where it applies, SIMT products elsewhere "
           "without a warning: a target's default), or emulate (that kernel "
           "with SIMT products, to test it on any device)">,
    Option<"matrixWorkgroupMemory", "matrix-workgroup-memory", "int64_t",
           /*default=*/"0",
           "Bytes of workgroup memory the tiled prefill kernel may use on "
           "matrix units (0: max-workgroup-memory); an NVIDIA block has 48 "
           "KiB of static shared memory on every GPU with matrix units">,
    Option<"rowVectors", "row-vectors", "bool", /*default=*/"false",
           "paged_attention's per-token kernel for one invocation per "
           "workgroup (a CPU core's SIMD registers, not lanes): whole head "
           "rows as vectors, the keys of a cache block scored before one "
           "softmax update; needs subgroup-size=1 and attention-subgroups=1">,
    Option<"fp8ViaF16", "fp8-via-f16", "bool", /*default=*/"false",
           "fp8 cache bytes widen to f32 through f16 (a byte shift, then the "
           "f16 to f32 conversion: one instruction on CPUs, F16C or "
           "AArch64's fcvtl) instead of integer operations only; exact where "
           "that conversion keeps f16 subnormals, which GPUs may flush">,
    Option<"fp8Calls", "fp8-calls", "bool", /*default=*/"false",
           "The fp8 codec as calls of private functions of each gpu.module "
           "(`__attn_fp8_e4m3_to_f32`, `__attn_f32_to_fp8_e5m2`, ...) whose "
           "bodies are the integer codec, for a target pass to give them the "
           "device's conversions (attn-nvvm-fp8-convert on PTX) and inline "
           "them">,
    Option<"decodeThreshold", "decode-threshold", "int64_t",
           /*default=*/"-1",
           "paged_attention with tiled-prefill: requests with at most this "
           "many query tokens go to the per-token kernel; -1: the backend's "
           "reorder_batch_threshold, or 1 without one">,
  ];
}

def AttnSPIRVAttachTarget : Pass<"attn-spirv-attach-target",
                                  "::mlir::ModuleOp"> {
  let summary = "Attaches a Vulkan SPIR-V target environment to attn's "
                "kernels";
  let description = [{
    Puts a `#spirv.target_env` on the module: SPIR-V 1.3 (Vulkan 1.1), with
    Shader, Float16, Int16, Int8, Int64, 16- and 8-bit storage-buffer
    access and non-uniform subgroup arithmetic, shuffle and ballot, and the
    subgroup size convert-attn-to-gpu built the kernels for (the
    `attn.subgroup_size` of their gpu.modules); with `buffer-addresses`,
    also buffers by device address. A gpu.module whose kernels compute on
    matrices (`gpu.subgroup_mma_*`, from prefill-matrix=subgroup-mma) gets
    SPIR-V 1.6 with SPV_KHR_cooperative_matrix (16x16x16 f16 products into
    f32) and the Vulkan memory model instead. Gives every kernel a
    `spirv.entry_point_abi` whose workgroup size is its `known_block_size`,
    which the GPU to SPIR-V conversion needs. First step of the
    `attn-gpu-to-spirv` pipeline.
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
  let options = [
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"0",
           "0: the subgroup size the kernels were built for (32 for "
           "gpu.modules that do not say); another size must match it">,
    Option<"bufferAddresses", "buffer-addresses", "bool", /*default=*/"false",
           "Adds PhysicalStorageBufferAddresses and "
           "SPV_KHR_physical_storage_buffer, for attn-spirv-buffer-addresses">,
  ];
}

def AttnSPIRVWorkgroupMemory : Pass<"attn-spirv-workgroup-memory",
                                    "::mlir::ModuleOp"> {
  let summary = "Turns the workgroup attributions of attn's kernels into "
                "Workgroup allocations";
  let description = [{
    Upstream's `convert-gpu-to-spirv` does not lower the workgroup
    attributions of a `gpu.func`, but it does lower a `memref.alloc` in the
    `Workgroup` storage class (to a `spirv.GlobalVariable`). This pass
    replaces each attribution of a kernel by such an allocation at the top
    of its body.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::spirv::SPIRVDialect"];
}

def AttnSPIRVVectorLoads : Pass<"attn-spirv-vector-loads",
                                "::mlir::ModuleOp"> {
  let summary = "Turns the vector loads of attn's kernels from their buffer "
                "arguments into loads of 32-bit words";
  let description = [{
    SPIR-V's logical addressing has no pointer casts, so upstream's
    conversion of a `vector.load` of 8- or 16-bit elements (or of a vector wider
    than SPIR-V allows) from a storage buffer has no valid form. The kernels
    of convert-attn-to-gpu read 4, 8, 16 or 32 bytes at a time from their
    1-D buffer arguments, aligned to the load's size, and use the result only
    through `vector.extract` (static positions) and `vector.bitcast` to
    words. With `alias`, each such load becomes one load of an i32,
    vector<2xi32>, vector<4xi32> or vector<4xi64> from a second argument
    that views the
    same binding with that element type (its `spirv.interface_var_abi`
    names the original binding; Vulkan lets storage buffers alias), and the
    extracts take their bits from the words: the device sees one wide load.
    Without it (for SPIRV-Cross to MSL), the load becomes scalar loads of its
    elements. The kernels' launches get the aliased operands through an
    `unrealized_conversion_cast`: the host side of a module this pass ran on
    only describes the kernels' interface, it is not meant to run.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::spirv::SPIRVDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"alias", "alias", "bool", /*default=*/"true",
           "Read through an aliased binding of 32-bit words (false: scalar "
           "loads)">,
  ];
}

def AttnSPIRVBufferAddresses : Pass<"attn-spirv-buffer-addresses",
                                    "::mlir::spirv::ModuleOp"> {
  let summary = "Passes a SPIR-V kernel's buffers by 64-bit device address";
  let description = [{
    A storage-buffer binding shows at most the device's
    maxStorageBufferRange (128 MiB on lavapipe), less than a KV cache needs.
    This pass replaces the bindings that `spirv-lower-abi-attrs` made of a
    kernel's arguments (set 0, binding i) by one push-constant block of u64
    device addresses, argument i at offset 8 i. Each use converts its
    address to a `PhysicalStorageBuffer` pointer to the same
    `{ T data[]; }` block and rebuilds the access chains on it; every load
    and store gets the `Aligned` access of its scalar size. The module's
    addressing model becomes PhysicalStorageBuffer64; `spirv-update-vce`
    then adds PhysicalStorageBufferAddresses and
    SPV_KHR_physical_storage_buffer. Element indices stay i32, so a buffer
    holds at most 2^31 - 1 elements.
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

def ConvertAttnMathToSPIRV : Pass<"convert-attn-math-to-spirv",
                                  "::mlir::ModuleOp"> {
  let summary = "Converts the math ops of attn's kernels to SPIR-V";
  let description = [{
    Upstream's math to SPIR-V patterns plus `math.exp2` to `GL.Exp2`, which
    the online softmax uses and upstream leaves out. Runs before
    `convert-gpu-to-spirv`, which does not convert math ops itself.
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

def AttnLowerSubgroupReduce : Pass<"attn-lower-subgroup-reduce",
                                   "::mlir::ModuleOp"> {
  let summary = "Expands the subgroup reductions of attn's kernels into "
                "shuffles";
  let description = [{
    Rewrites every `gpu.subgroup_reduce` inside a `gpu.module` into a
    butterfly of `gpu.shuffle xor` ops over the subgroup's lanes, with
    upstream's patterns (vectors are first broken down into 32-bit pieces).
    `convert-gpu-to-nvvm` lowers `gpu.subgroup_reduce` only for i32 (to
    `redux.sync`), while the attention kernels reduce f32 dot products, so
    the NVVM path runs this first. It also expands `gpu.subgroup_id` (which
    `convert-gpu-to-nvvm` does not lower) into the linear thread id over the
    subgroup size. Host code is left alone.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::vector::VectorDialect",
  ];
  let options = [
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"0",
           "Lanes of a subgroup (NVIDIA: a warp of 32); 0: the size the "
           "kernels were built for (32 for gpu.modules that do not say)">,
  ];
}

def AttnNVVMRegisterBudget : Pass<"attn-nvvm-register-budget",
                                  "::mlir::ModuleOp"> {
  let summary = "Lets kernels of small workgroups use a thread's 255 "
                "registers";
  let description = [{
    Sets `nvvm.maxnreg = 255` on every kernel `gpu.func` whose
    `known_block_size` has at most 256 invocations (so one workgroup still
    fits the 64 K registers of an SM). Without it ptxas for sm_90 caps such
    kernels below what they need and spills (the tiled prefill kernel on
    matrix units: 168 registers and 40 bytes of spills at 64 invocations,
    196 registers and none with the budget). Kernels of larger or unknown
    workgroups are left alone.
  }];
}

def AttnNVVMFp8Convert : Pass<"attn-nvvm-fp8-convert", "::mlir::ModuleOp"> {
  let summary = "Gives the fp8 codec of attn's kernels the hardware "
                "conversions of sm_89 and later, and inlines it";
  let description = [{
    Works on the fp8 codec functions that convert-attn-to-gpu makes with
    `fp8-calls` (private `func.func`s marked `attn.fp8_to_f32` or
    `attn.f32_to_fp8`, whose bodies are the integer codec). In a gpu.module
    whose `#nvvm.target` chips are all sm_89 or later, each gets the PTX
    conversions as its body: bytes to f32 by pairs through
    `nvvm.convert.f8x2.to.f16x2` (`cvt.rn.f16x2.e4m3x2` / `.e5m2x2`) and an
    f16 to f32 extension, both exact; an f32 to its byte through
    `nvvm.convert.f32x2.to.f8x2` with rn and satfinite
    (`cvt.rn.satfinite.e4m3x2.f32` / `.e5m2x2.f32`), NaN selected apart as
    the sign and 0x7F, the reference's byte (core/DType.h). On older chips
    the integer codec stays. Then every call is inlined and the functions
    are erased, so nothing of them reaches LLVM. A gpu.module with codec
    functions must have an `#nvvm.target` (nvvm-attach-target first).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def ConvertGPUKernelsToCPU : Pass<"convert-gpu-kernels-to-cpu",
                                  "::mlir::ModuleOp"> {
  let summary = "Turns convert-attn-to-gpu's single-invocation kernels into "
                "CPU functions of one work item";
  let description = [{
    The cpu target's first step (lowering/AttnToCPU/): every `gpu.module`
    marked `attn.kernels` must hold kernels built for subgroup size 1 with
    one invocation per workgroup (convert-attn-to-gpu with subgroup-size=1,
    attention-subgroups=1, workgroup-size=1). Each such `gpu.func` becomes a
    `func.func` of the same name in the enclosing module, marked
    `attn.cpu_kernel`, whose first three `index` arguments are the work
    item's position in the grid (what `gpu.block_id` x, y, z read): thread
    and lane ids are 0, subgroup reductions over one lane are their operand,
    barriers vanish (one invocation has nothing to wait for), and workgroup
    and private attributions become stack allocations. The `gpu.module`s
    are erased, so the module must hold kernels only: a `gpu.launch_func`
    is an error (the host plan is built before this pass).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def AttnCPUPolynomialExp2 : Pass<"attn-cpu-polynomial-exp2",
                                 "::mlir::ModuleOp"> {
  let summary = "Computes f32 math.exp2 with a polynomial, for the cpu "
                "target";
  let description = [{
    LLVM turns `llvm.exp2` into a C library call per element, which keeps
    the softmax of a block of scores out of SIMD registers. This pass
    rewrites every `math.exp2` on f32 (scalar or vector) into arithmetic:
    x = n + f with n = round(x) and |f| <= 1/2, 2^f by a degree-7
    polynomial (relative error a few ulp) and 2^n by building the exponent
    field. Results below 2^-126.5 are flushed to exactly 0 (so a masked
    score, -inf, weighs nothing; no subnormals), x >= 127.5 gives +inf
    (softmax only takes 2^x of x <= 0) and NaN stays NaN. Other element
    types are left alone.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
  ];
}

def AttnCPUBf16Dot : Pass<"attn-cpu-bf16-dot", "::mlir::ModuleOp"> {
  let summary = "Computes the dot products of bf16 rows with AVX-512 BF16 "
                "(VDPBF16PS), for the cpu target's levels that have it";
  let description = [{
    convert-attn-to-gpu writes a dot product of two bf16 rows (the decode
    kernel's scores where the query and the cache are bf16) as
    `vector.reduction <add>` with `reassoc` of `arith.mulf` of two
    `arith.extf` from `vector<N x bf16>`. For N a multiple of 8, this pass
    rewrites each into `x86vector.avx512.dot` over the widest whole
    registers of pairs (32, 16 or 8 bf16) into two alternating f32
    accumulators, then one sum of their lanes. Each product of two bf16 is
    exact in f32; the instruction sums pairs of them into each lane in
    round-to-nearest-even, but treats bf16 subnormal inputs as zero and
    flushes subnormal results to zero, where the widened form keeps them.
    Add it only for ISA levels with the avx512bf16 feature; convert-vector-
    to-llvm then needs enable-x86vector.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect",
  ];
}

def AttnCPUEntryPoints : Pass<"attn-cpu-entry-points", "::mlir::ModuleOp"> {
  let summary = "Gives each CPU kernel its C entry point "
                "(core/CpuKernel.h)";
  let description = [{
    Runs on the LLVM dialect, after the kernels of
    convert-gpu-kernels-to-cpu went through upstream's conversions. Each
    `llvm.func` marked `attn.cpu_kernel` (work item x, y, z, then five
    values per 1-D memref: allocated and aligned pointer, offset, size,
    stride) becomes internal and is called from a new external function
    with its name, `void(const int64_t *workItem, void *const *buffers,
    const int64_t *elements)`, that passes buffer i as (p, p, 0,
    elements[i], 1). The module also gets the `attn_cpu_abi` constant the
    loader checks.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // ATTN_LOWERING_PASSES_TD

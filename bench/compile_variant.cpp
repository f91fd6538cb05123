//===- compile_variant.cpp - Compile time of one variant per target -------===//
//
// What attn-compile spends per variant, in process and without the tool's
// start-up, bundle writing or spirv-val: buildVariant (the attn function of a
// variant) followed by compileModule for the spirv target, one iteration per
// variant; beside each, BM_CompileCpu/<isa>/<variant>, the same for target
// cpu at one ISA level (every level, whether or not this host runs it): the
// cpu lowering, LLVM's code generation and the link into a shared object
// per kernel. The variants are the example models' ops plus the extremes of
// the grid (head size 256 with every knob, 128-head MLA with split-KV) and
// MQA at 64, 512 and 4096 query heads on one kv head. paged_attention
// compiles to its per-token and its tiled prefill kernel.
//
// BM_CompileSpirv/<variant> reuses one MLIRContext, as attn-compile's
// workers reuse their thread's context for the dialects; the
// BM_CompileSpirvFreshContext case adds creating a context and loading the
// dialects, the cost a cold single-variant `attn-compile` pays on top. The
// kernels come in both ABI forms, as attn-compile writes them
// (--spirv-abi=both); BM_CompileSpirvOneForm/llama3_8b compiles the first
// variant in the address form alone, so the second form's cost is the
// difference from BM_CompileSpirv's first row in the same run.
//
//===----------------------------------------------------------------------===//
#include "compiler/Compile.h"
#include "compiler/Variant.h"
#include "core/CpuKernel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <benchmark/benchmark.h>

#include <string>

namespace {

/// The variants timed, as `attn-compile --variant` specs.
const char *const kVariants[] = {
    // Llama-3-8B.
    "op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,"
    "block_size=16,dtype=bf16",
    "op=reshape_and_cache,num_kv_heads=8,head_size=128,block_size=16,"
    "dtype=bf16",
    // Mistral-7B.
    "op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,"
    "block_size=32,dtype=f16,layout=hnd,window_left=4095",
    // Gemma-2-9B's local layer.
    "op=paged_attention,num_heads=16,num_kv_heads=8,head_size=256,"
    "block_size=16,dtype=bf16,window_left=4095,soft_cap=50",
    // Every knob, the largest head size.
    "op=paged_attention,num_heads=8,num_kv_heads=1,head_size=256,"
    "block_size=32,dtype=f32,causal=false,window_left=7,window_right=5,"
    "soft_cap=2,alibi=true,sinks=true",
    // MQA with ever more query heads per kv head: compile time must not
    // grow with the group (issue 12: 512 heads took 188 s, 4096 never
    // finished), since a workgroup takes only the heads its lanes' registers
    // hold.
    "op=paged_attention,num_heads=64,num_kv_heads=1,head_size=128,"
    "block_size=16,dtype=bf16",
    "op=paged_attention,num_heads=512,num_kv_heads=1,head_size=128,"
    "block_size=16,dtype=bf16",
    "op=paged_attention,num_heads=4096,num_kv_heads=1,head_size=128,"
    "block_size=16,dtype=bf16",
    // DeepSeek-V3 MLA, split-KV (partial + reduce kernels).
    "op=mla_decode,num_heads=128,block_size=64,dtype=bf16,num_kv_splits=4",
    "op=merge_states,num_heads=32,head_size=128,dtype=bf16",
};

mlir::MLIRContext &sharedContext() {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    mlir::attn::registerCompilerDialects(registry);
    auto *c = new mlir::MLIRContext(registry,
                                    mlir::MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *context;
}

/// The options of the SPIR-V rows: subgroup 32, kernels in `abi`.
mlir::attn::CompileOptions
spirvOptions(mlir::attn::SPIRVTargetOptions::Abi abi) {
  mlir::attn::CompileOptions options;
  options.targets = {::attn::Target::SPIRV};
  options.subgroupSize = 32;
  options.spirv.abi = abi;
  return options;
}

/// The options of the cpu rows: what a CPU device suggests, one ISA level.
mlir::attn::CompileOptions cpuOptions(std::string_view isa) {
  mlir::attn::CompileOptions options =
      mlir::attn::CompileOptions::forDevice(/*subgroupSize=*/1,
                                            /*cpuDevice=*/true);
  options.targets = {::attn::Target::CPU};
  options.cpu.isaLevels = {std::string(isa)};
  return options;
}

/// Builds and compiles `spec` in `context`; false (and the reason in
/// `error`) when either fails.
bool compileOnce(mlir::MLIRContext &context, const mlir::attn::Variant &variant,
                 const mlir::attn::CompileOptions &options,
                 std::string &error) {
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  mlir::OpBuilder builder(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(builder.getUnknownLoc());
  if (llvm::Error err = mlir::attn::buildVariant(variant, *module)) {
    error = llvm::toString(std::move(err));
    return false;
  }
  mlir::FailureOr<mlir::attn::CompiledModule> compiled =
      mlir::attn::compileModule(*module, options);
  if (mlir::failed(compiled)) {
    error = "compileModule failed:\n" + diagnostics;
    return false;
  }
  int64_t bytes = 0;
  for (const mlir::attn::CompiledKernel &k : compiled->kernels)
    bytes += static_cast<int64_t>(k.bytes.size());
  benchmark::DoNotOptimize(bytes);
  return true;
}

void compileVariant(benchmark::State &state, const char *spec,
                    bool freshContext,
                    const mlir::attn::CompileOptions &options) {
  llvm::Expected<mlir::attn::Variant> variant = mlir::attn::parseVariant(spec);
  if (!variant) {
    state.SkipWithError(llvm::toString(variant.takeError()).c_str());
    return;
  }
  std::string error;
  for (auto _ : state) {
    bool ok;
    if (freshContext) {
      mlir::DialectRegistry registry;
      mlir::attn::registerCompilerDialects(registry);
      mlir::MLIRContext context(registry,
                                mlir::MLIRContext::Threading::DISABLED);
      context.loadAllAvailableDialects();
      ok = compileOnce(context, *variant, options, error);
    } else {
      ok = compileOnce(sharedContext(), *variant, options, error);
    }
    if (!ok) {
      state.SkipWithError(error.c_str());
      return;
    }
  }
}

int registerAll() {
  using Abi = mlir::attn::SPIRVTargetOptions::Abi;
  for (const char *spec : kVariants) {
    llvm::Expected<mlir::attn::Variant> v = mlir::attn::parseVariant(spec);
    std::string name = v ? mlir::attn::variantName(*v) : std::string(spec);
    if (!v)
      llvm::consumeError(v.takeError());
    benchmark::RegisterBenchmark(("BM_CompileSpirv/" + name).c_str(),
                                 compileVariant, spec, false,
                                 spirvOptions(Abi::Both))
        ->Unit(benchmark::kMillisecond);
    for (const attn::CpuIsaLevel &level : attn::cpuIsaLevels())
      benchmark::RegisterBenchmark(
          ("BM_CompileCpu/" + std::string(level.name) + "/" + name).c_str(),
          compileVariant, spec, false, cpuOptions(level.name))
          ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_CompileSpirvFreshContext/llama3_8b",
                               compileVariant, kVariants[0], true,
                               spirvOptions(Abi::Both))
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_CompileSpirvOneForm/llama3_8b",
                               compileVariant, kVariants[0], false,
                               spirvOptions(Abi::Addresses))
      ->Unit(benchmark::kMillisecond);
  return 0;
}

const int registered = registerAll();

} // namespace

BENCHMARK_MAIN();

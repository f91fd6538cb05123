//===- TTProgram.h - The host side of a TT program as data -----*- C++ -*-===//
//
// attn-translate --attn-to-ttmetal writes one folder per Tenstorrent program:
// a C++ file per kernel and program.json, the host side as data. This is
// that file as one struct, written by the lowering
// (lowering/AttnToTT/TTMetalTarget.cpp) and read by the TT device layer and
// its emulator (devices/tt), so the JSON has one writer and one reader.
//
//   name, op            the program and the attn op it computes
//   arch                the architecture the kernels were built for
//                       (optional when read: wormhole_b0)
//   params              the op's static shape and knobs (each optional)
//   core_grid {x, y}    the cores work is spread over
//   circular_buffers    [{id, name, num_pages, page_size, data_format}]
//                       (ids as TT-Metalium's CBIndex: inputs from 0,
//                       outputs from 16, intermediates from 24)
//   kernels             [{name, kind (reader | writer | compute), processor,
//                         source, compile_time_args, and for compute
//                         kernels math_fidelity and fp32_dest_acc_en}]
//   runtime_args        names of the leading runtime arguments of every
//                       kernel on a core
//   unit_args           names of the fields of one work unit; a core's
//                       arguments end with its units, back to back
//   merge_program       (split-KV decode, optional) the subfolder holding
//                       the program that merges this one's partial states
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_TTPROGRAM_H
#define ATTN_CORE_TTPROGRAM_H

#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::tt {

enum class Arch { WormholeB0, Blackhole };

/// What differs between the architectures attn compiles for and emulates.
struct ArchParams {
  const char *name;
  /// Bytes of L1 per Tensix core.
  uint32_t l1Size;
  /// Bytes below the circular buffers kept for firmware and kernel images.
  uint32_t l1Reserved;
  uint32_t numDramBanks;
  /// NOC address alignments the watcher enforces (L1 and remote address
  /// must be congruent modulo these). The DRAM read alignment is also the
  /// page alignment of interleaved DRAM buffers.
  uint32_t dramReadAlignment;
  uint32_t dramWriteAlignment;
  uint32_t l1Alignment;
};

const ArchParams &archParams(Arch arch);
/// "wormhole_b0" / "blackhole", TT-Metalium's spelling.
const char *toString(Arch arch);
Result<Arch> parseArch(std::string_view name);

/// TT-Metalium data formats of circular buffers.
enum class DataFormat { Float32, Float16_b, Float16 };

/// Bytes per element of a data format.
uint32_t elementSize(DataFormat format);
/// "Float32" / "Float16_b" / "Float16", TT-Metalium's spelling.
const char *toString(DataFormat format);
Result<DataFormat> parseDataFormat(std::string_view name);

enum class KernelKind { Reader, Writer, Compute };
/// "reader" / "writer" / "compute".
const char *toString(KernelKind kind);

struct CircularBufferSpec {
  uint32_t id = 0;
  uint32_t numPages = 0;
  uint32_t pageSize = 0;
  DataFormat format = DataFormat::Float16_b;
  /// What the buffer holds, for people reading program.json.
  std::string name;
};

struct KernelDescription {
  std::string name;
  KernelKind kind = KernelKind::Reader;
  /// The RISC it runs on ("riscv_0", "riscv_1", "trisc").
  std::string processor;
  /// Its C++ file, relative to the program's folder.
  std::string source;
  std::vector<uint32_t> compileTimeArgs;
  /// Compute only: the matrix unit's fidelity and fp32 destination registers.
  std::string mathFidelity = "HiFi4";
  bool fp32DestAccEn = true;
};

/// The op's static shape and knobs; each is absent when program.json does
/// not hold it (its reader decides what that means).
struct ProgramParams {
  std::optional<int64_t> numHeads, numKvHeads, headSize, valueSize, blockSize;
  /// 2 (key, value) for the paged cache, 1 for MLA's latent rows.
  std::optional<int64_t> kvParts, kvLoraRank;
  /// reshape_and_cache: widths of the key and value rows.
  std::optional<int64_t> keyWidth, valueWidth;
  std::optional<std::string> dtype, layout;
  std::optional<double> scale, softCap;
  std::optional<bool> causal, sinks, alibi;
  std::optional<int64_t> windowLeft, windowRight, numKvSplits, numStates;
};

struct TTProgram {
  std::string name;
  std::string op;
  Arch arch = Arch::WormholeB0;
  ProgramParams params;
  uint32_t gridX = 1, gridY = 1;
  std::vector<CircularBufferSpec> circularBuffers;
  std::vector<KernelDescription> kernels;
  std::vector<std::string> runtimeArgs;
  std::vector<std::string> unitArgs;
  std::string mergeProgram;

  uint32_t numCores() const { return gridX * gridY; }
};

/// program.json of `program`: keys sorted, two-space indents, a final
/// newline.
std::string writeTTProgram(const TTProgram &program);

/// Parses and checks program.json; an error naming the member that is
/// missing or malformed.
Result<TTProgram> readTTProgram(std::string_view json);

} // namespace attn::tt

#endif // ATTN_CORE_TTPROGRAM_H

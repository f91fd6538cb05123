//===- TTProgram.cpp - The host side of a TT program as data -------------===//
#include "core/TTProgram.h"

#include "core/JsonRead.h"

#include <cstdio>
#include <limits>

namespace attn::tt {

using nlohmann::json;

const ArchParams &archParams(Arch arch) {
  static const ArchParams wormhole = {"wormhole_b0", 1464 * 1024, 64 * 1024,
                                      12, 32, 16, 16};
  static const ArchParams blackhole = {"blackhole", 1536 * 1024, 64 * 1024,
                                       7, 64, 16, 16};
  return arch == Arch::Blackhole ? blackhole : wormhole;
}

const char *toString(Arch arch) { return archParams(arch).name; }

Result<Arch> parseArch(std::string_view name) {
  if (name == "wormhole_b0")
    return Arch::WormholeB0;
  if (name == "blackhole")
    return Arch::Blackhole;
  return errorf("unknown architecture '", name,
                "' (wormhole_b0 or blackhole)");
}

uint32_t elementSize(DataFormat format) {
  return format == DataFormat::Float32 ? 4 : 2;
}

const char *toString(DataFormat format) {
  switch (format) {
  case DataFormat::Float32:
    return "Float32";
  case DataFormat::Float16_b:
    return "Float16_b";
  case DataFormat::Float16:
    return "Float16";
  }
  return "?";
}

Result<DataFormat> parseDataFormat(std::string_view name) {
  for (DataFormat f :
       {DataFormat::Float32, DataFormat::Float16_b, DataFormat::Float16})
    if (name == toString(f))
      return f;
  return errorf("unknown data format '", name, "'");
}

const char *toString(KernelKind kind) {
  switch (kind) {
  case KernelKind::Reader:
    return "reader";
  case KernelKind::Writer:
    return "writer";
  case KernelKind::Compute:
    return "compute";
  }
  return "?";
}

namespace {

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Prints `value` as program.json has always been laid out (llvm::json's
/// pretty form, which wrote it first): two-space indents, one member or
/// element per line, keys sorted, doubles with 17 significant digits. The
/// bytes feed the bundle's content hashes, so they must not drift.
void print(const json &value, int depth, std::string &out) {
  std::string indent(2 * (depth + 1), ' ');
  bool object = value.is_object();
  if ((object || value.is_array()) && !value.empty()) {
    out += object ? "{" : "[";
    const char *separator = "\n";
    for (auto it = value.begin(); it != value.end(); ++it) {
      out += separator + indent;
      if (object)
        out += json(it.key()).dump() + ": ";
      print(*it, depth + 1, out);
      separator = ",\n";
    }
    out += "\n" + indent.substr(2) + (object ? "}" : "]");
    return;
  }
  if (value.is_number_float()) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*g",
                  std::numeric_limits<double>::max_digits10,
                  value.get<double>());
    out += text;
    return;
  }
  out += value.dump();
}

/// Sets `j[key]` when `field` holds a value.
template <typename T>
void writeOptional(json &j, const char *key, const std::optional<T> &field) {
  if (field)
    j[key] = *field;
}

json paramsJson(const ProgramParams &p) {
  json j = json::object();
  writeOptional(j, "num_heads", p.numHeads);
  writeOptional(j, "num_kv_heads", p.numKvHeads);
  writeOptional(j, "head_size", p.headSize);
  writeOptional(j, "value_size", p.valueSize);
  writeOptional(j, "block_size", p.blockSize);
  writeOptional(j, "kv_parts", p.kvParts);
  writeOptional(j, "kv_lora_rank", p.kvLoraRank);
  writeOptional(j, "key_width", p.keyWidth);
  writeOptional(j, "value_width", p.valueWidth);
  writeOptional(j, "dtype", p.dtype);
  writeOptional(j, "layout", p.layout);
  writeOptional(j, "scale", p.scale);
  writeOptional(j, "causal", p.causal);
  writeOptional(j, "window_left", p.windowLeft);
  writeOptional(j, "window_right", p.windowRight);
  writeOptional(j, "soft_cap", p.softCap);
  writeOptional(j, "sinks", p.sinks);
  writeOptional(j, "alibi", p.alibi);
  writeOptional(j, "num_kv_splits", p.numKvSplits);
  writeOptional(j, "num_states", p.numStates);
  return j;
}

json kernelJson(const KernelDescription &k) {
  json j = {{"name", k.name},
            {"kind", toString(k.kind)},
            {"processor", k.processor},
            {"source", k.source},
            {"compile_time_args", k.compileTimeArgs}};
  if (k.kind == KernelKind::Compute) {
    j["math_fidelity"] = k.mathFidelity;
    j["fp32_dest_acc_en"] = k.fp32DestAccEn;
  }
  return j;
}

} // namespace

std::string writeTTProgram(const TTProgram &program) {
  json j = {{"name", program.name},
            {"op", program.op},
            {"arch", toString(program.arch)},
            {"params", paramsJson(program.params)},
            {"core_grid", {{"x", program.gridX}, {"y", program.gridY}}},
            {"circular_buffers", json::array()},
            {"kernels", json::array()},
            {"runtime_args", program.runtimeArgs},
            {"unit_args", program.unitArgs}};
  for (const CircularBufferSpec &cb : program.circularBuffers)
    j["circular_buffers"].push_back({{"id", cb.id},
                                     {"name", cb.name},
                                     {"num_pages", cb.numPages},
                                     {"page_size", cb.pageSize},
                                     {"data_format", toString(cb.format)}});
  for (const KernelDescription &k : program.kernels)
    j["kernels"].push_back(kernelJson(k));
  if (!program.mergeProgram.empty())
    j["merge_program"] = program.mergeProgram;
  std::string out;
  print(j, 0, out);
  return out + "\n";
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

/// "json: expected <what> member '<key>'", the reader's one phrasing of a
/// missing or mistyped member.
Status expected(const char *what, std::string_view key) {
  return errorf("json: expected ", what, " member '", key, "'");
}

/// The list of strings `key`.
Status readStrings(const json &root, const char *key,
                   std::vector<std::string> &out) {
  const json *list = jsonMember(root, key, JsonKind::Array);
  if (!list)
    return expected("array", key);
  for (const json &e : *list) {
    if (!e.is_string())
      return errorf("program.json: '", key, "' must list strings");
    out.push_back(e.get<std::string>());
  }
  return Status::ok();
}

/// Reads the params member `key` of `params` into `field` when it is there.
template <typename T>
Status readParam(const json &params, const char *key, std::optional<T> &field) {
  const json *v = jsonMember(params, key);
  if (!v)
    return Status::ok();
  if constexpr (std::is_same_v<T, bool>) {
    // Anything but true reads as false, as the emulator always took it.
    field = v->is_boolean() && v->get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v->is_string())
      return errorf("params: ", expected("string", key).message());
    field = v->get<std::string>();
  } else {
    if (!v->is_number())
      return errorf("params: ", expected("number", key).message());
    field = static_cast<T>(v->get<double>());
  }
  return Status::ok();
}

Result<ProgramParams> readParams(const json &j) {
  ProgramParams p;
  ATTN_RETURN_IF_ERROR(readParam(j, "num_heads", p.numHeads));
  ATTN_RETURN_IF_ERROR(readParam(j, "num_kv_heads", p.numKvHeads));
  ATTN_RETURN_IF_ERROR(readParam(j, "head_size", p.headSize));
  ATTN_RETURN_IF_ERROR(readParam(j, "value_size", p.valueSize));
  ATTN_RETURN_IF_ERROR(readParam(j, "block_size", p.blockSize));
  ATTN_RETURN_IF_ERROR(readParam(j, "kv_parts", p.kvParts));
  ATTN_RETURN_IF_ERROR(readParam(j, "kv_lora_rank", p.kvLoraRank));
  ATTN_RETURN_IF_ERROR(readParam(j, "key_width", p.keyWidth));
  ATTN_RETURN_IF_ERROR(readParam(j, "value_width", p.valueWidth));
  ATTN_RETURN_IF_ERROR(readParam(j, "dtype", p.dtype));
  ATTN_RETURN_IF_ERROR(readParam(j, "layout", p.layout));
  ATTN_RETURN_IF_ERROR(readParam(j, "scale", p.scale));
  ATTN_RETURN_IF_ERROR(readParam(j, "causal", p.causal));
  ATTN_RETURN_IF_ERROR(readParam(j, "window_left", p.windowLeft));
  ATTN_RETURN_IF_ERROR(readParam(j, "window_right", p.windowRight));
  ATTN_RETURN_IF_ERROR(readParam(j, "soft_cap", p.softCap));
  ATTN_RETURN_IF_ERROR(readParam(j, "sinks", p.sinks));
  ATTN_RETURN_IF_ERROR(readParam(j, "alibi", p.alibi));
  ATTN_RETURN_IF_ERROR(readParam(j, "num_kv_splits", p.numKvSplits));
  ATTN_RETURN_IF_ERROR(readParam(j, "num_states", p.numStates));
  return p;
}

/// Reads the optional string member `key` into `out`.
Status readOptionalString(const json &root, const char *key,
                          std::string &out) {
  if (!jsonMember(root, key))
    return Status::ok();
  const json *v = jsonMember(root, key, JsonKind::String);
  if (!v)
    return expected("string", key);
  out = v->get<std::string>();
  return Status::ok();
}

Result<CircularBufferSpec> readCircularBuffer(const json &j) {
  const json *id = jsonMember(j, "id", JsonKind::Number);
  const json *pages = jsonMember(j, "num_pages", JsonKind::Number);
  const json *size = jsonMember(j, "page_size", JsonKind::Number);
  const json *format = jsonMember(j, "data_format", JsonKind::String);
  if (!id || !pages || !size || !format)
    return Status::error("a circular buffer needs id, num_pages, page_size "
                         "and data_format");
  Result<DataFormat> df = parseDataFormat(format->get<std::string>());
  if (!df)
    return df.status();
  CircularBufferSpec cb{uint32_t(id->get<double>()),
                        uint32_t(pages->get<double>()),
                        uint32_t(size->get<double>()), *df};
  if (const json *name = jsonMember(j, "name", JsonKind::String))
    cb.name = name->get<std::string>();
  return cb;
}

/// A buffer of several pages may take a DRAM read into any page, and the
/// NOC needs the L1 address congruent with the DRAM page modulo the DRAM
/// read alignment; buffers start at that alignment, so their pages must be
/// a multiple of it.
Status checkPageAlignment(const CircularBufferSpec &cb, Arch arch) {
  const ArchParams &a = archParams(arch);
  if (cb.numPages < 2 || cb.pageSize % a.dramReadAlignment == 0)
    return Status::ok();
  return errorf("circular buffer '", cb.name, "' (id ", cb.id, "): ",
                cb.numPages, " pages of ", cb.pageSize,
                " bytes; a buffer of several pages needs pages a multiple "
                "of the ",
                a.name, " DRAM read alignment (", a.dramReadAlignment,
                " bytes), or a DRAM read into a later page is misaligned");
}

Result<KernelDescription> readKernel(const json &j) {
  const json *name = jsonMember(j, "name", JsonKind::String);
  const json *kind = jsonMember(j, "kind", JsonKind::String);
  const json *source = jsonMember(j, "source", JsonKind::String);
  const json *args = jsonMember(j, "compile_time_args", JsonKind::Array);
  if (!name || !kind || !source || !args)
    return Status::error("a kernel needs name, kind, source and "
                         "compile_time_args");
  KernelDescription k;
  k.name = name->get<std::string>();
  std::string kindName = kind->get<std::string>();
  if (kindName == "reader")
    k.kind = KernelKind::Reader;
  else if (kindName == "writer")
    k.kind = KernelKind::Writer;
  else if (kindName == "compute")
    k.kind = KernelKind::Compute;
  else
    return errorf("unknown kernel kind '", kindName, "'");
  k.source = source->get<std::string>();
  if (const json *p = jsonMember(j, "processor", JsonKind::String))
    k.processor = p->get<std::string>();
  for (const json &a : *args)
    k.compileTimeArgs.push_back(
        a.is_number() ? uint32_t(int64_t(a.get<double>())) : 0);
  if (const json *f = jsonMember(j, "math_fidelity", JsonKind::String))
    k.mathFidelity = f->get<std::string>();
  if (const json *fp32 = jsonMember(j, "fp32_dest_acc_en"))
    k.fp32DestAccEn = fp32->is_boolean() && fp32->get<bool>();
  return k;
}

/// The members every program.json has, checked in one order so that the
/// first missing one is the one named.
Status checkRequiredMembers(const json &root) {
  for (auto [key, kind, what] :
       {std::tuple{"name", JsonKind::String, "string"},
        {"op", JsonKind::String, "string"},
        {"params", JsonKind::Object, "object"},
        {"core_grid", JsonKind::Object, "object"},
        {"circular_buffers", JsonKind::Array, "array"},
        {"kernels", JsonKind::Array, "array"}})
    if (!jsonMember(root, key, kind))
      return expected(what, key);
  return Status::ok();
}

} // namespace

Result<TTProgram> readTTProgram(std::string_view text) {
  json root = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Status::error("json: malformed JSON");
  ATTN_RETURN_IF_ERROR(checkRequiredMembers(root));
  TTProgram p;
  ATTN_RETURN_IF_ERROR(readStrings(root, "runtime_args", p.runtimeArgs));
  ATTN_RETURN_IF_ERROR(readStrings(root, "unit_args", p.unitArgs));
  p.name = root["name"].get<std::string>();
  p.op = root["op"].get<std::string>();
  std::string arch;
  ATTN_RETURN_IF_ERROR(readOptionalString(root, "arch", arch));
  if (jsonMember(root, "arch")) {
    Result<Arch> parsed = parseArch(arch);
    if (!parsed)
      return parsed.status();
    p.arch = *parsed;
  }
  ATTN_RETURN_IF_ERROR(
      readOptionalString(root, "merge_program", p.mergeProgram));
  const json &grid = root["core_grid"];
  const json *x = jsonMember(grid, "x", JsonKind::Number);
  const json *y = jsonMember(grid, "y", JsonKind::Number);
  if (!x || !y || x->get<double>() < 1 || y->get<double>() < 1)
    return Status::error("core_grid needs positive x and y");
  p.gridX = uint32_t(x->get<double>());
  p.gridY = uint32_t(y->get<double>());
  for (const json &cb : root["circular_buffers"]) {
    Result<CircularBufferSpec> spec = readCircularBuffer(cb);
    if (!spec)
      return spec.status();
    ATTN_RETURN_IF_ERROR(checkPageAlignment(*spec, p.arch));
    p.circularBuffers.push_back(std::move(*spec));
  }
  for (const json &k : root["kernels"]) {
    Result<KernelDescription> kernel = readKernel(k);
    if (!kernel)
      return kernel.status();
    p.kernels.push_back(std::move(*kernel));
  }
  Result<ProgramParams> params = readParams(root["params"]);
  if (!params)
    return params.status();
  p.params = std::move(*params);
  return p;
}

} // namespace attn::tt

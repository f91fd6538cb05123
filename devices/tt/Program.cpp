//===- Program.cpp - A TT program description, loaded and built ----------===//
#include "devices/tt/Program.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace attn::tt {

static Result<std::vector<std::string>> stringList(const JsonValue &v,
                                                   const std::string &key) {
  auto arr = v.getArray(key);
  if (!arr)
    return arr.status();
  std::vector<std::string> out;
  for (const JsonValue &e : (*arr)->array()) {
    if (e.kind() != JsonValue::Kind::String)
      return errorf("program.json: '", key, "' must list strings");
    out.push_back(e.string());
  }
  return out;
}

Result<ProgramDescription> loadProgramDescription(const std::string &dir) {
  std::ifstream in(dir + "/program.json");
  if (!in)
    return errorf("cannot read '", dir, "/program.json'");
  std::stringstream text;
  text << in.rdbuf();
  auto json = JsonValue::parse(text.str());
  if (!json)
    return errorf(dir, "/program.json: ", json.message());
  const JsonValue &root = *json;

  ProgramDescription d;
  d.dir = dir;
  auto name = root.getString("name");
  auto op = root.getString("op");
  auto params = root.getObject("params");
  auto grid = root.getObject("core_grid");
  auto cbs = root.getArray("circular_buffers");
  auto kernels = root.getArray("kernels");
  auto rtArgs = stringList(root, "runtime_args");
  auto unitArgs = stringList(root, "unit_args");
  for (const Status *s :
       {&name.status(), &op.status(), &params.status(), &grid.status(),
        &cbs.status(), &kernels.status(), &rtArgs.status(),
        &unitArgs.status()})
    if (!s->isOk())
      return errorf(dir, "/program.json: ", s->message());
  d.name = *name;
  d.op = *op;
  if (root.get("arch")) {
    auto archName = root.getString("arch");
    if (!archName)
      return errorf(dir, "/program.json: ", archName.message());
    auto arch = parseArch(*archName);
    if (!arch)
      return errorf(dir, "/program.json: ", arch.message());
    d.arch = *arch;
  }
  d.params = **params;
  d.runtimeArgs = *rtArgs;
  d.unitArgs = *unitArgs;
  if (root.get("merge_program")) {
    auto merge = root.getString("merge_program");
    if (!merge)
      return errorf(dir, "/program.json: ", merge.message());
    d.mergeProgram = *merge;
  }
  auto gx = (*grid)->getNumber("x");
  auto gy = (*grid)->getNumber("y");
  if (!gx || !gy || *gx < 1 || *gy < 1)
    return errorf(dir, "/program.json: core_grid needs positive x and y");
  d.gridX = uint32_t(*gx);
  d.gridY = uint32_t(*gy);

  for (const JsonValue &cb : (*cbs)->array()) {
    auto id = cb.getNumber("id");
    auto pages = cb.getNumber("num_pages");
    auto size = cb.getNumber("page_size");
    auto format = cb.getString("data_format");
    if (!id || !pages || !size || !format)
      return errorf(dir, "/program.json: a circular buffer needs id, "
                         "num_pages, page_size and data_format");
    auto df = parseDataFormat(*format);
    if (!df)
      return errorf(dir, "/program.json: ", df.message());
    d.circularBuffers.push_back(
        {uint32_t(*id), uint32_t(*pages), uint32_t(*size), *df});
  }

  for (const JsonValue &k : (*kernels)->array()) {
    KernelDescription kd;
    auto kname = k.getString("name");
    auto kind = k.getString("kind");
    auto source = k.getString("source");
    auto ct = k.getArray("compile_time_args");
    if (!kname || !kind || !source || !ct)
      return errorf(dir, "/program.json: a kernel needs name, kind, source "
                         "and compile_time_args");
    kd.name = *kname;
    if (*kind == "reader")
      kd.kind = KernelKind::Reader;
    else if (*kind == "writer")
      kd.kind = KernelKind::Writer;
    else if (*kind == "compute")
      kd.kind = KernelKind::Compute;
    else
      return errorf(dir, "/program.json: unknown kernel kind '", *kind, "'");
    kd.source = *source;
    if (auto p = k.getString("processor"))
      kd.processor = *p;
    for (const JsonValue &a : (*ct)->array())
      kd.compileTimeArgs.push_back(uint32_t(int64_t(a.number())));
    if (const JsonValue *fp32 = k.get("fp32_dest_acc_en"))
      kd.fp32DestAccEn = fp32->boolean();
    d.kernels.push_back(std::move(kd));
  }
  return d;
}

LoadedKernels::~LoadedKernels() = default;

std::string mergeProgramDir(const std::string &dir,
                            const ProgramDescription &description) {
  return dir + "/" + description.mergeProgram;
}

Result<std::vector<LaunchArgs>>
layOutRuntimeArgs(const Program &program,
                  const std::map<std::string, uint32_t> &named,
                  const std::vector<std::map<std::string, uint32_t>> &units) {
  const ProgramDescription &d = program.description;
  for (const std::string &n : d.runtimeArgs) {
    if (n == "num_units")
      continue;
    if (!named.count(n))
      return errorf("program '", d.name, "' wants runtime argument '", n,
                    "', which the host does not provide");
  }
  size_t perUnit = std::max<size_t>(d.unitArgs.size(), 1);
  if (d.runtimeArgs.size() + perUnit > kMaxRuntimeArgs)
    return errorf("program '", d.name, "' has more runtime arguments than a "
                  "kernel may get");
  size_t maxPerCore = (kMaxRuntimeArgs - d.runtimeArgs.size()) / perUnit;
  size_t cores = std::max<size_t>(1, d.numCores());
  size_t perLaunch = cores * maxPerCore;
  std::vector<LaunchArgs> launches;
  for (size_t first = 0; first < units.size() || launches.empty();
       first += perLaunch) {
    size_t count = std::min(perLaunch, units.size() - first);
    size_t numCores = std::max<size_t>(1, std::min(cores, count));
    LaunchArgs out;
    size_t begin = first;
    for (size_t core = 0; core < numCores; ++core) {
      size_t end = begin + count / numCores + (core < count % numCores ? 1 : 0);
      std::vector<uint32_t> args;
      for (const std::string &n : d.runtimeArgs)
        args.push_back(n == "num_units" ? uint32_t(end - begin)
                                        : named.at(n));
      for (size_t u = begin; u < end; ++u)
        for (const std::string &f : d.unitArgs) {
          auto it = units[u].find(f);
          if (it == units[u].end())
            return errorf("program '", d.name, "' wants unit field '", f,
                          "', which the host does not provide");
          args.push_back(it->second);
        }
      out.push_back(
          std::vector<std::vector<uint32_t>>(d.kernels.size(), args));
      begin = end;
    }
    launches.push_back(std::move(out));
    if (units.empty())
      break;
  }
  return launches;
}

} // namespace attn::tt

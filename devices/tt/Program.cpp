//===- Program.cpp - A TT program description, loaded and built ----------===//
#include "devices/tt/Program.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace attn::tt {

Result<ProgramDescription> loadProgramDescription(const std::string &dir) {
  std::ifstream in(dir + "/program.json");
  if (!in)
    return errorf("cannot read '", dir, "/program.json'");
  std::stringstream text;
  text << in.rdbuf();
  Result<TTProgram> program = readTTProgram(text.str());
  if (!program)
    return errorf(dir, "/program.json: ", program.message());
  ProgramDescription d;
  static_cast<TTProgram &>(d) = std::move(*program);
  d.dir = dir;
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

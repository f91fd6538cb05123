// attn's declaration of tt-metalium/program.hpp: the container of a
// program's kernels, circular buffers and runtime arguments. Move-only; a
// mesh workload takes it by rvalue.
#pragma once

#include <memory>

namespace tt::tt_metal {

namespace detail {
class ProgramImpl;
}  // namespace detail

class Program {
public:
    Program();
    ~Program() noexcept;

    Program(const Program& other) = delete;
    Program& operator=(const Program& other) = delete;
    Program(Program&& other) noexcept;
    Program& operator=(Program&& other) noexcept;

private:
    std::shared_ptr<detail::ProgramImpl> internal_;
};

}  // namespace tt::tt_metal

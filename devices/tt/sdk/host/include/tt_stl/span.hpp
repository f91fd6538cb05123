// attn's declaration of TT-Metalium's ttsl::Span (tt_stl/tt_stl/span.hpp at
// the pin in devices/tt/sdk/README.md): a std::span that the host API takes for
// runtime arguments and sub-device lists. Only what attn's host code and the
// host API's signatures use.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>

namespace ttsl {

template <class T, std::size_t Extent = std::dynamic_extent>
class Span final : private std::span<T, Extent> {
    using base = std::span<T, Extent>;

public:
    using typename base::element_type;
    using typename base::size_type;
    using typename base::value_type;

    using base::base;

    // A const span also binds a braced list (SetRuntimeArgs(..., {a, b})).
    template <class U = T>
        requires std::is_const_v<U>
    constexpr Span(std::initializer_list<std::remove_const_t<U>> list) noexcept :
        base(list.begin(), list.size()) {}

    using base::begin;
    using base::data;
    using base::empty;
    using base::end;
    using base::size;
    using base::operator[];
};

}  // namespace ttsl

namespace tt {
namespace [[deprecated("the SDK spells it ttsl")]] stl {
using namespace ::ttsl;
}  // namespace stl
}  // namespace tt

// attn's declaration of tt-metalium/core_coord.hpp: logical core
// coordinates (UMD's tt_xy_pair), inclusive rectangles of cores and sets of
// them. Global names, as in the SDK, also visible in tt::tt_metal.
#pragma once

#include <cstddef>
#include <set>
#include <vector>

#include <tt_stl/span.hpp>

// UMD's pair (umd/device/types/xy_pair.hpp): x is the column, y the row.
struct tt_xy_pair {
    constexpr tt_xy_pair() : x{}, y{} {}
    constexpr tt_xy_pair(std::size_t x, std::size_t y) : x(x), y(y) {}

    std::size_t x;
    std::size_t y;
};

using CoreCoord = tt_xy_pair;

class CoreRangeSet;

class CoreRange {
public:
    CoreCoord start_coord;
    CoreCoord end_coord;

    CoreRange(const CoreCoord& point);
    // Both corners included.
    CoreRange(const CoreCoord& start_coord, const CoreCoord& end_coord);

    std::size_t size() const;
};

class CoreRangeSet {
public:
    CoreRangeSet() = default;
    CoreRangeSet(const CoreRange& core_range);
    CoreRangeSet(const std::set<CoreRange>& core_ranges);
    CoreRangeSet(ttsl::Span<const CoreRange> core_ranges);

    uint32_t num_cores() const;

private:
    std::vector<CoreRange> ranges_;
};

namespace tt::tt_metal {
using ::CoreCoord;
using ::CoreRange;
using ::CoreRangeSet;
}  // namespace tt::tt_metal

// Helpers shared by the CASTLE rooms (castle.cpp, castle_select.cpp, castle_split.cpp); not an installed header.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace anoncore::stream::detail {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int32_t kTableMaxLeaves = 256;  // L x L tables up to 256 leaves (512 KiB of IL per attribute)
constexpr size_t kRowMaxLeaves = 64;      // per-open-cluster rows of IL terms (L x eta doubles) up to 64 leaves

/// A7: enlargements and ILs compare equal within a relative 1e-12.
inline bool approx_eq(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b)); }

inline size_t sz(int64_t v) { return static_cast<size_t>(v); }

}  // namespace anoncore::stream::detail

// Normalised coordinates of coded points, shared by the Hilbert keys (twophase/hilbert.hpp) and the k-d tree.
#pragma once
#include <cstdint>

#include "anoncore/core/views.hpp"

namespace anoncore::knn {

/// Normalised coordinate of every row: coord(r, j) = tables[offsets[j] + codes(r, j)]. `offsets` has n_dims + 1
/// entries.
struct CoordTables {
  Span<double> values;
  Span<int64_t> offsets;
  double at(int32_t code, int64_t j) const { return values[offsets[j] + code]; }
};

}  // namespace anoncore::knn

// Re-identification risk: the one group-by the risk profile needs (classes and their sizes).
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::risk {

/// Classes of the rows of `codes` (n_rows, n_cols) on the columns `cols` (indices into the row), numbered
/// in order of first appearance (the same labels as core::dense_labels on those columns). Writes the label
/// of every row, appends each class's size to `sizes`, returns the number of classes.
///
/// Open addressing (linear probing) on the mixed-radix key of the selected codes when the key space fits in
/// 62 bits (a direct-address table when it is at most 4 n + 1024), otherwise core::dense_labels on a copy of
/// the columns. O(n_rows * |cols|) expected, no allocation per row. Preconditions: codes of column cols[j]
/// in [0, cardinality[j]).
int64_t group_columns(Matrix<int32_t> codes, Span<int64_t> cols, Span<int64_t> cardinality,
                      MutSpan<int64_t> labels, std::vector<int64_t>& sizes);

}  // namespace anoncore::risk

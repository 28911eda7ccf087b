// Hilbert-curve keys over the quasi-identifier space (spec sabre-burel.md §3.4 SABRE-AK, §8 item 11): every
// dimension is normalised to [0, 1] (numeric: (value - L) / (U - L); categorical: pre-order leaf rank over
// n_leaves - 1), cut into 2^bits cells, and the cell is mapped to its position on the Hilbert curve with
// Skilling's transpose method (J. Skilling, "Programming the Hilbert curve", AIP Conf. Proc. 707, 2004).
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"
#include "anoncore/knn/coords.hpp"

namespace anoncore::twophase {

/// Normalised coordinate of every row (knn/coords.hpp; shared by the Hilbert keys and the exact kNN).
using CoordTables = knn::CoordTables;

/// Bits per dimension used for `n_dims` dimensions whose largest cardinality is `max_card`: enough to separate
/// every code (ceil(log2 max_card)), capped so that n_dims * bits <= 64 (at least 1). With more than 64
/// dimensions only the first 64 enter the key.
int hilbert_bits(int64_t n_dims, int64_t max_card);

/// Hilbert index of one cell (cell[j] < 2^bits, n_dims * bits <= 64). O(n_dims * bits).
uint64_t hilbert_index(uint32_t* cell, int64_t n_dims, int bits);

/// Hilbert key of every row (parallel over rows, deterministic). O(n * d * bits).
void hilbert_keys(Matrix<int32_t> codes, const CoordTables& coords, int bits, MutSpan<uint64_t> keys, int n_threads);

/// The same keys as hilbert_keys; when the QI domain is small (product of the cardinalities at most n / 4, e.g.
/// 79 x 2 x 17 cells for 3 QIs) computed once per grid cell and gathered by the rows (O(n d) instead of
/// O(n d bits)), otherwise per row.
void hilbert_keys_by_cell(Matrix<int32_t> qi, const CoordTables& coords, int bits, MutSpan<uint64_t> keys,
                          int n_threads);

}  // namespace anoncore::twophase

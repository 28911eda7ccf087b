// Group-by over dictionary-coded rows: dense class labels, class sizes, per-class min/max codes.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::core {

/// Dense labels 0..C-1 for the distinct rows of `codes` (n_rows, n_cols), numbered in order of first
/// appearance. Returns C. O(n_rows * n_cols) expected (mixed-radix packing when the key space fits in
/// 64 bits, otherwise hashing of whole rows). `cardinality[j]` bounds the codes of column j (codes in
/// [0, cardinality[j])). With `first_rows`, also the first row of every class (in class order). Parallel
/// over fixed-size row chunks (n_threads, 0 = all cores); the labels do not depend on the thread count.
int64_t dense_labels(Matrix<int32_t> codes, Span<int64_t> cardinality, MutSpan<int64_t> labels, int n_threads = 1,
                     std::vector<int64_t>* first_rows = nullptr);

/// Full-domain generalization's classes (Partition.from_levels): the rows' keys are the mixed-radix numbers of
/// `maps[j][codes(i, columns[j])]` (maps[j] is QI j's leaf code -> index of its ancestor at the chosen level,
/// concatenated in `maps` at `map_offsets[j]`, values in [0, widths[j])). Dense first-appearance labels of the
/// keys, and the first row of every class. The product of the widths must fit in 62 bits (checked by the
/// caller); a code outside its map throws std::out_of_range. Returns C.
int64_t levels_labels(Matrix<int32_t> codes, Span<int64_t> columns, Span<int32_t> maps, Span<int64_t> map_offsets,
                      Span<int64_t> widths, MutSpan<int64_t> labels, std::vector<int64_t>& first_rows,
                      int n_threads);

/// Number of rows per class, optionally skipping rows where `skip[i]` is true (skip may be empty). Parallel
/// over rows with per-thread partial counts (exact integers: the same result for any thread count).
void class_sizes(Span<int64_t> labels, Span<uint8_t> skip, MutSpan<int64_t> sizes, int n_threads = 1);

/// Rows per value of a coded column: counts[v] = rows with value v, every value in [0, counts.size) (else an
/// InternalError). Parallel as class_sizes (a column of 10M rows read in place: numpy's bincount first casts
/// it to int64).
void value_counts(Span<int32_t> values, MutSpan<int64_t> counts, int n_threads = 1);

/// Per class and column, the minimum and maximum code over the class's rows (rows where `skip[i]` is true
/// are ignored when skip is not empty). Classes with no row get min = INT32_MAX, max = -1. Parallel as
/// class_sizes.
void class_min_max(Matrix<int32_t> codes, Span<int64_t> labels, Span<uint8_t> skip, MutMatrix<int32_t> lo,
                   MutMatrix<int32_t> hi, int n_threads = 1);

/// The number of nonzero bytes of `mask` (a boolean array's true values), over fixed chunks on n_threads
/// threads (numpy's count_nonzero reads 40M flags on one thread: 3 ms, a sixth of a 16-thread audit).
int64_t count_true(Span<uint8_t> mask, int n_threads);

/// Minimum and maximum of every column of `codes` (empty table: INT32_MAX and INT32_MIN), one parallel pass.
void column_min_max(Matrix<int32_t> codes, MutSpan<int32_t> lo, MutSpan<int32_t> hi, int n_threads);

/// Per-class histogram of one coded column: hist(c, v) = rows of class c with value v (skip as above).
/// Parallel as class_sizes.
void class_histogram(Span<int32_t> values, Span<int64_t> labels, Span<uint8_t> skip, MutMatrix<int64_t> hist,
                     int n_threads = 1);

}  // namespace anoncore::core

// Group-by over dictionary-coded rows: dense class labels, class sizes, per-class min/max codes.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::core {

/// Dense labels 0..C-1 for the distinct rows of `codes` (n_rows, n_cols), numbered in order of first
/// appearance. Returns C. O(n_rows * n_cols) expected (mixed-radix packing when the key space fits in
/// 64 bits, otherwise hashing of whole rows). `cardinality[j]` bounds the codes of column j (codes in
/// [0, cardinality[j])).
int64_t dense_labels(Matrix<int32_t> codes, Span<int64_t> cardinality, MutSpan<int64_t> labels);

/// Number of rows per class, optionally skipping rows where `skip[i]` is true (skip may be empty).
void class_sizes(Span<int64_t> labels, Span<uint8_t> skip, MutSpan<int64_t> sizes);

/// Per class and column, the minimum and maximum code over the class's rows (rows where `skip[i]` is true
/// are ignored when skip is not empty). Classes with no row get min = INT32_MAX, max = -1.
void class_min_max(Matrix<int32_t> codes, Span<int64_t> labels, Span<uint8_t> skip, MutMatrix<int32_t> lo,
                   MutMatrix<int32_t> hi);

/// Per-class histogram of one coded column: hist(c, v) = rows of class c with value v (skip as above).
void class_histogram(Span<int32_t> values, Span<int64_t> labels, Span<uint8_t> skip, MutMatrix<int64_t> hist);

}  // namespace anoncore::core

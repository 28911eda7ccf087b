// Utility measures of the SABRE/BUREL experiments (spec sabre-burel.md §2.4): relative error of random COUNT
// queries (Xiao & Tao, SIGMOD 2008) and KL-divergence between OLAP count cubes (Ghinita et al., VLDB 2007)
// of the original and the anonymized table (uniform spread of every class over its published box).
#pragma once
#include <cstdint>

#include "anoncore/core/views.hpp"

namespace anoncore::metrics {

/// A batch of COUNT queries over QI codes plus one SA range: query q constrains the columns
/// `dims(q, 0..lambda-1)` to [lo(q, i), hi(q, i)] and the SA to [sa_lo[q], sa_hi[q]] (all inclusive, codes).
struct CountQueries {
  Matrix<int32_t> dims, lo, hi;  // (Q, lambda)
  Span<int32_t> sa_lo, sa_hi;    // (Q,)
};

/// Exact answers on the original table: qi (n, d) codes and sa (n,) codes. Parallel over queries, rows in
/// blocks. O(Q n lambda).
void count_exact(Matrix<int32_t> qi, Span<int32_t> sa, const CountQueries& q, MutSpan<int64_t> out, int n_threads);

/// Estimates from a partition: every class spreads its tuples uniformly over the integer points of its box
/// [gen_lo, gen_hi] (C, d); the SA factor is exact from the class's SA prefix counts `sa_prefix` (C, m + 1).
/// est = sum_C cnt_C(SA range) * prod_i |R_i cap box_i| / |box_i|. O(Q C lambda).
void count_estimate(Matrix<int32_t> gen_lo, Matrix<int32_t> gen_hi, Matrix<int64_t> sa_prefix, const CountQueries& q,
                    MutSpan<double> out, int n_threads);

/// KL(alpha || beta) between the count cubes over the QI columns `dims` and the SA: alpha counts the original
/// rows per cell, beta spreads each class's SA counts (hist (C, m)) uniformly over the cells of its box
/// (difference arrays: O(C m 2^mu + cells mu)). Both normalised to probabilities; natural logarithm.
/// `cards[i]` is the number of codes of column dims[i]. Finite whenever every row lies in its class's box.
double olap_kl(Matrix<int32_t> qi, Span<int32_t> sa, int64_t m, Span<int32_t> dims, Span<int64_t> cards,
               Matrix<int32_t> gen_lo, Matrix<int32_t> gen_hi, Matrix<int64_t> hist);

}  // namespace anoncore::metrics

// Distances between a class's sensitive-value distribution and a reference distribution (spec sabre-burel.md
// §2.2-2.3, generalization-lattice.md §2.7 and §5.2): EMD under equal, ordered and hierarchical ground distance,
// Hellinger (normalised by 1/sqrt(2)), KL and JS.
//
// Two families of functions:
//  * class-vectorised kernels over integer counts (hist (C, m), sizes (C,), reference (m,)), exact in integer
//    arithmetic wherever the definition allows it (one division at the end), parallel over classes;
//  * pair functions over two float distributions p (reference, "holes") and q (class, "earth").
#pragma once
#include <cstdint>

#include "anoncore/core/views.hpp"

namespace anoncore::distance {

/// Read-only view of a Hierarchy's flat arrays (docs/contracts.md). Node ids: leaves 0..n_leaves-1 in pre-order,
/// internal nodes in post-order after them, root = n_nodes-1. `leaf_start`/`leaf_count` may be empty when a
/// function does not need them (stated per function).
struct HierarchyView {
  Span<int32_t> parent;      // root: -1
  Span<int32_t> height;      // longest path down to a leaf; leaves 0
  Span<int32_t> leaf_start;  // leaves under a node are [leaf_start, leaf_start + leaf_count)
  Span<int32_t> leaf_count;
  int64_t n_leaves = 0;
  int64_t n_nodes() const { return parent.size; }
};

// ---------------------------------------------------------------------------------------------------------
// Class-vectorised kernels. Preconditions (validated in Python): hist is (C, m) with non-negative counts,
// sizes[c] = sum of row c, reference (m,) non-negative with positive total, every value present in a class is
// present in the reference, total reference count < 2^31. Classes with size 0 get NaN. Results do not depend on
// n_threads (each class is computed independently, in a fixed order).
// ---------------------------------------------------------------------------------------------------------

/// EMD with equal ground distance (total variation) = sum_v |P_v Q - Q_v P| / (2 P Q). O(C m).
void emd_equal_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                       int n_threads);

/// EMD with ordered ground distance |i-j|/(m'-1) over the m' values present in the reference, in code order
/// (spec sabre-burel.md §2.2 closed form with prefix sums). 0 when m' = 1. O(C m).
void emd_ordered_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                         int n_threads);

/// EMD with hierarchical ground distance height(LCA)/height(root): one post-order pass per class over node ids
/// (ARX-ORACLES.md §6.3: extra(leaf) = P_v Q - Q_v P in integers, divide by height(root) P Q at the end).
/// Needs parent and height; the leaves are the SA codes (m == n_leaves). O(C n_nodes).
void emd_hierarchical_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference,
                              const HierarchyView& h, MutSpan<double> out, int n_threads);

/// Hellinger distance (1/sqrt 2) sqrt(sum_v (sqrt(p_v) - sqrt(q_v))^2) in [0, 1]. O(C m).
void hellinger_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                       int n_threads);

/// KL(Q_class || P_reference) with logarithms in base `log_base` (finite: class support within the reference).
void kl_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, double log_base,
                MutSpan<double> out, int n_threads);

/// Jensen-Shannon divergence between the class and reference distributions, base `log_base`.
void js_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, double log_base,
                MutSpan<double> out, int n_threads);

// ---------------------------------------------------------------------------------------------------------
// Row-batched EMD over a fixed global domain (SABRE_W, spec streams-castle-sabrew.md A31): every row of q
// (rows, m) against one reference p (m,), both non-negative counts as doubles, each normalised by its total
// (a row with no mass stays all zero; p by max(total, 1)). Unlike the *_classes kernels, every code of the
// domain counts (ordered: |i - j| / (m - 1) with m the domain size, not the values present). The arithmetic is
// numpy's, operation for operation (sequential cumulative sums, numpy's pairwise summation for totals), so
// the values equal the numpy formulation bit for bit. Results do not depend on n_threads.
// ---------------------------------------------------------------------------------------------------------

/// numpy's pairwise summation of a[0..n) (what `np.sum` does along a contiguous float64 axis).
double pairwise_sum(const double* a, int64_t n);

/// Ordered EMD sum_{v < m-1} |cumsum(q/|q| - p/|p|)_v| / (m - 1) of every row; 0 when m <= 1.
void emd_rows_ordered(Matrix<double> q, Span<double> p, MutSpan<double> out, int n_threads);

/// Hierarchical EMD sum_n height(n)/height(root) * min(pos_n, neg_n) of every row, pos_n / neg_n the positive /
/// negative extra mass of n's children; 0 when height(root) <= 0. Needs every HierarchyView field; m == n_leaves.
/// The sum over nodes is numpy's: pairwise for a single row, in node order for several rows (numpy's (rows,
/// nodes) intermediate is column-major then), so one row's value may differ in the last bit between the two.
void emd_rows_hierarchical(Matrix<double> q, Span<double> p, const HierarchyView& h, MutSpan<double> out,
                           int n_threads);

// ---------------------------------------------------------------------------------------------------------
// Pair functions over float distributions (each summing to 1, same length m).
// ---------------------------------------------------------------------------------------------------------

/// 1/2 sum |p - q|.
double emd_equal(Span<double> p, Span<double> q);
/// Ordered EMD over the values in the union of the supports (m' of them; 0 when m' <= 1).
double emd_ordered(Span<double> p, Span<double> q);
/// Hierarchical EMD (parent and height needed; m == n_leaves).
double emd_hierarchical(Span<double> p, Span<double> q, const HierarchyView& h);
/// Hellinger distance normalised by 1/sqrt(2).
double hellinger(Span<double> p, Span<double> q);
/// KL(p || q) in base log_base; +inf when some p_v > 0 has q_v = 0.
double kl_divergence(Span<double> p, Span<double> q, double log_base);
/// JS(p, q) = (KL(p || m) + KL(q || m)) / 2 with m = (p + q) / 2, base log_base.
double js_divergence(Span<double> p, Span<double> q, double log_base);

}  // namespace anoncore::distance

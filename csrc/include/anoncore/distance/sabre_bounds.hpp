// SABRE bucket bounds (spec sabre-burel.md §3.1-3.3): the per-bucket worst-case transport cost CET^U and the
// bucket-level EMD D(G) = EMD(d(G, phi), d(DB, phi)) under the bucket ground distance d^u, in closed form.
#pragma once
#include <cstdint>

#include "anoncore/core/views.hpp"
#include "anoncore/distance/emd.hpp"

namespace anoncore::distance {

/// CET^U per bucket for an ordered (numerical) SA, Theorem 3.2: max over l in B of sum_{i in B} d_li p_i with
/// d_li = |rank_l - rank_i| / (m' - 1) over the global ranks of the m' values present in `reference`. The sum is
/// convex in rank_l, so the maximum sits at the bucket's lowest or highest present value: O(m) in total.
/// `bucket_of[v]` in [0, n_buckets) or -1 (value not in any bucket); values with reference 0 are ignored.
void cet_upper_ordered(Span<int64_t> reference, Span<int32_t> bucket_of, MutSpan<double> out);

/// CET^U per bucket for a categorical SA with hierarchy `h` (parent, height, leaf_start, leaf_count needed).
/// tight = false: the thesis formula (h(n)/h(H)) (sum_B p - min_B p), n = LCA of the bucket's present values
/// (Theorem 3.2; tight only when every pair in B has its LCA at n). tight = true: the exact maximum
/// max_l sum_i d_li p_i with d = h(LCA)/h(H) (spec §8 item 4). O(m depth) in total.
void cet_upper_hierarchical(Span<int64_t> reference, Span<int32_t> bucket_of, const HierarchyView& h, bool tight,
                            MutSpan<double> out);

/// Bucket-level EMD per class for an ordered SA (spec §3.3 closed form). counts (C, B): tuples of each class per
/// bucket; totals (B,): tuples of the table per bucket; buckets are disjoint contiguous intervals of present ranks
/// [lo[i], hi[i]], sorted by lo; n_present = m'. Integer-exact numerator. Rows with zero total give NaN.
void bucket_emd_ordered(Matrix<int64_t> counts, Span<int64_t> totals, Span<int32_t> lo, Span<int32_t> hi,
                        int64_t n_present, MutSpan<double> out, int n_threads);

/// Bucket-level EMD per class for a categorical SA whose buckets are hierarchy nodes forming an antichain
/// (`bucket_node[i]`): the hierarchical EMD of §2.2 on the hierarchy truncated at the bucket nodes.
/// Needs parent and height. Integer-exact numerator.
void bucket_emd_hierarchical(Matrix<int64_t> counts, Span<int64_t> totals, Span<int32_t> bucket_node,
                             const HierarchyView& h, MutSpan<double> out, int n_threads);

}  // namespace anoncore::distance

namespace anoncore::distance {

/// Generic fallback (spec sabre-burel.md §3.3, "for exotic buckets fall back to a small LP or network
/// simplex"): exact EMD between each class's bucket distribution counts(c, :) / A and totals / B under an
/// arbitrary ground distance `ground` (B x B, zero diagonal, satisfying the triangle inequality so that mass
/// staying in its bucket costs nothing). Solved as a transportation problem in scaled integer masses
/// (a_i B - b_i A) by successive shortest paths with potentials. O(C * augmentations * B^2); meant for the
/// small bucket counts of SABRE.
void emd_general(Matrix<int64_t> counts, Span<int64_t> totals, Matrix<double> ground, MutSpan<double> out,
                 int n_threads);

}  // namespace anoncore::distance

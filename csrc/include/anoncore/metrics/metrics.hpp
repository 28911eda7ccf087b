// Information-loss metrics over the class-level view of a partition (docs/contracts.md): every kernel is
// O(n_classes) for one quasi-identifier (column `col` of the (n_classes, n_qi) generalisation matrices), so
// Python loops over the QIs and combines the per-QI sums (weights, gs-factor, round10, aggregates).
//
// Per class E the kernels take two counts: kept_E (released rows) and supp_E (suppressed rows); a class
// produced by an algorithm has one of them zero, but the kernels do not rely on that.
#pragma once
#include <cstdint>

#include "anoncore/core/views.hpp"

namespace anoncore::metrics {

/// A pair of class-weighted sums: Σ_E kept_E·f(E) and Σ_E supp_E·f(E).
template <class T>
struct KeptSuppSums {
  T kept = 0;
  T supp = 0;
};

/// Integer per-class cost read off the published code range [lo, hi] of one QI.
enum class RangeCost : int {
  kCount = 0,              ///< hi − lo + 1: leaves (codes) covered; ARX Loss domain share numerator.
  kCountZeroSingleton = 1, ///< 0 if hi == lo else hi − lo + 1: Cao's categorical GLM numerator (§2.4).
  kSpan = 2,               ///< hi − lo: NCP categorical numerator (|Leaves(a)| − 1).
};

/// Whole-partition counts used by DM, DM*, AECS and the suppression terms.
struct ClassSummary {
  int64_t n_rows = 0;          ///< N = Σ_E (kept_E + supp_E)
  int64_t n_suppressed = 0;    ///< S = Σ_E supp_E
  int64_t n_kept_classes = 0;  ///< #{E : kept_E > 0}
  int64_t dm = 0;              ///< Σ_E kept_E² + N·S (Bayardo–Agrawal DM, ARX's non-monotonic DM)
  int64_t dm_star = 0;         ///< Σ_E (kept_E + supp_E)² (ARX's monotonic DM*: suppression ignored)
};

/// Counts and discernibility of a partition. ARX-ORACLES §7.2 and §7.5. O(n_classes).
/// Preconditions: kept.size == supp.size, counts >= 0, Σ counts² < 2^63.
ClassSummary class_summary(Span<int64_t> kept, Span<int64_t> supp);

/// Σ_E kept_E·cost(E) and Σ_E supp_E·cost(E) with cost from the code range [gen_lo(E, col), gen_hi(E, col)].
/// Exact integer arithmetic. O(n_classes). Preconditions: gen_lo <= gen_hi, shapes (n_classes, n_qi).
KeptSuppSums<int64_t> range_cost_sums(Span<int64_t> kept, Span<int64_t> supp, Matrix<int32_t> gen_lo,
                                      Matrix<int32_t> gen_hi, int64_t col, RangeCost cost);

/// Σ_E kept_E·w(E) and the same for supp_E, with w(E) = max(0, min(values[hi], upper) − max(values[lo], lower)):
/// numeric widths of the published intervals clipped to the domain [lower, upper] (GLM/NCP numerator, Cao
/// §2.4; an interval-hierarchy node may reach outside the data's range). O(n_classes).
/// Precondition: codes index `values`.
KeptSuppSums<double> value_width_sums(Span<int64_t> kept, Span<int64_t> supp, Matrix<int32_t> gen_lo,
                                      Matrix<int32_t> gen_hi, int64_t col, Span<double> values, double lower,
                                      double upper);

/// Σ_E kept_E·node_cost[gen_node(E, col)] and the same for supp_E (e.g. node_cost = node height for
/// Sweeney's precision). O(n_classes). Precondition: gen_node >= 0 and indexes node_cost.
KeptSuppSums<int64_t> node_cost_sums(Span<int64_t> kept, Span<int64_t> supp, Matrix<int32_t> gen_node,
                                     int64_t col, Span<int64_t> node_cost);

/// The two terms of ARX's non-uniform entropy for one QI (ARX-ORACLES §7.3):
///   base = Σ_rows log2(a_v / B(E)),  a_v = rows with value v (all rows, kept and suppressed),
///          B(E) = Σ_{u ∈ [lo_E, hi_E]} a_u = rows whose value lies in the range published by the row's class E
///          (Gionis–Tassa; for a full-domain node this is Σ_v a_v log2(a_v / b_x), x the generalisation of v).
///   supp_term = Σ_x c_x·log2(c_x / S), c_x = suppressed rows whose class publishes range x, S = Σ_x c_x.
/// Both are <= 0. `column` holds the QI's code of every row (codes < n_codes).
/// When the published ranges are pairwise disjoint (every full-domain node) the base is summed per value,
/// in order of first appearance in `column`, as a_v·(ln(a_v/B)/ln 2) in double -- ARX's formula and order, so
/// ARX's values are reproduced to the last bit in the common cases and exactly 0 for ungeneralised values.
/// Otherwise (overlapping ranges, local recoding) it is Σ_v a_v log2 a_v − Σ_E n_E log2 B(E) with
/// compensated long double sums. O(n_rows + n_codes + n_classes) (+ n_s log n_s for the n_s classes with
/// suppressed rows when `with_suppressed_term`).
struct NuEntropyTerms {
  double base = 0.0;
  double supp_term = 0.0;
};
/// The base uses the ranges (base_lo, base_hi), which must cover every row of the class; the suppressed term
/// groups by the published ranges (pub_lo, pub_hi). Both pairs have shape (n_classes, n_qi).
NuEntropyTerms nu_entropy_terms(Span<int32_t> column, int64_t n_codes, Span<int64_t> kept, Span<int64_t> supp,
                                Matrix<int32_t> base_lo, Matrix<int32_t> base_hi, Matrix<int32_t> pub_lo,
                                Matrix<int32_t> pub_hi, int64_t col, bool with_suppressed_term);

}  // namespace anoncore::metrics

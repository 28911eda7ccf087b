// The audit's kernels: privacy criteria as per-class values (spec sabre-burel.md §2.1-2.3, generalization-lattice.md §2.5-2.7,
// ARX-ORACLES.md §6). Each kernel fills one value per equivalence class from the class statistics the criterion
// declares (class sizes, or the sensitive-value histogram and the reference counts); the pass/fail decision and
// the achieved parameter are taken in Python from these values. Classes with size 0 (fully suppressed) get NaN.
// Each class goes through the criteria core (class_criteria.hpp), on the nonzero entries of its row in code
// order; the models' metadata is in models.hpp.
// Results are independent of n_threads: every class is computed on its own, in a fixed order.
#pragma once
#include <cstdint>

#include "anoncore/core/views.hpp"
#include "anoncore/criteria/models.hpp"

namespace anoncore::criteria {

/// Number of distinct sensitive values per class (0 for an empty class). O(C m).
void distinct_values(Matrix<int64_t> hist, MutSpan<int64_t> out, int n_threads);

/// Plug-in Shannon entropy per class in nats, ln n - (1/n) sum_v f_v ln f_v (full sum). O(C m).
void entropy(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<double> out, int n_threads);
/// Grassberger's entropy estimate per class in nats, ln n - (1/n) sum_v f_v G(f_v) (class_criteria.hpp). O(C m).
void entropy_grassberger(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<double> out, int n_threads);

/// Recursive (c, l)-diversity ratio per class for a given l >= 1: r_1 / (r_l + ... + r_m') with the counts
/// sorted descending; +inf when the class has fewer than l distinct values. The class satisfies (c, l) iff the
/// ratio is < c (strict, ARX-ORACLES.md §6.1). O(C m log l).
void recursive_cl_ratio(Matrix<int64_t> hist, Span<int64_t> sizes, int64_t l, MutSpan<double> out, int n_threads);

/// beta-likeness per class (spec sabre-burel.md §2.3): max over values with q > p of (q - p)/p, 0 when no value
/// gains. enhanced = true: +inf when some gain exceeds -ln p (the class violates enhanced beta-likeness for every
/// beta). A value present in the class but absent from the reference has gain +inf. O(C m).
void beta_likeness(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, bool enhanced,
                   MutSpan<double> out, int n_threads);

/// delta-disclosure per class (Brickell & Shmatikov; spec sabre-burel.md §2.1): max over values present in the
/// reference of |ln(q/p)|; +inf when such a value is absent from the class. O(C m).
void delta_disclosure(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                      int n_threads);

}  // namespace anoncore::criteria

// The small interface through which twophase/ and mondrian/ use the EMD kernels and the SABRE bucket-level
// distance (spec sabre-burel.md §2.2, §3.3). INTERIM: until the criteria branch (anoncore::distance) lands on
// main, these are implemented locally in csrc/src/twophase/distance_adapter.cpp; on merge they forward to
// anoncore::distance and the local implementation is deleted. Signatures mirror anoncore::distance.
#pragma once
#include <cstdint>

#include "anoncore/core/views.hpp"

namespace anoncore::twophase {

/// Read-only view of a Hierarchy's flat arrays (docs/contracts.md).
struct HierarchyView {
  Span<int32_t> parent;
  Span<int32_t> height;
  Span<int32_t> leaf_start;
  Span<int32_t> leaf_count;
  int64_t n_leaves = 0;
  int64_t n_nodes() const { return parent.size; }
};

/// Per-class EMD, ordered ground distance over the values present in `reference` (NaN for empty classes).
void emd_ordered_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                         int n_threads);
/// Per-class EMD, hierarchical ground distance height(LCA)/height(root).
void emd_hierarchical_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference,
                              const HierarchyView& h, MutSpan<double> out, int n_threads);
/// Bucket-level EMD D(G) for contiguous present-rank buckets [lo_i, hi_i] (ordered SA), per row of `counts`.
void bucket_emd_ordered(Matrix<int64_t> counts, Span<int64_t> totals, Span<int32_t> lo, Span<int32_t> hi,
                        int64_t n_present, MutSpan<double> out, int n_threads);
/// Bucket-level EMD D(G) for buckets that are an antichain of hierarchy nodes (categorical SA).
void bucket_emd_hierarchical(Matrix<int64_t> counts, Span<int64_t> totals, Span<int32_t> bucket_node,
                             const HierarchyView& h, MutSpan<double> out, int n_threads);

}  // namespace anoncore::twophase

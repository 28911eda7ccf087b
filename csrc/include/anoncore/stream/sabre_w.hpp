// SABRE_W kernels (spec streams-castle-sabrew.md §3, §6.2): the step-15 call of Algorithm SABRE_W, i.e. static
// SABRE on the not-yet-output tuples of a window with threshold t - D, under the *global* ground distance of
// the sensitive domain (spec A31: the triangle inequality EMD(G, W) <= EMD(G, Wo) + EMD(Wo, W) needs one fixed
// metric), followed by the person-aware merge of spec §3.6 (k_s-anonymity counts distinct pids). The window
// driver itself (slides, cases, histograms) lives in Python (anoncore.stream._window).
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/twophase/bucketize.hpp"
#include "anoncore/twophase/distance_adapter.hpp"

namespace anoncore::stream {

/// bucketNum (thesis §3.2) over the *global* ordered domain 0..m-1 (m = reference.size): ground distance
/// |i - j| / (m - 1) whatever values are present, unlike twophase::bucket_num which ranks the present values.
/// Buckets are intervals of codes whose endpoints are present; `lo`/`hi` hold codes and `n_present` is set to m,
/// so that distance::bucket_emd_ordered evaluates the bucket-level EMD under the same global metric.
/// Same greedy rule as bucket_num (largest dv, ties to the lowest code). O(m'^2).
twophase::Buckets bucket_num_global(Span<int64_t> reference, double t);

struct WindowSabreConfig {
  double t = 0.35;       // threshold handed to SABRE (t - D at a DIRECT)
  int64_t k = 1;         // distinct persons per class (and tuples per EC-tree child)
  uint64_t seed = 0;
  bool slices = false;   // Hilbert slicing instead of seeded SABRE-AK retrieval
  bool knn = false;      // SABRE-KNN: exact Euclidean nearest neighbours over `coords` instead of Hilbert keys
  int n_threads = 1;
};

struct WindowSabreOutput {
  Status status = Status::Ok;   // Infeasible: fewer than k distinct persons in the input
  std::vector<int64_t> labels;  // class per tuple, 0..n_classes-1
  int64_t n_classes = 0;
  int64_t n_recipes = 0;        // EC-tree leaves before the person merge
  int64_t n_buckets = 0;
  double u = 0.0;
};

/// SABRE on one window's not-yet-output tuples (spec §3.2 step 15): bucketization under the global metric
/// (categorical SA: bucket_cat on the SA hierarchy `h`; ordered SA, h == nullptr: bucket_num_global), EC-size tree
/// with D + U <= t and >= k tuples per child, SABRE-AK retrieval along the precomputed Hilbert `keys`, then
/// merge_for_persons. Every class G satisfies EMD(SA(G), SA(input)) <= t under the global metric (Thm 3.4 plus
/// convexity of EMD for the merges). O(n log n + |S_G| |phi| log n).
/// `coords` (n, d) holds the normalised QI coordinates (used only with cfg.knn).
WindowSabreOutput window_sabre(Span<int32_t> sa, int64_t m, const twophase::HierarchyView* h, Span<uint64_t> keys,
                               Span<int64_t> pids, Matrix<double> coords, const WindowSabreConfig& cfg);

/// Person-aware merge (spec §3.6): walk the classes in label order, accumulating consecutive classes into a
/// group until it covers >= k distinct pids; a final group short of k joins the previous group. Relabels in
/// place and returns the number of groups, or -1 when all tuples together have fewer than k distinct pids.
/// Merging classes keeps t-closeness to a fixed reference (EMD is convex in the class distribution).
/// O(n log n).
int64_t merge_for_persons(MutSpan<int64_t> labels, int64_t n_labels, Span<int64_t> pids, int64_t k);

/// Hilbert key of every tuple from its normalised coordinates (n, d) in [0, 1] (numeric: (v - L) / (U - L);
/// categorical: leaf rank / (n_leaves - 1)), `bits` per dimension (n_dims * bits <= 64). O(n d bits).
void stream_hilbert_keys(Matrix<double> coords, int bits, MutSpan<uint64_t> keys);

}  // namespace anoncore::stream

// SABRE end to end (spec sabre-burel.md §3, Algorithm SABRE(DB, SA, t) plus k): bucketization, EC-size tree
// under D + U <= t and |child| >= k, and materialization by Hilbert neighbours (SABRE-AK) or exact kNN
// (SABRE-KNN). Classes are returned as row labels; Python publishes each as its minimum bounding box.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/twophase/bucketize.hpp"
#include "anoncore/twophase/ec_tree.hpp"
#include "anoncore/twophase/hilbert.hpp"
#include "anoncore/twophase/pipeline.hpp"
#include "anoncore/twophase/retrieve.hpp"

namespace anoncore::twophase {

/// Absolute slack in the split test D + U <= t (floating-point noise only; the audit uses the same).
inline constexpr double kSplitTolerance = 1e-12;

/// ECSize(phi) (§3.3) with the SABRE acceptance test: both halves need D(child) + U <= t and >= k tuples.
/// `h` is null for an ordered SA. D uses the closed forms of §3.3 (categorical buckets are hierarchy nodes).
EcLeaves sabre_ec_sizes(const Buckets& phi, const HierarchyView* h, double t, int64_t k, int n_threads);

struct SabreConfig {
  double t = 0.35;
  int64_t k = 1;
  bool tight_bound = false;
  bool knn = false;
  bool slices = false;  // Hilbert slicing (spec §7) instead of seeded AK retrieval
  SeedPolicy policy = SeedPolicy::Random;
  uint64_t seed = 0;
  int n_threads = 1;
  InterruptHook interrupt;
};

using SabreOutput = TwoPhaseOutput<Buckets>;

/// Run SABRE on SA codes `sa` (values in [0, m)) and QI codes (n, d) with normalised coordinate tables.
/// `h` non-null: categorical SA with that hierarchy (m == h->n_leaves); null: ordered SA (code order).
/// Precondition (checked in Python): n >= k >= 1, 0 < t <= 1.
SabreOutput sabre(Span<int32_t> sa, int64_t m, const HierarchyView* h, Matrix<int32_t> qi,
                  const CoordTables& coords, int64_t max_card, const SabreConfig& cfg);

}  // namespace anoncore::twophase

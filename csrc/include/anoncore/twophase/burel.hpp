// BUREL (spec sabre-burel.md §4, Cao thesis ch. 4): beta-likeness by bucketization (DPpartition over SA values
// sorted by frequency), redistribution (biSplit on the shared EC-size tree with the eligibility test of
// Theorem 4.1) and Hilbert-order retrieval (shared with SABRE-AK).
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/twophase/ec_tree.hpp"
#include "anoncore/twophase/hilbert.hpp"
#include "anoncore/twophase/pipeline.hpp"
#include "anoncore/twophase/retrieve.hpp"

namespace anoncore::twophase {

/// Relative slack of the count-space comparisons of DPpartition and biSplit (spec §8 item 7): floating-point
/// noise only. Equalities such as 2/6 vs f(1/6) = 1/3 (Example 4.1 at beta = 1) are decided as equalities.
inline constexpr double kBurelTolerance = 1e-12;

/// The enhanced beta-likeness bound f(p) = p (1 + min{beta, -ln p}) (Definition 4.3); basic: p (1 + beta).
double burel_f(double p, double beta, bool enhanced);

/// Result of DPpartition: buckets of SA values, contiguous in ascending frequency order.
struct BurelBuckets {
  /// Present SA codes sorted by (count, code): the DP's order.
  std::vector<int32_t> order;
  /// DP trace over that order (length m' + 1): N[e] = fewest buckets covering the first e values, S[e] = start
  /// (1-based) of the last bucket in an optimal cover.
  std::vector<int64_t> dp_n, dp_s;
  /// Bucket of every SA code (-1 for codes absent from the table); buckets numbered in ascending frequency order.
  std::vector<int32_t> bucket_of;
  /// Tuples per bucket (|B_j|) and count of the bucket's rarest value (N_{l_j}).
  std::vector<int64_t> size, min_count;
  /// f(p_{l_j}) per bucket.
  std::vector<double> bound;
  int64_t n_buckets() const { return static_cast<int64_t>(size.size()); }
};

/// DPpartition (§4.2): the minimum number of buckets, contiguous in frequency order, such that every bucket's
/// total p is at most f(p_min of the bucket) (Lemma 4.4; `strict`: strictly below, as the thesis's pseudo-code).
/// The comparison runs in count space: sum N_i <= N_min (1 + min{beta, -ln p_min}) (1 + kBurelTolerance).
/// Ties between equal optima keep the first found (largest start), as the pseudo-code. O(m'^2) after a sort.
BurelBuckets dp_partition(Span<int64_t> reference, double beta, bool enhanced, bool strict);

/// biSplit (§4.3): EC-size tree from the bucket sizes; a halving is accepted iff both children are eligible,
/// x_j <= f(p_{l_j}) |G| for every bucket j (Theorem 4.1), and non-empty.
EcLeaves burel_ec_sizes(const BurelBuckets& phi);

/// A deviation from the thesis (option split='balanced'): where biSplit halves every count, this splits a node
/// into the two eligible children whose sizes are closest to half (left size L = floor(S/2), ceil(S/2),
/// floor(S/2) - 1, ... up to S/4 away): for a given L, child counts x_j in [max(0, a_j - f_j (S - L)),
/// min(a_j, f_j L)] summing to L exist iff the bounds' sums bracket L, and the counts nearest to the proportional
/// a_j L / S are taken. A node is a leaf when no such L exists. Every leaf is eligible (Theorem 4.1 holds).
/// Leaves in depth-first order. O(nodes * tries * |phi|).
EcLeaves burel_ec_sizes_balanced(const BurelBuckets& phi);

struct BurelConfig {
  double beta = 4.0;
  bool enhanced = true;
  bool strict = false;
  bool slices = false;    // Hilbert slicing (spec §7) instead of seeded retrieval
  bool balanced = false;  // burel_ec_sizes_balanced instead of the thesis's halving biSplit
  SeedPolicy policy = SeedPolicy::Random;
  uint64_t seed = 0;
  int n_threads = 1;
  InterruptHook interrupt;
};

using BurelOutput = TwoPhaseOutput<BurelBuckets>;

/// Algorithm BUREL(DB, SA, beta) end to end on SA codes `sa` (values in [0, m)) and QI codes (n, d) with
/// normalised coordinate tables. Precondition (checked in Python): beta > 0, n >= 1.
BurelOutput burel(Span<int32_t> sa, int64_t m, Matrix<int32_t> qi, const CoordTables& coords, int64_t max_card,
                  const BurelConfig& cfg);

/// Merge post-processing of BUREL for semantic / range-based beta-likeness (§4.5), on class statistics.
/// `groups` lists the SA code ranges [lo, hi] (inclusive) whose total share must satisfy the enhanced bound
/// (semantic: hierarchy nodes' leaf ranges; range-based: runs of present values within epsilon). A class
/// violating some group is merged with the alive class minimising IL(G1 u G2) - IL(G1) (GLM, equal weights),
/// repeatedly, until it complies (Lemma 4.2 guarantees termination). Classes are scanned in index order; the
/// violating class absorbs its neighbour (smallest increase, ties to the smallest index); survivors are
/// renumbered by their first original class. Neighbour search: a KD-tree over the class box centres whose nodes
/// keep the union of their boxes (widened as boxes grow) and their smallest per-dimension loss; a best-first
/// search by the lower bound sum_j max(0, numeric gap to the node's union box, node loss_j - own loss_j) stops
/// when the bound exceeds the best exact O(d h) increase. Typically O(log C) nodes per merge instead of the
/// thesis's scan of every class.
struct MergeInput {
  Matrix<int64_t> hist;       // (C, m) SA histogram per class
  Span<int64_t> reference;    // (m,) table counts
  Matrix<int32_t> groups;     // (G, 2) inclusive SA code ranges
  double beta = 4.0;          // a group passes iff (rho2 - rho1) / rho1 <= beta and <= -ln rho1
  Matrix<int32_t> box_lo, box_hi;  // (C, d) class boxes as QI code ranges (categorical: leaf ranks)
  CoordTables coords;              // normalised coordinate per code (numeric GLM: coord(hi) - coord(lo))
  Span<uint8_t> categorical;       // (d,) 1: GLM from the hierarchy: leaf_count(LCA) / n_leaves, 0 for one leaf
  // Categorical hierarchies, concatenated: node parent (local ids), leaf_start and leaf_count; leaves are nodes
  // 0..n_leaves-1 in code order; node_offsets has d + 1 entries (empty ranges for numeric dimensions).
  Span<int32_t> parent, leaf_start, leaf_count;
  Span<int64_t> node_offsets;
  Span<int32_t> n_leaves;  // (d,)
  InterruptHook interrupt;
};

struct MergeOutput {
  Status status = Status::Ok;
  std::vector<int64_t> class_map;  // old class -> surviving class (dense, in order of first appearance)
  int64_t n_classes = 0;
  int64_t n_merges = 0;
  int64_t n_violating = 0;  // classes violating before merging
  int64_t n_evaluated = 0;  // exact IL evaluations in the neighbour searches
};

MergeOutput burel_merge(const MergeInput& in);

}  // namespace anoncore::twophase

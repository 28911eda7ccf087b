// SABRE bucketization (spec sabre-burel.md §3.1-3.2): greedy top-down splitting of the sensitive domain into
// buckets until U = sum of per-bucket worst-case transport costs CET^U drops below t.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"
#include "anoncore/twophase/distance_adapter.hpp"

namespace anoncore::twophase {

/// A bucket partition phi of the sensitive values present in the table, in domain order.
struct Buckets {
  /// Bucket of every SA code (-1 for codes absent from the table).
  std::vector<int32_t> bucket_of;
  /// Categorical SA: the hierarchy node of each bucket (lowest common ancestor of its present values);
  /// ordered SA: -1.
  std::vector<int32_t> node;
  /// Ordered SA: the bucket's interval [lo, hi] of present ranks (0..m'-1); categorical SA: the code range of
  /// `node`'s leaves.
  std::vector<int32_t> lo, hi;
  /// Tuples of the table per bucket (|B_j|).
  std::vector<int64_t> size;
  /// CET^U per bucket.
  std::vector<double> cet;
  /// U = sum of cet (computed exactly, then divided).
  double u = 0.0;
  /// CET^U of the whole domain (the root of the bucketization tree).
  double root_cet = 0.0;
  /// U after each split, in order (trace of the greedy loop).
  std::vector<double> u_trace;
  /// Number of present SA values (m').
  int64_t n_present = 0;
  int64_t n_buckets() const { return static_cast<int64_t>(size.size()); }
};

/// bucketCat (§3.2) over the SA hierarchy `h` (leaves = SA codes, reference.size == h.n_leaves). Split the
/// bucket with the largest dv (ties: earliest in pre-order) until U < t. Bucket nodes are the lowest common
/// ancestors of their present values; CET^U uses the thesis formula (h(n)/h(H)) (mass - min p), or the exact
/// maximum max_l sum_i d_li p_i when `tight` (spec §8 item 4). O(|H| * |phi|) time.
Buckets bucket_cat(Span<int64_t> reference, const HierarchyView& h, double t, bool tight);

/// bucketNum (§3.2) over ordered SA codes (rank order = code order of present values). Each split tries every
/// split point with the O(1) prefix-sum CET^U and keeps the leftmost minimum; ties in dv go to the lowest rank.
/// O(m'^2) time.
Buckets bucket_num(Span<int64_t> reference, double t);

}  // namespace anoncore::twophase

// The P-SEQ join model on taxonomy values (Wang & Fung, "Anonymizing Sequential Releases", Section 3.3):
// consistency (same generalization path) and inherited inconsistency, both as O(1) leaf-interval tests.
//
// Node ids follow anoncore's Hierarchy numbering: every node covers the contiguous leaf range
// [leaf_start, leaf_start + leaf_count), so u is an ancestor-or-self of v iff v's range lies inside u's (the
// Euler-tour interval test on leaf positions) and u, v lie on one root-to-leaf path iff the ranges intersect.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::release {

/// Leaf-interval arrays of one taxonomy (anoncore Hierarchy numbering).
struct Taxonomy {
  Span<int32_t> parent;
  Span<int32_t> leaf_start;
  Span<int32_t> leaf_count;
};

/// u is an ancestor-or-self of v (v's leaf range inside u's). O(1).
inline bool covers(const Taxonomy& t, int32_t u, int32_t v) {
  return t.leaf_start[u] <= t.leaf_start[v] &&
         t.leaf_start[v] + t.leaf_count[v] <= t.leaf_start[u] + t.leaf_count[u];
}

/// Consistency predicate (Section 3.3): u and v lie on one generalization path. O(1).
inline bool consistent(const Taxonomy& t, int32_t u, int32_t v) {
  return t.leaf_start[u] < t.leaf_start[v] + t.leaf_count[v] && t.leaf_start[v] < t.leaf_start[u] + t.leaf_count[u];
}

/// One matching condition between a T1 join slot and a join slot of previous release `release` (1-based).
/// kind 0: consistency on one taxonomy (h1 == hr); kind 1: inconsistency pairs (a on h1, b on hr) in
/// [pair_begin, pair_end): t1 value u and release value w are inconsistent iff some pair has u under a and
/// w under b (inconsistency is inherited by specializations).
struct Constraint {
  int32_t release = 1;
  int32_t t1_slot = 0;
  int32_t tr_slot = 0;
  int32_t kind = 0;
  int32_t h1 = 0;
  int32_t hr = 0;
  int64_t pair_begin = 0;
  int64_t pair_end = 0;
};

/// Both predicates for one release: `u` holds the T1 join-slot nodes, `w` the release's slot nodes.
inline bool matches(const std::vector<Taxonomy>& tax, const std::vector<Constraint>& cons, int32_t release,
                    const int32_t* u, const int32_t* w, Span<int32_t> pair_a, Span<int32_t> pair_b) {
  for (const Constraint& c : cons) {
    if (c.release != release) continue;
    const int32_t a = u[c.t1_slot], b = w[c.tr_slot];
    if (c.kind == 0) {
      if (!consistent(tax[static_cast<size_t>(c.h1)], a, b)) return false;
    } else {
      for (int64_t p = c.pair_begin; p < c.pair_end; ++p)
        if (covers(tax[static_cast<size_t>(c.h1)], pair_a[p], a) && covers(tax[static_cast<size_t>(c.hr)], pair_b[p], b))
          return false;
    }
  }
  return true;
}

}  // namespace anoncore::release

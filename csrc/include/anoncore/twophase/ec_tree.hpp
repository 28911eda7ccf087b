// The EC-size tree of the redistribution phase (spec sabre-burel.md §3.3 ECSize/dichotomize, §4.3 biSplit):
// halve every bucket's count (half-up: the left child takes ceil(a/2)), accept the split only when the model
// accepts both children, recurse. Generic over the acceptance test, so SABRE (D + U <= t, |child| >= k) and
// BUREL (eligibility) share it.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::twophase {

/// Leaves of an EC-size tree: `counts` is (n_leaves, n_buckets) row-major, leaves in depth-first left-to-right
/// order (the materialization order of spec §8 item 12).
struct EcLeaves {
  std::vector<int64_t> counts;
  int64_t n_buckets = 0;
  int64_t n_nodes = 0;     // tree nodes created (accepted splits * 2 + 1)
  int64_t n_rejected = 0;  // candidate splits rejected by the model
  int64_t n_leaves() const { return n_buckets ? static_cast<int64_t>(counts.size()) / n_buckets : 0; }
};

/// dichotomize from `root` (|B_1|..|B_|phi||). The tree is grown level by level so that the acceptance test
/// runs on batches: `accept(Matrix<int64_t> children, MutSpan<uint8_t> ok)` receives candidate children as
/// rows (rows 2i and 2i+1 are the two halves of one node) and sets ok[r] for each. A node is a leaf when all its
/// counts are < 2 or when either half is refused. O(nodes * |phi|) plus the cost of `accept`.
template <class Accept>
EcLeaves ec_size_tree(Span<int64_t> root, Accept&& accept) {
  const int64_t B = root.size;
  struct TreeNode {
    int64_t left = -1;  // index of left child (right = left + 1), -1 for a leaf
  };
  std::vector<int64_t> arrays(root.begin(), root.end());  // node arrays, node i at [i*B, (i+1)*B)
  std::vector<TreeNode> nodes(1);
  std::vector<int64_t> frontier{0};
  std::vector<int64_t> cand;
  std::vector<uint8_t> ok;
  std::vector<int64_t> splittable;
  EcLeaves out;
  out.n_buckets = B;
  while (!frontier.empty()) {
    splittable.clear();
    cand.clear();
    for (int64_t id : frontier) {
      const int64_t* a = arrays.data() + id * B;
      bool any = false;
      for (int64_t i = 0; i < B; ++i) any = any || a[i] >= 2;
      if (!any) continue;
      splittable.push_back(id);
      for (int64_t i = 0; i < B; ++i) cand.push_back((a[i] + 1) / 2);  // half-up (Java round), never round-half-even
      for (int64_t i = 0; i < B; ++i) cand.push_back(a[i] / 2);
    }
    if (splittable.empty()) break;
    const auto rows = static_cast<int64_t>(splittable.size()) * 2;
    ok.assign(static_cast<size_t>(rows), 0);
    accept(Matrix<int64_t>{cand.data(), rows, B}, MutSpan<uint8_t>{ok.data(), rows});
    frontier.clear();
    for (size_t s = 0; s < splittable.size(); ++s) {
      if (!(ok[2 * s] && ok[2 * s + 1])) {
        ++out.n_rejected;
        continue;
      }
      const auto left = static_cast<int64_t>(nodes.size());
      nodes[static_cast<size_t>(splittable[s])].left = left;
      nodes.emplace_back();
      nodes.emplace_back();
      arrays.insert(arrays.end(), cand.begin() + static_cast<std::ptrdiff_t>(2 * s * static_cast<size_t>(B)),
                    cand.begin() + static_cast<std::ptrdiff_t>((2 * s + 2) * static_cast<size_t>(B)));
      frontier.push_back(left);
      frontier.push_back(left + 1);
    }
  }
  out.n_nodes = static_cast<int64_t>(nodes.size());
  // Depth-first, left-to-right leaves.
  std::vector<int64_t> stack{0};
  while (!stack.empty()) {
    const int64_t id = stack.back();
    stack.pop_back();
    const int64_t l = nodes[static_cast<size_t>(id)].left;
    if (l < 0) {
      out.counts.insert(out.counts.end(), arrays.begin() + id * B, arrays.begin() + (id + 1) * B);
    } else {
      stack.push_back(l + 1);
      stack.push_back(l);
    }
  }
  return out;
}

}  // namespace anoncore::twophase

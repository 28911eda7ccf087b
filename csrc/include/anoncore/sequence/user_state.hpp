// Per-user problem state shared by the Top-Down and Bottom-Up batch kernels (Bonomi, Fan, Jin, WSDM 2016;
// spec sequence-sanitization.md §1.4, §1.5, §2.1). Internal to the sequence kernels: it mirrors the Python
// reference anoncore.sequence._problem.UserProblem (same counts, same floating-point summation order), so that
// the C++ kernels and the Python references return identical maps.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"
#include "anoncore/sequence/counting.hpp"

namespace anoncore::sequence {

/// Taxonomy arrays in contract numbering (leaves 0..n_leaves-1, root = last node).
struct TaxonomyView {
  Span<int32_t> parent;      // root: -1
  Span<int32_t> depth;       // root: 0
  Span<int32_t> leaf_start;  // leaves under a node: [leaf_start, leaf_start + leaf_count)
  Span<int32_t> leaf_count;
  int64_t n_leaves = 0;
};

namespace detail {

/// Ĩ ≤ ε is tested as Ĩ ≤ ε + 1e-12·max(1, ε) (spec §5 H7).
inline double mi_tolerance(double eps) { return eps + 1e-12 * std::max(1.0, eps); }

/// Lowest common ancestor by climbing, O(h_max).
inline int32_t lca(const TaxonomyView& tax, int32_t u, int32_t v) {
  int32_t du = tax.depth[u], dv = tax.depth[v];
  while (du > dv) u = tax.parent[u], --du;
  while (dv > du) v = tax.parent[v], --dv;
  while (u != v) u = tax.parent[u], v = tax.parent[v];
  return u;
}

/// One user's problem state: S, 𝒫 (deduplicated leaf patterns), f_S(p), N, unigrams, optional pair table.
/// Buffers are reused across the users of a chunk.
class UserState {
 public:
  UserState(const TaxonomyView& tax, Matrix<double> cost, int64_t m, int64_t w, double log_base, bool use_pair_table)
      : tax_(tax), cost_(cost), m_(m), w_(w), L_(tax.n_leaves), root_(static_cast<int32_t>(tax.parent.size - 1)) {
    f_.resize(static_cast<size_t>(L_));
    if (m_ == 2 && use_pair_table) pair_.resize(static_cast<size_t>(L_ * L_));
    dp_.resize(static_cast<size_t>(m_));
    ln_base_ = std::log(log_base);
  }

  void load(const int32_t* s, int64_t n, const int32_t* pats, int64_t n_pat) {
    s_ = s;
    n_ = n;
    pats_ = pats;
    n_pat_ = n_pat;
    N_ = total_embeddings(n, w_, m_);
    std::fill(f_.begin(), f_.end(), 0);
    for (int64_t i = 0; i < n; ++i) ++f_[static_cast<size_t>(s[i])];
    occ_.clear();
    for (int64_t a = 0; a < L_; ++a)
      if (f_[static_cast<size_t>(a)] > 0) occ_.push_back(static_cast<int32_t>(a));
    if (!pair_.empty()) {
      std::fill(pair_.begin(), pair_.end(), 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t* row = pair_.data() + static_cast<int64_t>(s[i]) * L_;
        const int64_t end = std::min(i + w_, n - 1);
        for (int64_t j = i + 1; j <= end; ++j) ++row[s[j]];
      }
    }
    fs_.assign(static_cast<size_t>(n_pat), 0);
    img_.assign(static_cast<size_t>(n_pat * m_), 0);
    fi_.assign(static_cast<size_t>(n_pat), 0);
    std::vector<int32_t> ident(static_cast<size_t>(L_));
    for (int64_t a = 0; a < L_; ++a) ident[static_cast<size_t>(a)] = static_cast<int32_t>(a);
    for (int64_t k = 0; k < n_pat; ++k) fs_[static_cast<size_t>(k)] = count_image(ident.data(), pats + k * m_);
    n_evals = 0;
  }

  /// f_Ŝ(q) for a node pattern q under map h (exact node equality).
  int64_t count_image(const int32_t* h, const int32_t* q) {
    if (!pair_.empty()) {
      const int32_t a = q[0], b = q[1];
      const int64_t a0 = tax_.leaf_start[a], a1 = a0 + tax_.leaf_count[a];
      const int64_t b0 = tax_.leaf_start[b], b1 = b0 + tax_.leaf_count[b];
      int64_t total = 0;
      for (int64_t x = a0; x < a1; ++x) {
        if (h[x] != a) continue;
        const int64_t* row = pair_.data() + x * L_;
        for (int64_t y = b0; y < b1; ++y)
          if (h[y] == b) total += row[y];
      }
      return total;
    }
    int64_t total = 0;
    for (int64_t st = 0; st < n_; ++st) {
      if (h[s_[st]] != q[0]) continue;
      if (m_ == 1) {
        ++total;
        continue;
      }
      dp_[0] = 1;
      std::fill(dp_.begin() + 1, dp_.end(), 0);
      const int64_t end = std::min(st + w_, n_ - 1);
      for (int64_t j = st + 1; j <= end; ++j) {
        const int32_t g = h[s_[j]];
        for (int64_t k = m_ - 1; k >= 1; --k)
          if (g == q[k]) dp_[static_cast<size_t>(k)] += dp_[static_cast<size_t>(k - 1)];
      }
      total += dp_[static_cast<size_t>(m_ - 1)];
    }
    return total;
  }

  double mi_from(const std::vector<int64_t>& fimg) const {
    if (N_ == 0) return 0.0;
    const double N = static_cast<double>(N_);
    double total = 0.0;
    for (int64_t k = 0; k < n_pat_; ++k) {
      const int64_t fs = fs_[static_cast<size_t>(k)];
      if (fs > 0)
        total += (static_cast<double>(fs) / N) *
                 (std::log(N / static_cast<double>(fimg[static_cast<size_t>(k)])) / ln_base_);
    }
    return total;
  }

  double entropy() const { return mi_from(fs_); }

  /// Ĩ(h): one count per distinct image h(p).
  double mi(const int32_t* h) {
    ++n_evals;
    for (int64_t k = 0; k < n_pat_; ++k) {
      int32_t* im = img_.data() + k * m_;
      for (int64_t j = 0; j < m_; ++j) im[j] = h[pats_[k * m_ + j]];
      int64_t same = -1;
      for (int64_t k2 = 0; k2 < k && same < 0; ++k2)
        if (std::equal(im, im + m_, img_.data() + k2 * m_)) same = k2;
      fi_[static_cast<size_t>(k)] = same >= 0 ? fi_[static_cast<size_t>(same)] : count_image(h, im);
    }
    return mi_from(fi_);
  }

  /// UL(h) = Σ_a f(a) c(a, h(a)), summed sequentially over occurring leaves in leaf order.
  double ul(const int32_t* h) const {
    double acc = 0.0;
    for (int32_t a : occ_) acc += static_cast<double>(f_[static_cast<size_t>(a)]) * cost_(a, h[a]);
    return acc;
  }

  int32_t child_toward(int32_t u, int32_t leaf) const {
    int32_t x = leaf;
    while (tax_.parent[x] != u) x = tax_.parent[x];
    return x;
  }

  const TaxonomyView& tax_;
  Matrix<double> cost_;
  int64_t m_, w_, L_;
  int32_t root_;
  double ln_base_ = 0.0;
  const int32_t* s_ = nullptr;
  int64_t n_ = 0;
  const int32_t* pats_ = nullptr;
  int64_t n_pat_ = 0;
  int64_t N_ = 0;
  std::vector<int64_t> f_, pair_, dp_, fs_, fi_;
  std::vector<int32_t> img_, occ_;
  int64_t n_evals = 0;
};

}  // namespace detail
}  // namespace anoncore::sequence

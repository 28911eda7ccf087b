#include "anoncore/sequence/top_down.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/sequence/counting.hpp"

namespace anoncore::sequence {
namespace {

constexpr int64_t kUserChunk = 4;

/// One user's problem state (buffers reused across users of a chunk).
class UserState {
 public:
  UserState(const TaxonomyView& tax, Matrix<double> cost, const TopDownParams& p, int64_t m)
      : tax_(tax), cost_(cost), p_(p), m_(m), L_(tax.n_leaves), root_(static_cast<int32_t>(tax.parent.size - 1)) {
    f_.resize(static_cast<size_t>(L_));
    if (m_ == 2 && p_.use_pair_table) pair_.resize(static_cast<size_t>(L_ * L_));
    dp_.resize(static_cast<size_t>(m_));
    ln_base_ = std::log(p_.log_base);
  }

  void load(const int32_t* s, int64_t n, const int32_t* pats, int64_t n_pat) {
    s_ = s;
    n_ = n;
    pats_ = pats;
    n_pat_ = n_pat;
    N_ = total_embeddings(n, p_.w, m_);
    std::fill(f_.begin(), f_.end(), 0);
    for (int64_t i = 0; i < n; ++i) ++f_[static_cast<size_t>(s[i])];
    occ_.clear();
    for (int64_t a = 0; a < L_; ++a)
      if (f_[static_cast<size_t>(a)] > 0) occ_.push_back(static_cast<int32_t>(a));
    if (!pair_.empty()) {
      std::fill(pair_.begin(), pair_.end(), 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t* row = pair_.data() + static_cast<int64_t>(s[i]) * L_;
        const int64_t end = std::min(i + p_.w, n - 1);
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
      const int64_t end = std::min(st + p_.w, n_ - 1);
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
      if (fs > 0) total += (static_cast<double>(fs) / N) * (std::log(N / static_cast<double>(fimg[static_cast<size_t>(k)])) / ln_base_);
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
  const TopDownParams& p_;
  int64_t m_, L_;
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

double tolerance(double eps) { return eps + 1e-12 * std::max(1.0, eps); }

/// Algorithm 1 for the loaded user; writes the map into h (length n_leaves) and returns the absolute ε used.
double run_top_down(UserState& st, int32_t* h, std::vector<int32_t>& g, std::vector<int32_t>& active,
                    std::vector<char>& removed, std::vector<int64_t>& stamp, std::vector<double>& cache_ul,
                    std::vector<double>& cache_mi, std::vector<int32_t>& moved) {
  const TopDownParams& p = st.p_;
  const int64_t L = st.L_;
  const int32_t root = st.root_;
  const double H = st.entropy();
  const double eps = p.relative ? p.epsilon * H : p.epsilon;
  const double tol = tolerance(eps);
  // Σ_S (sorted unique leaf codes of the patterns)
  std::vector<int32_t> sigma_s(st.pats_, st.pats_ + st.n_pat_ * st.m_);
  std::sort(sigma_s.begin(), sigma_s.end());
  sigma_s.erase(std::unique(sigma_s.begin(), sigma_s.end()), sigma_s.end());
  for (int64_t a = 0; a < L; ++a) g[static_cast<size_t>(a)] = static_cast<int32_t>(a);
  for (int32_t a : sigma_s) g[static_cast<size_t>(a)] = root;
  active.clear();
  if (p.sigma_s_shortcut && st.mi(g.data()) <= tol) {
    std::copy(g.begin(), g.end(), h);
    for (int32_t a : sigma_s)
      if (st.f_[static_cast<size_t>(a)] > 0) active.push_back(a);
  } else {
    std::fill(h, h + L, root);
    active.assign(st.occ_.begin(), st.occ_.end());
  }
  std::sort(active.begin(), active.end(), [&](int32_t a, int32_t b) {
    const int64_t fa = st.f_[static_cast<size_t>(a)], fb = st.f_[static_cast<size_t>(b)];
    return fa != fb ? fa > fb : a < b;
  });
  double cur_ul = st.ul(h);
  int64_t pass = 0;
  std::vector<int32_t> best(static_cast<size_t>(L));
  while (!active.empty()) {
    ++pass;
    double best_ul = std::numeric_limits<double>::infinity();
    bool have_best = false;
    std::fill(removed.begin(), removed.end(), 0);
    for (int32_t a : active) {
      if (removed[static_cast<size_t>(a)]) continue;
      const int32_t u = h[a];
      if (u == a) {
        removed[static_cast<size_t>(a)] = 1;
        continue;
      }
      const int32_t v = st.child_toward(u, a);
      const int64_t lo = st.tax_.leaf_start[v], hi = lo + st.tax_.leaf_count[v];
      double ul_c;
      double mi_c = std::numeric_limits<double>::quiet_NaN();
      if (stamp[static_cast<size_t>(v)] == pass) {
        ul_c = cache_ul[static_cast<size_t>(v)];
        mi_c = cache_mi[static_cast<size_t>(v)];
      } else {
        double s = 0.0;
        for (int64_t x = lo; x < hi; ++x)
          if (h[x] == u && st.f_[static_cast<size_t>(x)] != 0)
            s += static_cast<double>(st.f_[static_cast<size_t>(x)]) * (st.cost_(x, v) - st.cost_(x, u));
        ul_c = cur_ul + s;
        stamp[static_cast<size_t>(v)] = pass;
        cache_ul[static_cast<size_t>(v)] = ul_c;
        cache_mi[static_cast<size_t>(v)] = mi_c;
      }
      if (ul_c > best_ul || (!p.tie_last && ul_c == best_ul)) continue;
      moved.clear();
      for (int64_t x = lo; x < hi; ++x)
        if (h[x] == u) moved.push_back(static_cast<int32_t>(x));
      std::copy(h, h + L, g.begin());
      for (int32_t x : moved) g[static_cast<size_t>(x)] = v;
      if (std::isnan(mi_c)) {
        mi_c = st.mi(g.data());
        cache_mi[static_cast<size_t>(v)] = mi_c;
      }
      if (mi_c <= tol) {
        best_ul = ul_c;
        best.swap(g);
        g.resize(static_cast<size_t>(L));
        have_best = true;
      } else if (p.prune) {
        for (int64_t x = lo; x < hi; ++x) removed[static_cast<size_t>(x)] = 1;
      }
    }
    size_t keep = 0;
    for (int32_t a : active)
      if (!removed[static_cast<size_t>(a)]) active[keep++] = a;
    active.resize(keep);
    if (!have_best) break;
    std::copy(best.begin(), best.end(), h);
    cur_ul = st.ul(h);
    keep = 0;
    for (int32_t a : active)
      if (h[a] != a) active[keep++] = a;
    active.resize(keep);
  }
  return eps;
}

}  // namespace

Status top_down_batch(Span<int64_t> offsets, Span<int32_t> symbols, const TaxonomyView& tax, Matrix<double> cost,
                      Span<int64_t> pattern_offsets, Matrix<int32_t> patterns, const TopDownParams& params,
                      int n_threads, const TopDownOutputs& out, const InterruptHook& hook) {
  const int64_t n_users = offsets.size - 1;
  if (n_users <= 0) return Status::Ok;
  std::atomic<bool> stop{false};
  const int64_t L = tax.n_leaves;
  const int64_t n_nodes = tax.parent.size;
  parallel_chunks(n_users, kUserChunk, n_threads, [&](int64_t, int64_t ub, int64_t ue) {
    if (stop.load(std::memory_order_relaxed)) return;
    if (interrupted(hook)) {
      stop.store(true, std::memory_order_relaxed);
      return;
    }
    UserState st(tax, cost, params, patterns.cols);
    std::vector<int32_t> g(static_cast<size_t>(L)), active, moved;
    std::vector<char> removed(static_cast<size_t>(L));
    std::vector<int64_t> stamp(static_cast<size_t>(n_nodes));
    std::vector<double> cache_ul(static_cast<size_t>(n_nodes)), cache_mi(static_cast<size_t>(n_nodes));
    for (int64_t u = ub; u < ue; ++u) {
      st.load(symbols.data + offsets[u], offsets[u + 1] - offsets[u], patterns.row(pattern_offsets[u]),
              pattern_offsets[u + 1] - pattern_offsets[u]);
      std::fill(stamp.begin(), stamp.end(), 0);
      int32_t* h = out.gen.row(u);
      const double eps = run_top_down(st, h, g, active, removed, stamp, cache_ul, cache_mi, moved);
      out.epsilon[u] = eps;
      out.entropy[u] = st.entropy();
      out.mi[u] = st.mi(h);
      out.ul[u] = st.ul(h);
      out.n_evaluations[u] = st.n_evals;
      for (int64_t k = 0; k < st.n_pat_; ++k) out.pattern_counts[pattern_offsets[u] + k] = st.fs_[static_cast<size_t>(k)];
    }
  });
  return stop.load() ? Status::Interrupted : Status::Ok;
}

}  // namespace anoncore::sequence

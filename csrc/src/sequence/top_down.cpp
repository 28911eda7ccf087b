#include "anoncore/sequence/top_down.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/sequence/user_state.hpp"

namespace anoncore::sequence {
namespace {

constexpr int64_t kUserChunk = 4;

using detail::UserState;

/// Algorithm 1 for the loaded user; writes the map into h (length n_leaves) and returns the absolute ε used.
double run_top_down(const TopDownParams& params, UserState& st, int32_t* h, std::vector<int32_t>& g,
                    std::vector<int32_t>& active, std::vector<char>& removed, std::vector<int64_t>& stamp,
                    std::vector<double>& cache_ul, std::vector<double>& cache_mi, std::vector<int32_t>& moved) {
  const TopDownParams& p = params;
  const int64_t L = st.L_;
  const int32_t root = st.root_;
  const double H = st.entropy();
  const double eps = p.relative ? p.epsilon * H : p.epsilon;
  const double tol = detail::mi_tolerance(eps);
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
      if (p.dedupe && stamp[static_cast<size_t>(v)] == pass) {
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
    UserState st(tax, cost, patterns.cols, params.w, params.log_base, params.use_pair_table);
    std::vector<int32_t> g(static_cast<size_t>(L)), active, moved;
    std::vector<char> removed(static_cast<size_t>(L));
    std::vector<int64_t> stamp(static_cast<size_t>(n_nodes));
    std::vector<double> cache_ul(static_cast<size_t>(n_nodes)), cache_mi(static_cast<size_t>(n_nodes));
    for (int64_t u = ub; u < ue; ++u) {
      st.load(symbols.data + offsets[u], offsets[u + 1] - offsets[u], patterns.row(pattern_offsets[u]),
              pattern_offsets[u + 1] - pattern_offsets[u]);
      std::fill(stamp.begin(), stamp.end(), 0);
      int32_t* h = out.gen.row(u);
      const double eps = run_top_down(params, st, h, g, active, removed, stamp, cache_ul, cache_mi, moved);
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

#include "anoncore/sequence/bottom_up.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/sequence/user_state.hpp"

namespace anoncore::sequence {
namespace {

constexpr int64_t kUserChunk = 4;

using detail::UserState;
using SymbolMap = std::vector<std::pair<int32_t, int32_t>>;  // LCGP map λ: centroid symbol -> component lca

/// LCGP closed form (spec §2.4): symbols of c1 ∪ c2 linked by a shared position form components; each symbol maps
/// to the lca of its component. Mirrors anoncore.sequence.lcgp.lcgp_union_find.
void lcgp_map(const TaxonomyView& tax, const int32_t* c1, const int32_t* c2, int64_t m, std::vector<int32_t>& syms,
              std::vector<int32_t>& uf, SymbolMap& lam) {
  syms.clear();
  auto index_of = [&](int32_t x) -> int32_t {
    for (size_t i = 0; i < syms.size(); ++i)
      if (syms[i] == x) return static_cast<int32_t>(i);
    syms.push_back(x);
    return static_cast<int32_t>(syms.size() - 1);
  };
  for (int64_t j = 0; j < m; ++j) index_of(c1[j]);
  for (int64_t j = 0; j < m; ++j) index_of(c2[j]);
  uf.resize(syms.size());
  for (size_t i = 0; i < uf.size(); ++i) uf[i] = static_cast<int32_t>(i);
  auto find = [&](int32_t x) {
    while (uf[static_cast<size_t>(x)] != x) x = uf[static_cast<size_t>(x)];
    return x;
  };
  for (int64_t j = 0; j < m; ++j) {
    const int32_t ra = find(index_of(c1[j])), rb = find(index_of(c2[j]));
    if (ra != rb) uf[static_cast<size_t>(std::max(ra, rb))] = std::min(ra, rb);
  }
  // component lca (associative and commutative, so the visiting order does not matter)
  std::vector<int32_t> comp(syms.size(), -1);
  for (size_t i = 0; i < syms.size(); ++i) {
    const auto r = static_cast<size_t>(find(static_cast<int32_t>(i)));
    comp[r] = comp[r] < 0 ? syms[i] : detail::lca(tax, comp[r], syms[i]);
  }
  lam.clear();
  for (size_t i = 0; i < syms.size(); ++i)
    lam.emplace_back(syms[i], comp[static_cast<size_t>(find(static_cast<int32_t>(i)))]);
}

int32_t apply_map(const SymbolMap& lam, int32_t img) {
  for (const auto& [src, dst] : lam)
    if (src == img) return dst;
  return img;
}

/// g ← λ∘h over every leaf (image-wise update, spec §2.5).
void compose(const SymbolMap& lam, const int32_t* h, int64_t L, int32_t* g) {
  for (int64_t x = 0; x < L; ++x) g[x] = apply_map(lam, h[x]);
}

/// R-BU3 (spec §6 B5), mirroring anoncore.sequence._algorithms._greedy_complete.
void greedy_complete(UserState& st, int32_t* h, double tol) {
  const int64_t L = st.L_;
  const auto& parent = st.tax_.parent;
  double cur_mi = st.mi(h);
  double cur_ul = st.ul(h);
  std::vector<int32_t> classes, cu, cv, order, g(static_cast<size_t>(L));
  std::vector<double> cul, mis;
  auto build = [&](size_t i) {
    for (int64_t x = 0; x < L; ++x) g[static_cast<size_t>(x)] = h[x] == cu[i] ? cv[i] : h[x];
  };
  while (cur_mi > tol) {
    classes.clear();
    for (int32_t a : st.occ_)
      if (h[a] != st.root_) classes.push_back(h[a]);
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    cu.clear();
    cv.clear();
    cul.clear();
    for (int32_t u : classes)
      for (int32_t v = parent[u]; v != -1; v = parent[v]) {
        cu.push_back(u);
        cv.push_back(v);
        build(cu.size() - 1);
        cul.push_back(st.ul(g.data()));
      }
    if (cu.empty()) throw InternalError("Bottom-Up greedy completion found no move");
    const size_t nc = cu.size();
    order.resize(nc);
    for (size_t i = 0; i < nc; ++i) order[i] = static_cast<int32_t>(i);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      const double ua = cul[static_cast<size_t>(a)], ub = cul[static_cast<size_t>(b)];
      return ua != ub ? ua < ub : a < b;  // (UL, enumeration order), as the reference's sorted()
    });
    mis.assign(nc, std::numeric_limits<double>::quiet_NaN());
    int64_t chosen = -1;
    for (int32_t i : order) {
      build(static_cast<size_t>(i));
      mis[static_cast<size_t>(i)] = st.mi(g.data());
      if (mis[static_cast<size_t>(i)] <= tol) {
        chosen = i;
        break;
      }
    }
    if (chosen < 0) {
      int64_t best_ratio = -1, best_dul = -1;
      double r_val = -std::numeric_limits<double>::infinity(), d_val = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < nc; ++i) {
        const double d_mi = cur_mi - mis[i];
        const double d_ul = cul[i] - cur_ul;
        if (d_mi > 0) {
          const double ratio = d_ul <= 0 ? std::numeric_limits<double>::infinity() : d_mi / d_ul;
          if (best_ratio < 0 || ratio > r_val) best_ratio = static_cast<int64_t>(i), r_val = ratio;
        }
        if (best_dul < 0 || d_ul < d_val) best_dul = static_cast<int64_t>(i), d_val = d_ul;
      }
      chosen = best_ratio >= 0 ? best_ratio : best_dul;
    }
    const auto c = static_cast<size_t>(chosen);
    build(c);
    std::copy(g.begin(), g.end(), h);
    cur_mi = mis[c];
    cur_ul = cul[c];
  }
  (void)cur_ul;
}

/// Algorithm 3 for the loaded user; writes the map into h (length n_leaves) and returns the absolute ε used.
double run_bottom_up(const BottomUpParams& p, UserState& st, int32_t* h) {
  const int64_t L = st.L_, m = st.m_, P = st.n_pat_;
  const int32_t* pats = st.pats_;
  const double H = st.entropy();
  const double eps = p.relative ? p.epsilon * H : p.epsilon;
  const double tol = detail::mi_tolerance(eps);
  for (int64_t a = 0; a < L; ++a) h[a] = static_cast<int32_t>(a);
  if (st.mi(h) <= tol) return eps;  // R-BU1
  std::vector<std::vector<int32_t>> clusters(static_cast<size_t>(P)), merged;
  for (int64_t k = 0; k < P; ++k) clusters[static_cast<size_t>(k)] = {static_cast<int32_t>(k)};
  std::vector<int32_t> keys, syms, uf, members;
  std::vector<int32_t> ci(static_cast<size_t>(m)), cj(static_cast<size_t>(m)), g(static_cast<size_t>(L));
  SymbolMap lam, best_lam;
  auto centroid = [&](const std::vector<int32_t>& c, int32_t* out) {
    for (int64_t j = 0; j < m; ++j) out[j] = h[pats[static_cast<int64_t>(c[0]) * m + j]];
  };
  while (true) {
    // R-BU2: clusters whose centroids coincide merge (order of first appearance kept)
    merged.clear();
    keys.clear();
    for (const auto& c : clusters) {
      centroid(c, ci.data());
      size_t at = merged.size();
      for (size_t q = 0; q < merged.size(); ++q)
        if (std::equal(ci.begin(), ci.end(), keys.begin() + static_cast<int64_t>(q) * m)) {
          at = q;
          break;
        }
      if (at == merged.size()) {
        merged.push_back(c);
        keys.insert(keys.end(), ci.begin(), ci.end());
      } else {
        merged[at].insert(merged[at].end(), c.begin(), c.end());
      }
    }
    clusters.swap(merged);
    if (clusters.size() == 1) {
      greedy_complete(st, h, tol);
      break;
    }
    bool have = false;
    double best_d = 0.0;
    size_t bi = 0, bj = 0;
    const double ul_h = p.delta_ul ? st.ul(h) : 0.0;
    for (size_t i = 0; i < clusters.size(); ++i) {
      centroid(clusters[i], ci.data());
      for (size_t j = i + 1; j < clusters.size(); ++j) {
        centroid(clusters[j], cj.data());
        lcgp_map(st.tax_, ci.data(), cj.data(), m, syms, uf, lam);
        double d = 0.0;
        if (!p.delta_ul) {
          members.clear();
          for (size_t q : {i, j})
            for (int32_t k : clusters[q])
              for (int64_t t = 0; t < m; ++t) members.push_back(pats[static_cast<int64_t>(k) * m + t]);
          std::sort(members.begin(), members.end());
          members.erase(std::unique(members.begin(), members.end()), members.end());
          for (int32_t a : members)
            d += st.cost_(a, apply_map(lam, h[a])) * static_cast<double>(st.f_[static_cast<size_t>(a)]);
        } else {
          compose(lam, h, L, g.data());
          d = st.ul(g.data()) - ul_h;
        }
        if (!have || d < best_d) {
          have = true;
          best_d = d;
          bi = i;
          bj = j;
          best_lam = lam;
        }
      }
    }
    compose(best_lam, h, L, g.data());
    std::copy(g.begin(), g.end(), h);
    clusters[bi].insert(clusters[bi].end(), clusters[bj].begin(), clusters[bj].end());
    clusters.erase(clusters.begin() + static_cast<int64_t>(bj));
    if (st.mi(h) <= tol) break;
  }
  return eps;
}

}  // namespace

Status bottom_up_batch(Span<int64_t> offsets, Span<int32_t> symbols, const TaxonomyView& tax, Matrix<double> cost,
                       Span<int64_t> pattern_offsets, Matrix<int32_t> patterns, const BottomUpParams& params,
                       int n_threads, const BottomUpOutputs& out, const InterruptHook& hook) {
  const int64_t n_users = offsets.size - 1;
  if (n_users <= 0) return Status::Ok;
  std::atomic<bool> stop{false};
  parallel_chunks(n_users, kUserChunk, n_threads, [&](int64_t, int64_t ub, int64_t ue) {
    if (stop.load(std::memory_order_relaxed)) return;
    if (interrupted(hook)) {
      stop.store(true, std::memory_order_relaxed);
      return;
    }
    UserState st(tax, cost, patterns.cols, params.w, params.log_base, params.use_pair_table);
    for (int64_t u = ub; u < ue; ++u) {
      st.load(symbols.data + offsets[u], offsets[u + 1] - offsets[u], patterns.row(pattern_offsets[u]),
              pattern_offsets[u + 1] - pattern_offsets[u]);
      int32_t* h = out.gen.row(u);
      const double eps = run_bottom_up(params, st, h);
      out.epsilon[u] = eps;
      out.entropy[u] = st.entropy();
      out.mi[u] = st.mi(h);
      out.ul[u] = st.ul(h);
      out.n_evaluations[u] = st.n_evals;
      for (int64_t k = 0; k < st.n_pat_; ++k)
        out.pattern_counts[pattern_offsets[u] + k] = st.fs_[static_cast<size_t>(k)];
    }
  });
  return stop.load() ? Status::Interrupted : Status::Ok;
}

}  // namespace anoncore::sequence

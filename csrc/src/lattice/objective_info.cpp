// Objectives of the lattice engine that spread each published class over the leaves it covers: ARX's KL
// divergence (MetricSDNMKLDivergence), the KL divergence over QI tuples (Machanavajjhala et al. 2007) and
// ARX's ambiguity (MetricSDNMAmbiguity, after Goldberger and Tassa 2010), with lower bounds that are monotone
// along the lattice. Definitions and proofs of the bounds: docs/lattice.md ("KL divergence and ambiguity").
//
// Notation. The bottom classes are the QI tuples t with counts c_t (N rows); a node's class E has n_E rows
// and covers a_E = Π_j leaves_j(E) leaf combinations (leaves under its generalized value, absent leaves
// included, as ARX's domain shares); |dom| = Π_j |dom_j| (hierarchy leaves). S rows are suppressed.
//  - ARX's KL: Σ over records r of p_r log2(p_r / q_r), p_r = c_t / N of the record's tuple, q_r = n_E / (N a_E)
//    for a published record, S / (N |dom|) for a suppressed one (the suppressed records spread over the whole
//    domain). Summed over records, i.e. Σ_t w_t log2(p_t / q_t) with w_t = c_t² / N: ARX's reading.
//  - KL over tuples: Σ_t p_t log2(p_t / Q(t)) with the published distribution
//    Q(x) = Σ_{E published, x in E} n_E / (N a_E) + S / (N |dom|) (a proper distribution).
//  - Ambiguity: Σ_E n_E Π_j (leaves_j(E) if E is published, else |dom_j|).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "anoncore/lattice/engine_impl.hpp"

namespace anoncore::lattice {

namespace {
constexpr double kAmbiguitySlack = 1e-9;  // relative margin of the ambiguity bounds (floating point only)
}  // namespace

/// The tables over the bottom classes, built on first use (std::call_once: the parallel evaluations may
/// race for it).
const Engine::Impl::InfoTables& Engine::Impl::info_tables() const {
  std::call_once(info_once, [this] {
    InfoTables& t = info;
    const auto N = static_cast<double>(n);
    const FreqSet& b = *bottom;
    const int64_t C0 = b.n_classes;
    const bool amb = metric.kind == MetricKind::kAmbiguity;
    t.level.assign(static_cast<size_t>(r), {});
    // per bottom class: the weight of its tuple in the sum (ARX KL: c²/N, tuple KL: c/N, ambiguity: c/N)
    std::vector<double> wt(static_cast<size_t>(C0));
    for (int64_t c = 0; c < C0; ++c) {
      const auto cnt = static_cast<double>(b.count[static_cast<size_t>(c)]);
      wt[static_cast<size_t>(c)] = metric.kind == MetricKind::kKLArx ? cnt * cnt / N : cnt / N;
    }
    for (int64_t j = 0; j < r; ++j) {
      const Qi& q = qi[static_cast<size_t>(j)];
      const auto dom = static_cast<double>(q.n_leaves);
      t.log2_max_area += std::log2(dom);
      t.max_area *= dom;
      auto& lev = t.level[static_cast<size_t>(j)];
      for (int32_t l = 0; l <= q.h; ++l) {
        const std::vector<int32_t>& mp = q.map(0, l);
        double acc = 0.0;
        for (int64_t c = 0; c < C0; ++c) {
          const auto leaves = static_cast<double>(q.lc(l, mp[static_cast<size_t>(code(b, c, j))]));
          acc += wt[static_cast<size_t>(c)] * (amb ? std::log(leaves) : std::log2(leaves));
        }
        lev.push_back(acc);
      }
    }
    if (!amb) {
      double mag = 0.0;
      for (int64_t c = 0; c < C0; ++c)
        t.kl_const += wt[static_cast<size_t>(c)] * std::log2(static_cast<double>(b.count[static_cast<size_t>(c)]) / N);
      mag = std::fabs(t.kl_const);
      for (const auto& lev : t.level) {
        double m = 0.0;
        for (double v : lev) m = std::max(m, std::fabs(v));
        mag += m;
      }
      t.slack = 1e-9 * mag + 1e-12;
      if (metric.kind == MetricKind::kKLArx) t.w = std::move(wt);
    }
  });
  return info;
}

/// Lower bound from the levels alone, monotone upward and valid under any suppression.
/// KL (both readings): every record's published density is at most 1 / a_t (n_E <= N, and a suppressed
/// record's S / (N |dom|) <= 1 / |dom| <= 1 / a_t), so KL >= Σ_t w_t log2(p_t a_t) = kl_const +
/// Σ_j Σ_t w_t log2 leaves_j(t): one table entry per QI; a_t only grows upward. Both KLs are >= 0 (tuple KL:
/// Gibbs; ARX's: per class Σ c_t² log(c_t a_E / n_E) >= Σ c_t² - n_E²/m_E >= 0, m_E tuples in E, a_E >= m_E).
/// Ambiguity: Σ_r Π_j x_rj >= N Π_j (geometric mean over records of x_rj) (AM-GM), x_rj = leaves of record r
/// on QI j (a suppressed record's |dom_j| is larger); each geometric mean only grows upward.
double Engine::Impl::info_cheap_lb(const int32_t* lv) const {
  const InfoTables& t = info_tables();
  double acc = 0.0;
  for (int64_t j = 0; j < r; ++j) acc += t.level[static_cast<size_t>(j)][static_cast<size_t>(lv[j])];
  if (metric.kind == MetricKind::kAmbiguity) return static_cast<double>(n) * std::exp(acc) * (1.0 - kAmbiguitySlack);
  return std::max(0.0, t.kl_const + acc - t.slack);
}

/// a_E of class c of f (leaf combinations under its generalized values), as a double product.
double Engine::Impl::class_area(const FreqSet& f, int64_t c) const {
  double a = 1.0;
  for (int64_t j = 0; j < r; ++j)
    a *= static_cast<double>(qi[static_cast<size_t>(j)].lc(f.levels[static_cast<size_t>(j)], code(f, c, j)));
  return a;
}

/// Lower bound from the classes, monotone upward. Ambiguity: its value without suppression (each record's
/// product only grows upward, and suppression only raises it). Tuple KL under a zero suppression limit: its
/// value without suppression (the KL of nested partitions of the domain grows upward: chain rule), since every
/// feasible node above suppresses nothing. Otherwise the cheap bound.
double Engine::Impl::info_lower_bound(const FreqSet& f) const {
  const double cheap = info_cheap_lb(f.levels.data());
  if (metric.kind == MetricKind::kAmbiguity) {
    double all = 0.0;
    for (int64_t c = 0; c < f.n_classes; ++c) all += static_cast<double>(f.count[static_cast<size_t>(c)]) * class_area(f, c);
    return std::max(cheap, all * (1.0 - kAmbiguitySlack));
  }
  if (metric.kind == MetricKind::kKL && limit == 0) {
    const double v = kl_value(f, nullptr, 0);
    return std::max(cheap, v - info_tables().slack - 1e-9 * v);
  }
  return cheap;
}

/// ARX's KL: per class of f, W_E = Σ_{tuples t in E} c_t² / N (each bottom class's node key looked up among
/// f's classes).
void Engine::Impl::kl_class_weights(const FreqSet& f, std::vector<double>& W) const {
  const InfoTables& t = info_tables();
  const FreqSet& b = *bottom;
  const int64_t C = f.n_classes, C0 = b.n_classes;
  W.assign(static_cast<size_t>(C), 0.0);
  std::vector<const int32_t*> mp(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j) mp[static_cast<size_t>(j)] = qi[static_cast<size_t>(j)].map(0, f.levels[static_cast<size_t>(j)]).data();
  if (packed) {
    uint64_t cap = 16;
    while (cap < static_cast<uint64_t>(2 * C)) cap <<= 1;
    std::vector<int64_t> slot(static_cast<size_t>(cap), -1);
    const uint64_t mask = cap - 1;
    auto find = [&](uint64_t k, bool insert, int64_t id) -> int64_t {
      uint64_t p = mix64(k) & mask;
      while (true) {
        const int64_t s = slot[static_cast<size_t>(p)];
        if (s < 0) {
          if (insert) slot[static_cast<size_t>(p)] = id;
          return -1;
        }
        if (f.keys[static_cast<size_t>(s)] == k) return s;
        p = (p + 1) & mask;
      }
    };
    for (int64_t c = 0; c < C; ++c) find(f.keys[static_cast<size_t>(c)], true, c);
    for (int64_t c = 0; c < C0; ++c) {
      uint64_t k = 0;
      for (int64_t j = 0; j < r; ++j)
        k |= static_cast<uint64_t>(mp[static_cast<size_t>(j)][code(b, c, j)]) << shift[static_cast<size_t>(j)];
      const int64_t e = find(k, false, 0);
      if (e < 0) throw std::logic_error("kl_class_weights: a tuple outside the node's classes");
      W[static_cast<size_t>(e)] += t.w[static_cast<size_t>(c)];
    }
    return;
  }
  std::unordered_map<std::string, int64_t> idx;
  idx.reserve(static_cast<size_t>(C));
  std::string key(static_cast<size_t>(r) * sizeof(int32_t), '\0');
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t j = 0; j < r; ++j) {
      const int32_t v = code(f, c, j);
      std::memcpy(&key[static_cast<size_t>(j) * sizeof(int32_t)], &v, sizeof(int32_t));
    }
    idx.emplace(key, c);
  }
  for (int64_t c = 0; c < C0; ++c) {
    for (int64_t j = 0; j < r; ++j) {
      const int32_t v = mp[static_cast<size_t>(j)][code(b, c, j)];
      std::memcpy(&key[static_cast<size_t>(j) * sizeof(int32_t)], &v, sizeof(int32_t));
    }
    auto it = idx.find(key);
    if (it == idx.end()) throw std::logic_error("kl_class_weights: a tuple outside the node's classes");
    W[static_cast<size_t>(it->second)] += t.w[static_cast<size_t>(c)];
  }
}

/// KL of f with the classes flagged in viol (S rows; viol may be null when S = 0) suppressed; clamped at 0
/// (both readings are >= 0, see info_cheap_lb), so that a node equivalent to the bottom is exactly 0.
double Engine::Impl::kl_value(const FreqSet& f, const uint8_t* viol, int64_t S) const {
  const InfoTables& t = info_tables();
  const auto N = static_cast<double>(n);
  const int64_t C = f.n_classes;
  double sum = 0.0;  // Σ_t w_t log2 q_t
  if (metric.kind == MetricKind::kKLArx) {
    std::vector<double> W;
    kl_class_weights(f, W);
    double ws = 0.0;
    for (int64_t c = 0; c < C; ++c) {
      if (viol != nullptr && viol[c]) {
        ws += W[static_cast<size_t>(c)];
        continue;
      }
      const double q = static_cast<double>(f.count[static_cast<size_t>(c)]) / N / class_area(f, c);
      sum += W[static_cast<size_t>(c)] * std::log2(q);
    }
    if (S > 0) sum += ws * (std::log2(static_cast<double>(S) / N) - t.log2_max_area);
  } else {
    const double base = S > 0 ? static_cast<double>(S) / N / t.max_area : 0.0;
    for (int64_t c = 0; c < C; ++c) {
      const auto nE = static_cast<double>(f.count[static_cast<size_t>(c)]);
      const double q = viol != nullptr && viol[c] ? base : nE / N / class_area(f, c) + base;
      sum += nE / N * std::log2(q);
    }
  }
  return std::max(0.0, t.kl_const - sum);
}

/// The objective of a judged set (s.viol flags, S rows suppressed) and its lower bound.
void Engine::Impl::info_score(const FreqSet& f, const uint8_t* viol, int64_t S, NodeResult& res) const {
  if (metric.kind == MetricKind::kAmbiguity) {
    const InfoTables& t = info_tables();
    double all = 0.0, val = 0.0;
    for (int64_t c = 0; c < f.n_classes; ++c) {
      const auto nE = static_cast<double>(f.count[static_cast<size_t>(c)]);
      const double a = class_area(f, c);
      all += nE * a;
      val += nE * (viol[c] ? t.max_area : a);
    }
    res.metric = val;
    res.lower_bound = std::max(info_cheap_lb(f.levels.data()), all * (1.0 - kAmbiguitySlack));
    return;
  }
  res.metric = kl_value(f, viol, S);
  if (metric.kind == MetricKind::kKL && limit == 0 && S == 0)
    res.lower_bound = std::max(info_cheap_lb(f.levels.data()), res.metric - info_tables().slack - 1e-9 * res.metric);
  else
    res.lower_bound = info_lower_bound(f);
}

}  // namespace anoncore::lattice

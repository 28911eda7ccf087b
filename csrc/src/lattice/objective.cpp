// Objectives of the lattice engine (ARX-ORACLES.md §7) and their monotone lower bounds: ARX Loss with its
// aggregates, precision, non-uniform entropy, height, DM / DM* (ARX-ORACLES.md §7.1-7.4).
#include "anoncore/lattice/engine_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace anoncore::lattice {

// ------------------------------------------------------------------ metrics
/// ARX's aggregates of the per-QI losses x_j with the attribute weights w_j (ARX-ORACLES.md §7.1; all 1 unless
/// set): geometric mean Π (w_j x_j + 1)^(1/D) − 1, arithmetic mean Σ (x_j / D) w_j, sum Σ w_j x_j, max w_j x_j.
double Engine::Impl::aggregate(const std::vector<double>& x) const {
  const auto D = static_cast<double>(x.size());
  const double* w = weight.data();
  switch (metric.aggregate) {
    case Aggregate::kGeometricMean: {
      double res = 1.0;
      for (size_t j = 0; j < x.size(); ++j) res *= std::pow(w[j] * x[j] + 1.0, 1.0 / D);
      return res - 1.0;
    }
    case Aggregate::kArithmeticMean: {
      double res = 0.0;
      for (size_t j = 0; j < x.size(); ++j) res += x[j] / D * w[j];
      return res;
    }
    case Aggregate::kSum: {
      double res = 0.0;
      for (size_t j = 0; j < x.size(); ++j) res += w[j] * x[j];
      return res;
    }
    case Aggregate::kMax: {
      double res = 0.0;
      for (size_t j = 0; j < x.size(); ++j) res = std::max(res, w[j] * x[j]);
      return res;
    }
  }
  return 0.0;
}

double Engine::Impl::loss_value(const int32_t* lv, const std::vector<int64_t>* kept_num, const std::vector<int64_t>* supp_num,
                  int64_t S) const {
  std::vector<double> x(static_cast<size_t>(r));
  const auto N = static_cast<double>(n);
  for (int64_t j = 0; j < r; ++j) {
    const Qi& q = qi[static_cast<size_t>(j)];
    const auto rows = static_cast<double>(q.n_leaves);
    double A;
    if (S == 0 || kept_num == nullptr) {
      A = gF * (static_cast<double>(q.a_level[static_cast<size_t>(lv[j])]) / rows);
    } else {
      const double so = static_cast<double>((*supp_num)[static_cast<size_t>(j)]) / rows;
      A = gF * (static_cast<double>((*kept_num)[static_cast<size_t>(j)]) / rows) +
          (sF == 1.0 ? static_cast<double>(S) : so + sF * (static_cast<double>(S) - so));
    }
    const double mn = gF * N / rows;
    x[static_cast<size_t>(j)] = N - mn > 0.0 ? round10(std::max(0.0, (A - mn) / (N - mn))) : 0.0;
  }
  return aggregate(x);
}

double Engine::Impl::precision_value(const int32_t* lv, int64_t S) const {
  std::vector<double> x(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j) {
    const int32_t h = qi[static_cast<size_t>(j)].h;
    const double g = h == 0 ? 0.0 : gF * static_cast<double>(lv[j]) / static_cast<double>(h);
    if (metric.kind == MetricKind::kPrecisionNM && S > 0)
      x[static_cast<size_t>(j)] = (static_cast<double>(n - S) * g + static_cast<double>(S) * sF) / static_cast<double>(n);
    else
      x[static_cast<size_t>(j)] = g;
  }
  double res = 0.0;
  for (double v : x) res += v / static_cast<double>(r);
  return res;
}

double Engine::Impl::entropy_mono(const int32_t* lv) const {
  double res = 0.0;
  for (int64_t j = 0; j < r; ++j) res += round10(gF * qi[static_cast<size_t>(j)].nu_base[static_cast<size_t>(lv[j])]);
  return res;
}

void Engine::Impl::precompute_loss_lb() {
  lb_x.assign(static_cast<size_t>(r), {});
  lb_pow.assign(static_cast<size_t>(r), {});
  const auto N = static_cast<double>(n);
  const auto D = static_cast<double>(r);
  for (int64_t j = 0; j < r; ++j) {
    const Qi& q = qi[static_cast<size_t>(j)];
    const auto rows = static_cast<double>(q.n_leaves);
    for (int32_t l = 0; l <= q.h; ++l) {
      const double A = gF * (static_cast<double>(q.a_level[static_cast<size_t>(l)]) / rows);
      const double mn = gF * N / rows;
      const double x = N - mn > 0.0 ? round10(std::max(0.0, (A - mn) / (N - mn))) : 0.0;
      // the aggregate's term of QI j at level l (aggregate's operations, so the same doubles)
      const double w = weight[static_cast<size_t>(j)];
      lb_x[static_cast<size_t>(j)].push_back(metric.aggregate == Aggregate::kArithmeticMean ? x / D * w : w * x);
      lb_pow[static_cast<size_t>(j)].push_back(std::pow(w * x + 1.0, 1.0 / D));
    }
  }
}

double Engine::Impl::loss_lb(const int32_t* lv) const {
  switch (metric.aggregate) {
    case Aggregate::kGeometricMean: {
      double res = 1.0;
      for (int64_t j = 0; j < r; ++j) res *= lb_pow[static_cast<size_t>(j)][static_cast<size_t>(lv[j])];
      return res - 1.0;
    }
    case Aggregate::kArithmeticMean: {
      double res = 0.0;
      for (int64_t j = 0; j < r; ++j) res += lb_x[static_cast<size_t>(j)][static_cast<size_t>(lv[j])];
      return res;
    }
    case Aggregate::kSum: {
      double res = 0.0;
      for (int64_t j = 0; j < r; ++j) res += lb_x[static_cast<size_t>(j)][static_cast<size_t>(lv[j])];
      return res;
    }
    case Aggregate::kMax: {
      double res = 0.0;
      for (int64_t j = 0; j < r; ++j) res = std::max(res, lb_x[static_cast<size_t>(j)][static_cast<size_t>(lv[j])]);
      return res;
    }
  }
  return 0.0;
}

double Engine::Impl::cheap_lb(const int32_t* lv) const {
  switch (metric.kind) {
    case MetricKind::kLoss:
      return loss_lb(lv);
    case MetricKind::kEntropy:
    case MetricKind::kEntropyNM:
      return entropy_mono(lv);
    case MetricKind::kPrecision:
    case MetricKind::kPrecisionNM:
      return precision_value(lv, 0);
    case MetricKind::kHeight: {
      double h = 0;
      for (int64_t j = 0; j < r; ++j) h += lv[j];
      return h;
    }
    case MetricKind::kDM:
    case MetricKind::kDMStar:
      return static_cast<double>(n);  // Σ n_E² >= N
    case MetricKind::kAECS:
      return 0.0;  // (N / C needs the classes: lower_bound_of)
    case MetricKind::kKLArx:
    case MetricKind::kAmbiguity:
    case MetricKind::kKL:
      return info_cheap_lb(lv);
  }
  return 0.0;
}

/// Loss of f when exactly the classes with viol[c] != 0 (S rows, S > 0) are suppressed.
/// Σ_classes n_E · leaf_count(code) = a_level (all rows), so only the smaller side (suppressed or kept
/// classes) is summed and the other one is the exact integer difference.
double Engine::Impl::loss_flagged(const FreqSet& f, const uint8_t* viol, int64_t S) const {
  const int64_t C = f.n_classes;
  const int32_t* lv = f.levels.data();
  std::vector<int64_t> kept(static_cast<size_t>(r), 0), supp(static_cast<size_t>(r), 0);
  int64_t n_viol = 0;
  for (int64_t c = 0; c < C; ++c) n_viol += viol[c] != 0;
  const uint8_t side = n_viol * 2 <= C ? 1 : 0;
  auto& acc = side ? supp : kept;
  auto& other = side ? kept : supp;
  std::vector<const int64_t*> lcp(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j) {
    const Qi& q = qi[static_cast<size_t>(j)];
    lcp[static_cast<size_t>(j)] = q.leaf_count.data() + q.lc_off[static_cast<size_t>(lv[j])];
  }
  for (int64_t c = 0; c < C; ++c) {
    if ((viol[c] != 0 ? 1 : 0) != side) continue;
    const int64_t cnt = f.count[static_cast<size_t>(c)];
    for (int64_t j = 0; j < r; ++j) acc[static_cast<size_t>(j)] += cnt * lcp[static_cast<size_t>(j)][code(f, c, j)];
  }
  for (int64_t j = 0; j < r; ++j)
    other[static_cast<size_t>(j)] = qi[static_cast<size_t>(j)].a_level[static_cast<size_t>(lv[j])] - acc[static_cast<size_t>(j)];
  return loss_value(lv, &kept, &supp, S);
}

/// Loss with only the classes below the minimal size suppressed (a lower bound of the node's Loss, see
/// above); small = rows in those classes. Uses s.viol as scratch.
double Engine::Impl::size_loss(const FreqSet& f, Scratch& s, int64_t& small) const {
  const int64_t C = f.n_classes;
  s.viol.assign(static_cast<size_t>(C), 0);
  small = 0;
  const int64_t* cnt = f.count.data();
  for (int64_t c = 0; c < C; ++c)
    if (cnt[c] < min_size) {
      s.viol[static_cast<size_t>(c)] = 1;
      small += cnt[c];
    }
  return small == 0 ? loss_lb(f.levels.data()) : loss_flagged(f, s.viol.data(), small);
}

/// A monotone lower bound of the objective of f without judging it: Σ n_E² (DM, DM*) or the cheap bound.
double Engine::Impl::lower_bound_of(const FreqSet& f) const {
  switch (metric.kind) {
    case MetricKind::kDM:
    case MetricKind::kDMStar: {
      int64_t all = 0;
      for (int64_t c = 0; c < f.n_classes; ++c) all += f.count[static_cast<size_t>(c)] * f.count[static_cast<size_t>(c)];
      return static_cast<double>(all);
    }
    case MetricKind::kAECS:
      return aecs_lb(f.n_classes);
    case MetricKind::kKLArx:
    case MetricKind::kAmbiguity:
    case MetricKind::kKL:
      return info_lower_bound(f);
    default:
      return cheap_lb(f.levels.data());
  }
}

/// The objective of a judged set whose flagged classes (s.viol, S rows) are suppressed, and its lower bound.
void Engine::Impl::score(const FreqSet& f, Scratch& s, int64_t S, NodeResult& res) const {
  const int64_t C = f.n_classes;
  const int32_t* lv = f.levels.data();
  switch (metric.kind) {
    case MetricKind::kLoss: {
      res.lower_bound = loss_lb(lv);
      res.metric = S == 0 ? res.lower_bound : loss_flagged(f, s.viol.data(), S);
      break;
    }
    case MetricKind::kDM:
    case MetricKind::kDMStar: {
      int64_t all = 0, kept = 0;
      for (int64_t c = 0; c < C; ++c) {
        const int64_t cnt = f.count[static_cast<size_t>(c)];
        all += cnt * cnt;
        if (!s.viol[static_cast<size_t>(c)]) kept += cnt * cnt;
      }
      res.lower_bound = static_cast<double>(all);
      res.metric = metric.kind == MetricKind::kDMStar ? static_cast<double>(all)
                                                      : static_cast<double>(kept + n * S);
      break;
    }
    case MetricKind::kEntropy:
      res.lower_bound = res.metric = entropy_mono(lv);
      break;
    case MetricKind::kEntropyNM: {
      res.lower_bound = entropy_mono(lv);
      if (S == 0) {
        res.metric = res.lower_bound;
        break;
      }
      double total = 0.0;
      for (int64_t j = 0; j < r; ++j) {
        const Qi& q = qi[static_cast<size_t>(j)];
        auto& cx = s.supp_codes;
        cx.assign(static_cast<size_t>(q.card[static_cast<size_t>(lv[j])]), 0);
        for (int64_t c = 0; c < C; ++c)
          if (s.viol[static_cast<size_t>(c)]) cx[static_cast<size_t>(code(f, c, j))] += f.count[static_cast<size_t>(c)];
        double term = 0.0;
        for (int64_t v : cx)
          if (v > 0) term += static_cast<double>(v) * (std::log(static_cast<double>(v) / static_cast<double>(S)) / std::log(2.0));
        total += round10(gF * q.nu_base[static_cast<size_t>(lv[j])] - sF * term);
      }
      res.metric = total;
      break;
    }
    case MetricKind::kPrecision:
    case MetricKind::kPrecisionNM:
      res.lower_bound = precision_value(lv, 0);
      res.metric = precision_value(lv, S);
      break;
    case MetricKind::kHeight:
      res.lower_bound = res.metric = cheap_lb(lv);
      break;
    case MetricKind::kAECS: {
      int64_t kept = 0;
      for (int64_t c = 0; c < C; ++c) kept += s.viol[static_cast<size_t>(c)] ? 0 : 1;
      // ARX weighs the published classes by sF and the suppressed rows' one class by gF (the factors swapped,
      // as ARX does; both 1 at the default gs-factor)
      const double den = sF * static_cast<double>(kept) + (S > 0 ? gF : 0.0);
      res.metric = den > 0.0 ? static_cast<double>(n) / den : std::numeric_limits<double>::infinity();
      res.lower_bound = aecs_lb(C);
      break;
    }
    case MetricKind::kKLArx:
    case MetricKind::kAmbiguity:
    case MetricKind::kKL:
      info_score(f, s.viol.data(), S, res);
      break;
  }
}

/// A lower bound of AECS at a node with C classes and at every node above it: N / C. The denominator
/// sF·C_kept + gF·[S > 0] is at most C because max(sF, gF) = 1 and S > 0 means a suppressed class; C never
/// grows upwards.
double Engine::Impl::aecs_lb(int64_t C) const {
  return C > 0 ? static_cast<double>(n) / static_cast<double>(C) : 0.0;
}

}  // namespace anoncore::lattice

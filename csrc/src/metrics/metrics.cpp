#include "anoncore/metrics/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace anoncore::metrics {

ClassSummary class_summary(Span<int64_t> kept, Span<int64_t> supp) {
  ClassSummary s;
  int64_t sum_kept_sq = 0;
  for (int64_t e = 0; e < kept.size; ++e) {
    const int64_t k = kept[e], u = supp[e], n = k + u;
    s.n_rows += n;
    s.n_suppressed += u;
    s.n_kept_classes += (k > 0) ? 1 : 0;
    sum_kept_sq += k * k;
    s.dm_star += n * n;
  }
  s.dm = sum_kept_sq + s.n_rows * s.n_suppressed;
  return s;
}

KeptSuppSums<int64_t> range_cost_sums(Span<int64_t> kept, Span<int64_t> supp, Matrix<int32_t> gen_lo,
                                      Matrix<int32_t> gen_hi, int64_t col, RangeCost cost) {
  KeptSuppSums<int64_t> r;
  const int64_t stride = gen_lo.cols;
  const int32_t* lo = gen_lo.data + col;
  const int32_t* hi = gen_hi.data + col;
  const int64_t offset = (cost == RangeCost::kSpan) ? 0 : 1;
  const bool zero_singleton = (cost == RangeCost::kCountZeroSingleton);
  for (int64_t e = 0; e < kept.size; ++e) {
    const int64_t span = static_cast<int64_t>(hi[e * stride]) - static_cast<int64_t>(lo[e * stride]);
    const int64_t c = (zero_singleton && span == 0) ? 0 : span + offset;
    r.kept += kept[e] * c;
    r.supp += supp[e] * c;
  }
  return r;
}

KeptSuppSums<double> value_width_sums(Span<int64_t> kept, Span<int64_t> supp, Matrix<int32_t> gen_lo,
                                      Matrix<int32_t> gen_hi, int64_t col, Span<double> values, double lower,
                                      double upper) {
  long double k_sum = 0.0L, s_sum = 0.0L;
  const int64_t stride = gen_lo.cols;
  const int32_t* lo = gen_lo.data + col;
  const int32_t* hi = gen_hi.data + col;
  for (int64_t e = 0; e < kept.size; ++e) {
    const double a = std::max(values[lo[e * stride]], lower);
    const double b = std::min(values[hi[e * stride]], upper);
    const long double w = b > a ? static_cast<long double>(b) - static_cast<long double>(a) : 0.0L;
    k_sum += static_cast<long double>(kept[e]) * w;
    s_sum += static_cast<long double>(supp[e]) * w;
  }
  return {static_cast<double>(k_sum), static_cast<double>(s_sum)};
}

KeptSuppSums<int64_t> node_cost_sums(Span<int64_t> kept, Span<int64_t> supp, Matrix<int32_t> gen_node,
                                     int64_t col, Span<int64_t> node_cost) {
  KeptSuppSums<int64_t> r;
  const int64_t stride = gen_node.cols;
  const int32_t* node = gen_node.data + col;
  for (int64_t e = 0; e < kept.size; ++e) {
    const int64_t c = node_cost[node[e * stride]];
    r.kept += kept[e] * c;
    r.supp += supp[e] * c;
  }
  return r;
}

namespace {

/// Neumaier's compensated sum in long double.
struct CompensatedSum {
  long double sum = 0.0L, comp = 0.0L;
  void add(long double x) {
    const long double t = sum + x;
    if (std::fabs(sum) >= std::fabs(x)) {
      comp += (sum - t) + x;
    } else {
      comp += (x - t) + sum;
    }
    sum = t;
  }
  long double value() const { return sum + comp; }
};

}  // namespace

NuEntropyTerms nu_entropy_terms(Span<int32_t> column, int64_t n_codes, Span<int64_t> kept, Span<int64_t> supp,
                                Matrix<int32_t> base_lo, Matrix<int32_t> base_hi, Matrix<int32_t> pub_lo,
                                Matrix<int32_t> pub_hi, int64_t col, bool with_suppressed_term) {
  NuEntropyTerms out;
  const size_t m = static_cast<size_t>(n_codes);
  // Value counts a_v and the order of first appearance of the values.
  std::vector<int64_t> counts(m, 0);
  std::vector<int32_t> order;
  order.reserve(m);
  for (int64_t r = 0; r < column.size; ++r) {
    const int32_t v = column[r];
    if (counts[static_cast<size_t>(v)]++ == 0) order.push_back(v);
  }
  std::vector<int64_t> prefix(m + 1, 0);
  for (size_t v = 0; v < m; ++v) prefix[v + 1] = prefix[v] + counts[v];

  const int64_t stride = base_lo.cols;
  const int32_t* lo = base_lo.data + col;
  const int32_t* hi = base_hi.data + col;
  // Are the ranges of the classes with rows pairwise disjoint? range_hi[lo] = hi of the range
  // starting at lo (-1: none); then a scan in code order checks that consecutive ranges do not overlap.
  std::vector<int32_t> range_hi(m, -1);
  bool disjoint = true;
  int64_t n_supp_classes = 0;
  for (int64_t e = 0; e < kept.size; ++e) {
    if (supp[e] > 0) ++n_supp_classes;
    if (kept[e] + supp[e] == 0) continue;
    const int32_t l = lo[e * stride], h = hi[e * stride];
    int32_t& slot = range_hi[static_cast<size_t>(l)];
    if (slot == -1) {
      slot = h;
    } else if (slot != h) {
      disjoint = false;
    }
  }
  if (disjoint) {
    int64_t last_hi = -1;
    for (size_t v = 0; v < m && disjoint; ++v) {
      if (range_hi[v] < 0) continue;
      if (static_cast<int64_t>(v) <= last_hi) disjoint = false;
      last_hi = range_hi[v];
    }
  }
  if (disjoint) {
    // b(v) = rows in the one published range containing v.
    std::vector<int64_t> b(m, 0);
    for (size_t l = 0; l < m; ++l) {
      const int32_t h = range_hi[l];
      if (h < 0) continue;
      const int64_t total = prefix[static_cast<size_t>(h) + 1] - prefix[l];
      for (size_t v = l; v <= static_cast<size_t>(h); ++v) b[v] = total;
    }
    const double ln2 = std::log(2.0);
    double base = 0.0;
    for (const int32_t v : order) {
      const auto a = static_cast<double>(counts[static_cast<size_t>(v)]);
      base += a * (std::log(a / static_cast<double>(b[static_cast<size_t>(v)])) / ln2);
    }
    out.base = base;
  } else {
    CompensatedSum values_term, classes_term;
    for (size_t v = 0; v < m; ++v) {
      if (counts[v] > 0) {
        const auto a = static_cast<long double>(counts[v]);
        values_term.add(a * std::log2(a));
      }
    }
    // Σ_E n_E log2 B(E) = Σ_B (Σ_{E: B(E) = B} n_E)·log2 B: one logarithm per distinct B (B <= n_rows).
    std::vector<int64_t> rows_with_b(static_cast<size_t>(prefix[m]) + 1, 0);
    for (int64_t e = 0; e < kept.size; ++e) {
      const int64_t n = kept[e] + supp[e];
      if (n == 0) continue;
      const int64_t bb = prefix[static_cast<size_t>(hi[e * stride]) + 1] - prefix[static_cast<size_t>(lo[e * stride])];
      rows_with_b[static_cast<size_t>(bb)] += n;
    }
    for (size_t bb = 2; bb < rows_with_b.size(); ++bb) {
      if (rows_with_b[bb] > 0)
        classes_term.add(static_cast<long double>(rows_with_b[bb]) * std::log2(static_cast<long double>(bb)));
    }
    out.base = static_cast<double>(values_term.value() - classes_term.value());
  }
  if (!with_suppressed_term || n_supp_classes == 0) return out;
  // c_x: suppressed rows per published range x = (lo, hi); group by sorting the (range, count) pairs.
  lo = pub_lo.data + col;
  hi = pub_hi.data + col;
  std::vector<std::pair<std::pair<int32_t, int32_t>, int64_t>> ranges;
  ranges.reserve(static_cast<size_t>(n_supp_classes));
  int64_t total = 0;
  for (int64_t e = 0; e < kept.size; ++e) {
    if (supp[e] <= 0) continue;
    ranges.push_back({{lo[e * stride], hi[e * stride]}, supp[e]});
    total += supp[e];
  }
  std::sort(ranges.begin(), ranges.end());
  CompensatedSum term;
  const long double log2_total = std::log2(static_cast<long double>(total));
  size_t i = 0;
  while (i < ranges.size()) {
    int64_t c = 0;
    size_t j = i;
    for (; j < ranges.size() && ranges[j].first == ranges[i].first; ++j) c += ranges[j].second;
    term.add(static_cast<long double>(c) * (std::log2(static_cast<long double>(c)) - log2_total));
    i = j;
  }
  out.supp_term = static_cast<double>(term.value());
  return out;
}

}  // namespace anoncore::metrics

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
                                      Matrix<int32_t> gen_hi, int64_t col, Span<double> values) {
  long double k_sum = 0.0L, s_sum = 0.0L;
  const int64_t stride = gen_lo.cols;
  const int32_t* lo = gen_lo.data + col;
  const int32_t* hi = gen_hi.data + col;
  for (int64_t e = 0; e < kept.size; ++e) {
    const long double w = static_cast<long double>(values[hi[e * stride]]) -
                          static_cast<long double>(values[lo[e * stride]]);
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
inline long double xlog2x(int64_t a) {
  return a > 0 ? static_cast<long double>(a) * std::log2(static_cast<long double>(a)) : 0.0L;
}
}  // namespace

NuEntropyTerms nu_entropy_terms(Span<int64_t> value_counts, Span<int64_t> kept, Span<int64_t> supp,
                                Matrix<int32_t> gen_lo, Matrix<int32_t> gen_hi, int64_t col,
                                bool with_suppressed_term) {
  NuEntropyTerms out;
  const int64_t m = value_counts.size;
  std::vector<int64_t> prefix(static_cast<size_t>(m + 1), 0);
  long double values_term = 0.0L;
  for (int64_t v = 0; v < m; ++v) {
    prefix[static_cast<size_t>(v + 1)] = prefix[static_cast<size_t>(v)] + value_counts[v];
    values_term += xlog2x(value_counts[v]);
  }
  const int64_t stride = gen_lo.cols;
  const int32_t* lo = gen_lo.data + col;
  const int32_t* hi = gen_hi.data + col;
  long double classes_term = 0.0L;
  int64_t n_supp_classes = 0;
  for (int64_t e = 0; e < kept.size; ++e) {
    const int64_t n = kept[e] + supp[e];
    if (supp[e] > 0) ++n_supp_classes;
    if (n == 0) continue;
    const int64_t b = prefix[static_cast<size_t>(hi[e * stride]) + 1] - prefix[static_cast<size_t>(lo[e * stride])];
    classes_term += static_cast<long double>(n) * std::log2(static_cast<long double>(b));
  }
  out.base = static_cast<double>(values_term - classes_term);
  if (!with_suppressed_term || n_supp_classes == 0) return out;
  // c_x: suppressed rows per published range x = (lo, hi); group by sorting the (range, count) pairs.
  std::vector<std::pair<std::pair<int32_t, int32_t>, int64_t>> ranges;
  ranges.reserve(static_cast<size_t>(n_supp_classes));
  int64_t total = 0;
  for (int64_t e = 0; e < kept.size; ++e) {
    if (supp[e] <= 0) continue;
    ranges.push_back({{lo[e * stride], hi[e * stride]}, supp[e]});
    total += supp[e];
  }
  std::sort(ranges.begin(), ranges.end());
  long double term = 0.0L;
  const long double log2_total = std::log2(static_cast<long double>(total));
  size_t i = 0;
  while (i < ranges.size()) {
    int64_t c = 0;
    size_t j = i;
    for (; j < ranges.size() && ranges[j].first == ranges[i].first; ++j) c += ranges[j].second;
    term += static_cast<long double>(c) * (std::log2(static_cast<long double>(c)) - log2_total);
    i = j;
  }
  out.supp_term = static_cast<double>(term);
  return out;
}

}  // namespace anoncore::metrics

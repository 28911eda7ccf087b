#include "anoncore/distance/emd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/per_class.hpp"
#include "anoncore/core/status.hpp"
#include "anoncore/criteria/class_criteria.hpp"

namespace anoncore::distance {
namespace {

/// Hierarchical EMD numerator: one post-order pass over node ids. `leaf_extra(v)` gives the extra earth of leaf
/// v as type T; pos/neg are scratch buffers of length n_nodes. Returns sum_n height(n) * min(pos(n), neg(n)).
template <class T, class Acc, class LeafExtra>
Acc hier_pass(const HierarchyView& h, std::vector<T>& pos, std::vector<T>& neg, LeafExtra&& leaf_extra) {
  const int64_t nn = h.n_nodes();
  std::fill(pos.begin(), pos.end(), T(0));
  std::fill(neg.begin(), neg.end(), T(0));
  Acc cost = 0;
  for (int64_t v = 0; v < nn; ++v) {
    T e;
    if (v < h.n_leaves) {
      e = leaf_extra(v);
    } else {
      const T mn = std::min(pos[v], neg[v]);
      cost += static_cast<Acc>(h.height[v]) * static_cast<Acc>(mn);
      e = pos[v] - neg[v];
    }
    const int32_t par = h.parent[v];
    if (par >= 0) {
      if (e > T(0))
        pos[par] += e;
      else
        neg[par] -= e;
    }
  }
  return cost;
}

}  // namespace

// The class-vectorised EMD kernels judge each class through the criteria core (criteria/class_criteria.hpp),
// the functions the lattice engine uses, on the nonzero entries of the class's row in code order.
void emd_equal_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                       int n_threads) {
  criteria::ReferenceTables tables;
  tables.build(reference.data, hist.cols, total_of(reference), nullptr, nullptr, 0);
  const criteria::Reference R = tables.view();
  criteria::per_class_hist(hist, sizes, 0, out, n_threads,
                           [&](const criteria::ClassHist& h, criteria::Workspace&) { return criteria::emd_equal(h, R); });
}

void emd_ordered_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                         int n_threads) {
  criteria::ReferenceTables tables;
  tables.build(reference.data, hist.cols, total_of(reference), nullptr, nullptr, 0);
  const criteria::Reference R = tables.view();
  criteria::per_class_hist(hist, sizes, 0, out, n_threads, [&](const criteria::ClassHist& h, criteria::Workspace& ws) {
    return criteria::emd_ordered(h, R, ws);
  });
}

void emd_hierarchical_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference,
                              const HierarchyView& h, MutSpan<double> out, int n_threads) {
  criteria::ReferenceTables tables;
  tables.build(reference.data, hist.cols, total_of(reference), h.parent.data, h.height.data, h.n_nodes());
  const criteria::Reference R = tables.view();
  criteria::per_class_hist(hist, sizes, h.n_nodes(), out, n_threads,
                           [&](const criteria::ClassHist& ch, criteria::Workspace& ws) {
                             return criteria::emd_hierarchical(ch, R, ws);
                           });
}

void hellinger_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                       int n_threads) {
  const int64_t m = hist.cols;
  const double P = static_cast<double>(total_of(reference));
  std::vector<double> sp(static_cast<size_t>(m));
  for (int64_t v = 0; v < m; ++v) sp[static_cast<size_t>(v)] = std::sqrt(static_cast<double>(reference[v]) / P);
  per_class(hist, sizes, out, n_threads, [&](const int64_t* row, int64_t Q) -> double {
    const double Qd = static_cast<double>(Q);
    double s = 0.0;
    for (int64_t v = 0; v < m; ++v) {
      const double d = sp[static_cast<size_t>(v)] - std::sqrt(static_cast<double>(row[v]) / Qd);
      s += d * d;
    }
    return std::sqrt(0.5 * s);
  });
}

void kl_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, double log_base,
                MutSpan<double> out, int n_threads) {
  const int64_t m = hist.cols;
  const double P = static_cast<double>(total_of(reference)), lb = std::log(log_base);
  per_class(hist, sizes, out, n_threads, [&](const int64_t* row, int64_t Q) -> double {
    const double Qd = static_cast<double>(Q);
    double s = 0.0;
    for (int64_t v = 0; v < m; ++v) {
      if (row[v] == 0) continue;
      if (reference[v] == 0) {
        s = std::numeric_limits<double>::infinity();
        break;
      }
      const double q = static_cast<double>(row[v]) / Qd, p = static_cast<double>(reference[v]) / P;
      s += q * std::log(q / p);
    }
    return s / lb;
  });
}

void js_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, double log_base,
                MutSpan<double> out, int n_threads) {
  const int64_t m = hist.cols;
  const double P = static_cast<double>(total_of(reference)), lb = std::log(log_base);
  per_class(hist, sizes, out, n_threads, [&](const int64_t* row, int64_t Q) -> double {
    const double Qd = static_cast<double>(Q);
    double s = 0.0;
    for (int64_t v = 0; v < m; ++v) {
      const double q = static_cast<double>(row[v]) / Qd, p = static_cast<double>(reference[v]) / P;
      const double mid = 0.5 * (p + q);
      if (p > 0) s += p * std::log(p / mid);
      if (q > 0) s += q * std::log(q / mid);
    }
    return std::max(0.0, 0.5 * s / lb);
  });
}

double emd_equal(Span<double> p, Span<double> q) {
  double s = 0.0;
  for (int64_t v = 0; v < p.size; ++v) s += std::fabs(p[v] - q[v]);
  return 0.5 * s;
}

double emd_ordered(Span<double> p, Span<double> q) {
  int64_t present = 0;
  for (int64_t v = 0; v < p.size; ++v) present += (p[v] > 0 || q[v] > 0) ? 1 : 0;
  if (present <= 1) return 0.0;
  double r = 0.0, s = 0.0;
  for (int64_t v = 0; v < p.size; ++v) {
    if (!(p[v] > 0 || q[v] > 0)) continue;
    r += q[v] - p[v];
    s += std::fabs(r);
  }
  // The last prefix is 0 in exact arithmetic; drop its rounding residue.
  s -= std::fabs(r);
  return s / static_cast<double>(present - 1);
}

double emd_hierarchical(Span<double> p, Span<double> q, const HierarchyView& h) {
  const int64_t nn = h.n_nodes();
  const int32_t H = h.height[nn - 1];
  if (H <= 0) return 0.0;
  std::vector<double> pos(static_cast<size_t>(nn)), neg(static_cast<size_t>(nn));
  const double cost = hier_pass<double, double>(h, pos, neg, [&](int64_t v) { return p[v] - q[v]; });
  return cost / static_cast<double>(H);
}

double hellinger(Span<double> p, Span<double> q) {
  double s = 0.0;
  for (int64_t v = 0; v < p.size; ++v) {
    const double d = std::sqrt(p[v]) - std::sqrt(q[v]);
    s += d * d;
  }
  return std::sqrt(0.5 * s);
}

double kl_divergence(Span<double> p, Span<double> q, double log_base) {
  double s = 0.0;
  for (int64_t v = 0; v < p.size; ++v) {
    if (p[v] <= 0) continue;
    if (q[v] <= 0) return std::numeric_limits<double>::infinity();
    s += p[v] * std::log(p[v] / q[v]);
  }
  return s / std::log(log_base);
}

double js_divergence(Span<double> p, Span<double> q, double log_base) {
  double s = 0.0;
  for (int64_t v = 0; v < p.size; ++v) {
    const double mid = 0.5 * (p[v] + q[v]);
    if (p[v] > 0) s += p[v] * std::log(p[v] / mid);
    if (q[v] > 0) s += q[v] * std::log(q[v] / mid);
  }
  return std::max(0.0, 0.5 * s / std::log(log_base));
}

// ------------------------------------------------------------------------------- row-batched, fixed domain
double pairwise_sum(const double* a, int64_t n) {
  if (n < 8) {
    double res = 0.0;
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

namespace {

/// diff_v = q_v / |q| - p_v / max(|p|, 1) of one row (|q| = 1 when the row is empty), as numpy computes it.
void row_diff(const double* q, const std::vector<double>& pn, int64_t m, double* diff) {
  double qs = pairwise_sum(q, m);
  if (qs == 0.0) qs = 1.0;
  for (int64_t v = 0; v < m; ++v) diff[v] = q[v] / qs - pn[static_cast<size_t>(v)];
}

std::vector<double> normalised_reference(Span<double> p) {
  const double total = pairwise_sum(p.data, p.size);
  const double den = 1.0 > total ? 1.0 : total;  // Python's max(total, 1.0)
  std::vector<double> pn(static_cast<size_t>(p.size));
  for (int64_t v = 0; v < p.size; ++v) pn[static_cast<size_t>(v)] = p[v] / den;
  return pn;
}

}  // namespace

void emd_rows_ordered(Matrix<double> q, Span<double> p, MutSpan<double> out, int n_threads) {
  const int64_t m = q.cols;
  if (m <= 1) {
    for (int64_t r = 0; r < q.rows; ++r) out[r] = 0.0;
    return;
  }
  const std::vector<double> pn = normalised_reference(p);
  const double denom = static_cast<double>(m - 1);
  parallel_chunks(q.rows, 256, threads_for(q.rows * m, n_threads), [&](int64_t, int64_t begin, int64_t end) {
    std::vector<double> diff(static_cast<size_t>(m));
    for (int64_t r = begin; r < end; ++r) {
      row_diff(q.row(r), pn, m, diff.data());
      double c = 0.0;
      for (int64_t v = 0; v < m; ++v) {
        c = v == 0 ? diff[0] : c + diff[static_cast<size_t>(v)];
        diff[static_cast<size_t>(v)] = std::fabs(c);  // |cumsum| in place; the last one is not summed
      }
      out[r] = pairwise_sum(diff.data(), m - 1) / denom;
    }
  });
}

void emd_rows_hierarchical(Matrix<double> q, Span<double> p, const HierarchyView& h, MutSpan<double> out,
                           int n_threads) {
  const int64_t m = q.cols, nn = h.n_nodes();
  const int32_t H = h.height[nn - 1];
  if (H <= 0) {
    for (int64_t r = 0; r < q.rows; ++r) out[r] = 0.0;
    return;
  }
  const std::vector<double> pn = normalised_reference(p);
  const bool single = q.rows == 1;  // numpy: pairwise over one row; over a column-major (rows, nodes) array, in order
  std::vector<double> hw(static_cast<size_t>(nn));
  for (int64_t v = 0; v < nn; ++v) hw[static_cast<size_t>(v)] = static_cast<double>(h.height[v]) / static_cast<double>(H);
  parallel_chunks(q.rows, 64, threads_for(q.rows * nn, n_threads), [&](int64_t, int64_t begin, int64_t end) {
    std::vector<double> diff(static_cast<size_t>(m)), cs(static_cast<size_t>(m + 1));
    std::vector<double> pos(static_cast<size_t>(nn)), neg(static_cast<size_t>(nn)), term(static_cast<size_t>(nn));
    for (int64_t r = begin; r < end; ++r) {
      row_diff(q.row(r), pn, m, diff.data());
      cs[0] = 0.0;
      double c = 0.0;
      for (int64_t v = 0; v < m; ++v) {
        c = v == 0 ? diff[0] : c + diff[static_cast<size_t>(v)];
        cs[static_cast<size_t>(v + 1)] = c;
      }
      std::fill(pos.begin(), pos.end(), 0.0);
      std::fill(neg.begin(), neg.end(), 0.0);
      for (int64_t v = 0; v < nn; ++v) {  // children in id order, as np.add.at adds them
        const int32_t par = h.parent[v];
        if (par < 0) continue;
        const double e = cs[static_cast<size_t>(h.leaf_start[v] + h.leaf_count[v])] - cs[static_cast<size_t>(h.leaf_start[v])];
        pos[static_cast<size_t>(par)] += std::max(e, 0.0);
        neg[static_cast<size_t>(par)] += std::max(-e, 0.0);
      }
      for (int64_t v = 0; v < nn; ++v)
        term[static_cast<size_t>(v)] = hw[static_cast<size_t>(v)] * std::min(pos[static_cast<size_t>(v)], neg[static_cast<size_t>(v)]);
      if (single) {
        out[r] = pairwise_sum(term.data(), nn);
      } else {
        double t = 0.0;
        for (int64_t v = 0; v < nn; ++v) t += term[static_cast<size_t>(v)];
        out[r] = t;
      }
    }
  });
}

}  // namespace anoncore::distance

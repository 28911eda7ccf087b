// The criteria core: one equivalence class judged from its sparse sensitive-value histogram against the table's
// reference distribution (spec generalization-lattice.md §2.5-2.7, sabre-burel.md §2.1-2.3, ARX-ORACLES.md §6).
// Header-only and inline, so that the lattice's judge (csrc/src/lattice/judge.cpp) inlines it in its class loop;
// the audit kernels (criteria.cpp, distance/emd.cpp) and Mondrian (through them) call the same functions on the
// nonzero entries of each dense class row, in value-code order.
//
// Two forms per model where the callers need them:
//  - a verdict (`holds`): the class satisfies the model with parameter a (and b); the lattice's form, with the
//    exact integer arithmetic of the lattice engine;
//  - a value (the audit's form): the class's achieved parameter (entropy, recursive ratio, EMD, beta gain,
//    delta), compared with the parameter in Python.
// The two share their exact parts (distinct values, the recursive (c, l) terms, the EMD numerators, which are
// integers, and Σ f ln f); where the decision and the value round differently (entropy, beta, delta, Hellinger),
// both forms are kept as they were, side by side here, so that neither the lattice's verdicts nor the audit's
// values change by a bit.
//
// And the support part, the monotone part of a class's verdict (support_violates): whether every class whose
// sensitive values lie within a set S violates some model whatever its counts.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "anoncore/core/per_class.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/criteria/models.hpp"

// The per-class checks are forced inline where the lattice's class loop calls them (a call per class and model
// measured about 3 % of Adult 6's search).
#if defined(__GNUC__) || defined(__clang__)
#define ANONCORE_CLASS_INLINE inline __attribute__((always_inline))
#else
#define ANONCORE_CLASS_INLINE inline
#endif

namespace anoncore::criteria {

/// One class's sensitive-value histogram, sparse: distinct values val[x] with counts cnt[x] > 0 for x < nnz;
/// size = Σ cnt (the class's rows).
struct ClassHist {
  const int32_t* val = nullptr;
  const int64_t* cnt = nullptr;
  int64_t nnz = 0;
  int64_t size = 0;
};

/// The table's distribution of the sensitive attribute, which every class is compared with: counts P_v over
/// m values (total P), P_v / P and -ln(P_v / P) (beta-likeness), the number of values with P_v > 0, and for
/// the hierarchical EMD the SA hierarchy (leaves = the codes, internal nodes in post-order after them: parent,
/// node height, the root's height, the reference count under each node).
struct Reference {
  const int64_t* count = nullptr;
  int64_t m = 0;
  int64_t total = 0;
  int64_t present = 0;
  const double* p = nullptr;
  const double* neg_log_p = nullptr;
  const int32_t* parent = nullptr;
  const int32_t* height = nullptr;
  int64_t n_nodes = 0;
  int32_t root_height = 0;
  const int64_t* node_count = nullptr;
  // the ordered EMD's support part: each value's index among the present values (-1: absent), and prefix sums
  // over those indices of the counts and of index x count (present + 1 entries each); null: not built
  const int64_t* ord_pos = nullptr;
  const int64_t* ord_c = nullptr;
  const int64_t* ord_w = nullptr;
};

/// Owned tables behind a Reference, built from the counts (and the SA hierarchy when given).
struct ReferenceTables {
  std::vector<int64_t> count;
  std::vector<double> p, neg_log_p;
  std::vector<int32_t> parent, height;
  std::vector<int64_t> node_count;
  std::vector<int64_t> ord_pos, ord_c, ord_w;
  int64_t total = 0, present = 0;

  /// counts (m,), total P (> 0); parent / height (n_nodes,) may be empty.
  void build(const int64_t* counts, int64_t m, int64_t P, const int32_t* par, const int32_t* hgt, int64_t n_nodes) {
    count.assign(counts, counts + m);
    total = P;
    present = 0;
    for (int64_t v = 0; v < m; ++v) present += count[static_cast<size_t>(v)] > 0;
    p.resize(static_cast<size_t>(m));
    neg_log_p.resize(static_cast<size_t>(m));
    for (int64_t v = 0; v < m; ++v) {
      p[static_cast<size_t>(v)] = static_cast<double>(count[static_cast<size_t>(v)]) / static_cast<double>(P);
      neg_log_p[static_cast<size_t>(v)] = -std::log(p[static_cast<size_t>(v)]);
    }
    parent.assign(par, par + n_nodes);
    height.assign(hgt, hgt + n_nodes);
    node_count.assign(static_cast<size_t>(n_nodes), 0);
    for (int64_t v = 0; v < m && v < n_nodes; ++v)
      for (int32_t y = static_cast<int32_t>(v); y >= 0; y = parent[static_cast<size_t>(y)])
        node_count[static_cast<size_t>(y)] += count[static_cast<size_t>(v)];
    ord_pos.assign(static_cast<size_t>(m), -1);
    ord_c.assign(static_cast<size_t>(present + 1), 0);
    ord_w.assign(static_cast<size_t>(present + 1), 0);
    for (int64_t v = 0, q = 0; v < m; ++v) {
      const int64_t c = count[static_cast<size_t>(v)];
      if (c == 0) continue;
      ord_pos[static_cast<size_t>(v)] = q;
      ord_c[static_cast<size_t>(q + 1)] = ord_c[static_cast<size_t>(q)] + c;
      ord_w[static_cast<size_t>(q + 1)] = ord_w[static_cast<size_t>(q)] + q * c;
      ++q;
    }
  }
  Reference view() const {
    Reference r;
    r.count = count.data();
    r.m = static_cast<int64_t>(count.size());
    r.total = total;
    r.present = present;
    r.p = p.data();
    r.neg_log_p = neg_log_p.data();
    r.parent = parent.data();
    r.height = height.data();
    r.n_nodes = static_cast<int64_t>(parent.size());
    r.root_height = height.empty() ? 0 : height.back();
    r.node_count = node_count.data();
    r.ord_pos = ord_pos.data();
    r.ord_c = ord_c.data();
    r.ord_w = ord_w.data();
    return r;
  }
};

/// Reusable buffers of one thread (dense and per-node arrays all zero between uses).
struct Workspace {
  std::vector<int64_t> dense;                  // m
  std::vector<int64_t> sorted, dist;
  std::vector<int32_t> touched;                // hierarchical EMD: nodes spanned by a class's values
  std::vector<int64_t> hq, hsump, hpos, hneg;  // per SA node
  std::vector<uint8_t> hmark;
  void prepare(int64_t m, int64_t n_nodes) {
    if (static_cast<int64_t>(dense.size()) < m) dense.assign(static_cast<size_t>(m), 0);
    const auto nn = static_cast<size_t>(n_nodes);
    hq.assign(nn, 0);
    hsump.assign(nn, 0);
    hpos.assign(nn, 0);
    hneg.assign(nn, 0);
    hmark.assign(nn, 0);
  }
};

/// The nonzero entries of a dense class row (m counts), in code order.
inline ClassHist sparse_row(const int64_t* row, int64_t m, std::vector<int32_t>& val, std::vector<int64_t>& cnt) {
  val.clear();
  cnt.clear();
  int64_t size = 0;
  for (int64_t v = 0; v < m; ++v)
    if (row[v] != 0) {
      val.push_back(static_cast<int32_t>(v));
      cnt.push_back(row[v]);
      size += row[v];
    }
  return ClassHist{val.data(), cnt.data(), static_cast<int64_t>(val.size()), size};
}

/// out[c] = f(class c's histogram, a workspace) for every class c of a dense (C, m) histogram with a positive
/// size (NaN otherwise): the audit kernels' driver. Parallel chunks of classes, each with its own workspace
/// (n_nodes: the SA hierarchy's nodes, for the hierarchical EMD); results do not depend on n_threads.
template <class F>
void per_class_hist(Matrix<int64_t> hist, Span<int64_t> sizes, int64_t n_nodes, MutSpan<double> out, int n_threads,
                    F&& f) {
  const int64_t m = hist.cols;
  parallel_chunks(hist.rows, per_class_detail::kClassChunk, threads_for(hist.rows * hist.cols, n_threads),
                  [&](int64_t, int64_t b, int64_t e) {
                    std::vector<int32_t> val;
                    std::vector<int64_t> cnt;
                    Workspace ws;
                    ws.prepare(m, n_nodes);
                    for (int64_t c = b; c < e; ++c) {
                      if (sizes[c] <= 0) {
                        out[c] = std::numeric_limits<double>::quiet_NaN();
                        continue;
                      }
                      ClassHist h = sparse_row(hist.row(c), m, val, cnt);
                      h.size = sizes[c];
                      out[c] = f(h, ws);
                    }
                  });
}

// ------------------------------------------------------------------------------------------ l-diversity
/// Σ_v f_v ln f_v over the class's entries, in their order.
ANONCORE_CLASS_INLINE double sum_f_log_f(const ClassHist& h) {
  double s = 0.0;
  for (int64_t x = 0; x < h.nnz; ++x) s += static_cast<double>(h.cnt[x]) * std::log(static_cast<double>(h.cnt[x]));
  return s;
}

/// Plug-in Shannon entropy in nats, ln n - (1/n) Σ f ln f (the audit's value).
inline double entropy_nats(const ClassHist& h) {
  const auto nd = static_cast<double>(h.size);
  return std::max(0.0, std::log(nd) - sum_f_log_f(h) / nd);
}

/// Entropy l-diversity: at least ceil(l) values and Σ f ln f <= n (ln n - ln l) (the lattice's verdict).
ANONCORE_CLASS_INLINE bool entropy_l_holds(const ClassHist& h, double l) {
  if (h.nnz < static_cast<int64_t>(std::ceil(l))) return false;
  const double C = static_cast<double>(h.size) * (std::log(static_cast<double>(h.size)) - std::log(l));
  return sum_f_log_f(h) <= C;
}

/// The digamma function ψ(x) for x > 0: the recurrence ψ(x) = ψ(x + 1) − 1/x up to x >= 49, then the
/// asymptotic series ln x − 1/(2x) − 1/(12x²) + 1/(120x⁴) − 1/(252x⁶) (error below 1e−16 there); below
/// 1e−5, −γ − 1/x. Checked against scipy.special.digamma (tests/test_entropy_estimators.py).
inline double digamma(double x) {
  constexpr double kGamma = 0.577215664901532860606512090082;
  if (x > 0.0 && x <= 1e-5) return -kGamma - 1.0 / x;
  int steps = 0;
  double y = x;
  while (y < 49.0) {
    y += 1.0;
    ++steps;
  }
  const double inv = 1.0 / (y * y);
  double v = std::log(y) - 0.5 / y - inv * ((1.0 / 12) - inv * (1.0 / 120 - inv / 252));
  for (int i = steps - 1; i >= 0; --i) v -= 1.0 / (x + static_cast<double>(i));
  return v;
}

/// Grassberger's G(n) = ψ(n) + ½ (−1)^n (ψ((n + 1)/2) − ψ(n/2)) (Grassberger 2003, eq. 35), n >= 1.
inline double grassberger_g(int64_t n) {
  const auto d = static_cast<double>(n);
  const double sign = (n % 2 == 0) ? 1.0 : -1.0;
  return digamma(d) + 0.5 * sign * (digamma((d + 1.0) / 2.0) - digamma(d / 2.0));
}

/// Grassberger's entropy estimate in nats, ln n − (1/n) Σ f G(f) (ARX's EntropyEstimator.GRASSBERGER).
inline double entropy_grassberger_nats(const ClassHist& h) {
  const auto nd = static_cast<double>(h.size);
  double s = 0.0;
  for (int64_t x = 0; x < h.nnz; ++x) s += static_cast<double>(h.cnt[x]) * grassberger_g(h.cnt[x]);
  return std::log(nd) - s / nd;
}

/// Entropy l-diversity with Grassberger's estimator: at least ceil(l) values and the estimate >= ln l.
inline bool entropy_l_grassberger_holds(const ClassHist& h, double l) {
  if (h.nnz < static_cast<int64_t>(std::ceil(l))) return false;
  return entropy_grassberger_nats(h) >= std::log(l);
}

/// Recursive (c, l)-diversity terms: r_1 (the largest count) and r_l + ... + r_m' (the counts sorted
/// descending), exact integers; false when the class has fewer than l distinct values.
inline bool recursive_cl_terms(const ClassHist& h, int64_t l, std::vector<int64_t>& buf, int64_t& first,
                               int64_t& tail) {
  if (h.nnz < l || h.nnz == 0) return false;
  buf.assign(h.cnt, h.cnt + h.nnz);
  const auto head = static_cast<std::ptrdiff_t>(std::max<int64_t>(l - 1, 1));
  std::partial_sort(buf.begin(), buf.begin() + head, buf.end(), std::greater<int64_t>());
  int64_t top = 0;
  for (int64_t i = 0; i < l - 1; ++i) top += buf[static_cast<size_t>(i)];
  first = buf[0];
  tail = h.size - top;
  return true;
}

/// Recursive (c, l)-diversity: r_1 < c (r_l + ... + r_m') (strict, ARX-ORACLES.md §6.1).
inline bool recursive_cl_holds(const ClassHist& h, double c, int64_t l, std::vector<int64_t>& buf) {
  int64_t first = 0, tail = 0;
  if (!recursive_cl_terms(h, l, buf, first, tail)) return false;
  return static_cast<double>(first) < c * static_cast<double>(tail);
}

// ------------------------------------------------------------------------------------------ t-closeness (EMD)
// Integer numerators (one division at the end): exact while P·n < 2^62 (the audit checks P < 2^31; the lattice's
// classes are subsets of its P rows).

/// EMD with equal ground distance: Σ_v |P_v n - n_v P| / (2 P n); values absent from the class contribute
/// P_v n each, so only the class's entries are visited.
ANONCORE_CLASS_INLINE double emd_equal(const ClassHist& h, const Reference& R) {
  const int64_t P = R.total, nE = h.size;
  int64_t num = 0, pres = 0;
  for (int64_t x = 0; x < h.nnz; ++x) {
    const int64_t pv = R.count[h.val[x]];
    const int64_t d = pv * nE - h.cnt[x] * P;
    num += d < 0 ? -d : d;
    pres += pv;
  }
  num += (P - pres) * nE;
  return static_cast<double>(num) / (2.0 * static_cast<double>(P) * static_cast<double>(nE));
}

/// EMD with ordered ground distance |i - j| / (m' - 1) over the m' values present in the reference, in code
/// order (prefix sums); 0 when m' <= 1.
inline double emd_ordered(const ClassHist& h, const Reference& R, Workspace& ws) {
  const int64_t P = R.total, nE = h.size, m = R.m;
  auto& dense = ws.dense;
  if (static_cast<int64_t>(dense.size()) < m) dense.assign(static_cast<size_t>(m), 0);
  for (int64_t x = 0; x < h.nnz; ++x) dense[static_cast<size_t>(h.val[x])] = h.cnt[x];
  const int64_t* q = dense.data();
  int64_t present = 0, acc = 0, tot = 0;
  for (int64_t v = 0; v < m; ++v) {
    if (R.count[v] == 0) continue;
    ++present;
    acc += R.count[v] * nE - q[v] * P;
    tot += acc < 0 ? -acc : acc;
  }
  for (int64_t x = 0; x < h.nnz; ++x) dense[static_cast<size_t>(h.val[x])] = 0;
  return present <= 1 ? 0.0
                      : static_cast<double>(tot) /
                            (static_cast<double>(present - 1) * static_cast<double>(P) * static_cast<double>(nE));
}

/// EMD with hierarchical ground distance height(LCA) / height(root) (Li et al. 2007 closed form), as a sparse
/// pass over the subtree spanned by the class's values: a child with no class row has extra = P_c n > 0, so
/// only ancestors of present values can carry cost. Node ids in post-order (children before parents).
inline double emd_hierarchical(const ClassHist& h, const Reference& R, Workspace& ws) {
  const int64_t P = R.total, nE = h.size, m = R.m;
  auto& touched = ws.touched;
  touched.clear();
  for (int64_t x = 0; x < h.nnz; ++x) {
    for (int32_t y = h.val[x]; y >= 0; y = R.parent[y]) {
      ws.hq[static_cast<size_t>(y)] += h.cnt[x];
      if (ws.hmark[static_cast<size_t>(y)]) continue;
      ws.hmark[static_cast<size_t>(y)] = 1;
      touched.push_back(y);
    }
  }
  std::sort(touched.begin(), touched.end());
  int64_t total = 0;
  for (int32_t y : touched) {
    const auto yy = static_cast<size_t>(y);
    int64_t e;
    if (y < m) {
      e = R.count[yy] * nE - ws.hq[yy] * P;
    } else {
      const int64_t pos = nE * (R.node_count[yy] - ws.hsump[yy]) + ws.hpos[yy];
      const int64_t neg = ws.hneg[yy];
      total += static_cast<int64_t>(R.height[yy]) * std::min(pos, neg);
      e = pos - neg;
    }
    const int32_t par = R.parent[yy];
    if (par >= 0) {
      const auto pp = static_cast<size_t>(par);
      ws.hsump[pp] += R.node_count[yy];
      if (e > 0) ws.hpos[pp] += e;
      else ws.hneg[pp] -= e;
    }
  }
  for (int32_t y : touched) {
    const auto yy = static_cast<size_t>(y);
    ws.hq[yy] = ws.hsump[yy] = ws.hpos[yy] = ws.hneg[yy] = 0;
    ws.hmark[yy] = 0;
  }
  const int32_t H = R.root_height;
  return H == 0 ? 0.0
                : static_cast<double>(total) /
                      (static_cast<double>(H) * static_cast<double>(P) * static_cast<double>(nE));
}

/// Hellinger distance through the Bhattacharyya coefficient, sqrt(max(0, 1 - Σ_v sqrt(p_v q_v))) (the lattice's
/// form; distance::hellinger_classes computes (1/√2)·‖√p − √q‖, equal in exact arithmetic).
ANONCORE_CLASS_INLINE double hellinger_bc(const ClassHist& h, const Reference& R) {
  double bc = 0.0;
  for (int64_t x = 0; x < h.nnz; ++x)
    bc += std::sqrt(static_cast<double>(R.count[h.val[x]]) / static_cast<double>(R.total) *
                    (static_cast<double>(h.cnt[x]) / static_cast<double>(h.size)));
  return std::sqrt(std::max(0.0, 1.0 - bc));
}

// ------------------------------------------------------------------------------------------ beta-likeness, delta
/// beta-likeness verdict: (q_v - p_v) / p_v <= beta for every value of the class (enhanced: <= min(beta,
/// -ln p_v)), with q = n_v / n and p = P_v / P in double (the lattice's form).
ANONCORE_CLASS_INLINE bool beta_holds(const ClassHist& h, const Reference& R, double beta, bool enhanced) {
  for (int64_t x = 0; x < h.nnz; ++x) {
    const double p = R.p[h.val[x]];
    const double q = static_cast<double>(h.cnt[x]) / static_cast<double>(h.size);
    double bound = beta;
    if (enhanced) bound = std::min(bound, R.neg_log_p[h.val[x]]);
    if (!((q - p) / p <= bound)) return false;
  }
  return true;
}

/// beta-likeness value: max over values with q > p of (q - p) / p from the integer (n_v P - P_v n) / (P_v n), 0
/// when no value gains; +inf when a value of the class is absent from the reference, or (enhanced) when some
/// gain exceeds -ln p (the class violates enhanced beta-likeness for every beta). The audit's form.
inline double beta_value(const ClassHist& h, const Reference& R, bool enhanced) {
  const int64_t P = R.total, Q = h.size;
  double best = 0.0;
  for (int64_t x = 0; x < h.nnz; ++x) {
    const int64_t v = h.val[x], ref = R.count[v];
    if (ref == 0) return std::numeric_limits<double>::infinity();
    const int64_t num = h.cnt[x] * P - ref * Q;  // (q - p) P Q
    if (num <= 0) continue;
    const double gain = static_cast<double>(num) / (static_cast<double>(ref) * static_cast<double>(Q));
    if (enhanced && gain > R.neg_log_p[v]) return std::numeric_limits<double>::infinity();
    best = std::max(best, gain);
  }
  return best;
}

/// delta-disclosure verdict: every value of the reference present and |ln(q_v / p_v)| < delta (strict, as
/// Brickell & Shmatikov), q and p in double (the lattice's form). ignore_absent (ARX's reading,
/// DeltaDisclosure(absent='ignore')): only the values present in the class are checked.
ANONCORE_CLASS_INLINE bool delta_holds(const ClassHist& h, const Reference& R, double delta, bool ignore_absent) {
  if (!ignore_absent && h.nnz < R.present) return false;  // a reference value is absent: |ln 0| = inf
  for (int64_t x = 0; x < h.nnz; ++x) {
    const double p = static_cast<double>(R.count[h.val[x]]) / static_cast<double>(R.total);
    const double q = static_cast<double>(h.cnt[x]) / static_cast<double>(h.size);
    if (!(std::fabs(std::log(q / p)) < delta)) return false;
  }
  return true;
}

/// delta-disclosure value: max over the reference's values of |ln(q / p)| from (n_v P) / (P_v n); +inf when
/// such a value is absent from the class or a class value is absent from the reference. The audit's form.
inline double delta_value(const ClassHist& h, const Reference& R) {
  int64_t in_ref = 0;
  for (int64_t x = 0; x < h.nnz; ++x) {
    if (R.count[h.val[x]] == 0) return std::numeric_limits<double>::infinity();
    ++in_ref;
  }
  if (in_ref < R.present) return std::numeric_limits<double>::infinity();
  double best = 0.0;
  for (int64_t x = 0; x < h.nnz; ++x) {
    const double ratio = (static_cast<double>(h.cnt[x]) * static_cast<double>(R.total)) /
                         (static_cast<double>(R.count[h.val[x]]) * static_cast<double>(h.size));
    best = std::max(best, std::fabs(std::log(ratio)));
  }
  return best;
}

// ------------------------------------------------------------------------------------------ one class, one model
/// Whether a class (at least one row) satisfies one model, a count- or histogram-based one judged from the
/// histogram alone (k-anonymity and distinct-l: their size / distinct-value parts are the caller's, which
/// checks them for all models at once).
ANONCORE_CLASS_INLINE bool class_holds(const Criterion& cr, const ClassHist& h, const Reference& R, Workspace& ws) {
  switch (cr.kind) {
    case Model::kKAnonymity:
    case Model::kDistinctL:
      return true;
    case Model::kEntropyL:
      return cr.b == 1.0 ? entropy_l_grassberger_holds(h, cr.a) : entropy_l_holds(h, cr.a);
    case Model::kRecursiveCL:
      return recursive_cl_holds(h, cr.b, static_cast<int64_t>(cr.a), ws.sorted);
    case Model::kEqualT:
      return emd_equal(h, R) <= cr.a;
    case Model::kOrderedT:
      return emd_ordered(h, R, ws) <= cr.a;
    case Model::kHierarchicalT:
      return emd_hierarchical(h, R, ws) <= cr.a;
    case Model::kHellingerT:
      return hellinger_bc(h, R) <= cr.a;
    case Model::kBasicBeta:
    case Model::kEnhancedBeta:
      return beta_holds(h, R, cr.a, cr.kind == Model::kEnhancedBeta);
    case Model::kDeltaDisclosure:
      return delta_holds(h, R, cr.a, cr.b == 1.0);
    case Model::kSemanticBeta:
    case Model::kRangeBeta:
      return true;  // (judged in Python)
  }
  return true;
}

// ------------------------------------------------------------------------------------------ the support part
/// A support bound must exceed its threshold by this (relative) to count: the criteria's own checks round in
/// double, so a class is flagged only when its true distance clears t by far more than that rounding.
inline constexpr double kSupportEps = 1e-9;

inline bool support_above(double bound, double t) { return bound > t + kSupportEps * std::max(1.0, std::fabs(t)); }

/// Σ_u P_u d(u, S) of the ordered EMD's support part from the prefix sums of R (ord_c, ord_w), with each_q(f)
/// calling f(q) for the present indices q of S in ascending order. Before the first index each value moves to
/// it, after the last to it, and between two neighbours to the nearer (the values up to the midpoint to the
/// left one): O(|S|) instead of a pass over every value, the same integer sum. False when S holds no present
/// value (tot is then not written).
template <class EachQ>
bool ordered_support_cost(EachQ&& each_q, const Reference& R, int64_t& tot) {
  const int64_t* C = R.ord_c;
  const int64_t* W = R.ord_w;
  int64_t first = -1, prev = -1, sum = 0;
  each_q([&](int64_t b) {
    if (prev < 0) {
      first = b;
    } else {
      const int64_t a = prev, mid = (a + b) / 2;
      sum += (W[mid + 1] - W[a + 1]) - a * (C[mid + 1] - C[a + 1]);  // (a, mid]: to a
      sum += b * (C[b] - C[mid + 1]) - (W[b] - W[mid + 1]);          // (mid, b): to b
    }
    prev = b;
  });
  if (first < 0) return false;
  const int64_t n = R.present;
  sum += first * C[first] - W[first];                           // indices [0, first)
  sum += (W[n] - W[prev + 1]) - prev * (C[n] - C[prev + 1]);    // indices (last, n)
  tot = sum;
  return true;
}

/// Whether the ordered EMD's least value, tot / ((present - 1) P), is above t.
inline bool ordered_support_above(int64_t tot, const Reference& R, double t) {
  const auto P = static_cast<double>(R.total);
  return R.present > 1 && support_above(static_cast<double>(tot) / (static_cast<double>(R.present - 1) * P), t);
}

/// Ordered EMD's least value over the distributions supported on S (see support_violates).
inline bool ordered_support_violates(const int32_t* hv, int64_t nnz, const Reference& R, double t, Workspace& ws) {
  if (R.ord_c != nullptr) {
    auto& sp = ws.sorted;
    sp.clear();
    for (int64_t x = 0; x < nnz; ++x)
      if (const int64_t q = R.ord_pos[hv[x]]; q >= 0) sp.push_back(q);
    if (!std::is_sorted(sp.begin(), sp.end())) std::sort(sp.begin(), sp.end());
    int64_t tot = 0;
    if (ordered_support_cost([&sp](auto&& f) {
          for (const int64_t q : sp) f(q);
        }, R, tot))
      return ordered_support_above(tot, R, t);
  }
  // (a Reference without the prefix sums, or a set holding no value of the table: a pass over every value)
  const int64_t m = R.m;
  auto& dense = ws.dense;
  if (static_cast<int64_t>(dense.size()) < m) dense.assign(static_cast<size_t>(m), 0);
  for (int64_t x = 0; x < nnz; ++x) dense[static_cast<size_t>(hv[x])] = 1;
  // nearest value of S by index among the table's values (the positions the check uses)
  int64_t present = 0;
  auto& dist = ws.dist;
  dist.assign(static_cast<size_t>(m), 0);
  int64_t last = -1;
  for (int64_t v = 0; v < m; ++v) {
    if (R.count[v] == 0) continue;
    if (dense[static_cast<size_t>(v)]) last = present;
    dist[static_cast<size_t>(v)] = last < 0 ? std::numeric_limits<int64_t>::max() : present - last;
    ++present;
  }
  last = -1;
  int64_t pos = present;
  for (int64_t v = m - 1; v >= 0; --v) {
    if (R.count[v] == 0) continue;
    --pos;
    if (dense[static_cast<size_t>(v)]) last = pos;
    if (last >= 0) dist[static_cast<size_t>(v)] = std::min(dist[static_cast<size_t>(v)], last - pos);
  }
  int64_t tot = 0;
  for (int64_t v = 0; v < m; ++v)
    if (R.count[v] > 0) tot += R.count[v] * dist[static_cast<size_t>(v)];
  for (int64_t x = 0; x < nnz; ++x) dense[static_cast<size_t>(hv[x])] = 0;
  const auto P = static_cast<double>(R.total);
  return present > 1 && support_above(static_cast<double>(tot) / (static_cast<double>(present - 1) * P), t);
}

/// Hierarchical EMD's least value over the distributions supported on S: each table value moves to its lowest
/// ancestor above a value of S.
inline bool hierarchical_support_violates(const int32_t* hv, int64_t nnz, const Reference& R, double t,
                                          Workspace& ws) {
  if (R.root_height == 0) return false;
  auto& touched = ws.touched;
  touched.clear();
  for (int64_t x = 0; x < nnz; ++x)
    for (int32_t y = hv[x]; y >= 0 && !ws.hmark[static_cast<size_t>(y)]; y = R.parent[y]) {
      ws.hmark[static_cast<size_t>(y)] = 1;
      touched.push_back(y);
    }
  int64_t tot = 0;
  for (int64_t v = 0; v < R.m; ++v) {
    if (R.count[v] == 0) continue;
    auto y = static_cast<int32_t>(v);
    while (y >= 0 && !ws.hmark[static_cast<size_t>(y)]) y = R.parent[y];
    tot += R.count[v] * (y < 0 ? R.root_height : R.height[y]);
  }
  for (int32_t y : touched) ws.hmark[static_cast<size_t>(y)] = 0;
  const auto P = static_cast<double>(R.total);
  return support_above(static_cast<double>(tot) / (static_cast<double>(R.root_height) * P), t);
}

/// Whether every class whose sensitive values lie within the set S = {hv[0..nnz)} violates some model,
/// whatever its counts. A class of a specialization is a subset of a class here, so its values are a subset
/// of S, and it violates too: such a class's rows count towards the monotone part (the lattice's
/// `suppressed_size`), like a class below the minimal size. Per model, the least distance any distribution Q
/// supported on S can have from the table's distribution P:
///  - EMD with ground distance d (equal, ordered, hierarchical): moving each unit of P to its nearest value
///    of S is a feasible transport plan and no plan is cheaper, so min_Q EMD = Σ_u P_u d(u, S);
///    equal: 1 − P(S); ordered: the index distance to the nearest present value of S over (present − 1);
///    hierarchical: the height of u's lowest ancestor above a value of S over the tree height.
///  - Hellinger: Σ_v sqrt(P_v Q_v) ≤ sqrt(P(S)) (Cauchy-Schwarz), so H ≥ sqrt(1 − sqrt(P(S))).
///  - β-likeness (basic, enhanced): Q_v ≤ T_v = P_v (1 + bound_v) for every v needs Σ_{v∈S} min(1, T_v) ≥ 1.
///  - δ-disclosure: every value of the table present; entropy / recursive l: at least l values.
/// support_violates over a set of values given by each(f) (f(v) for every v of S, ascending) and hv() (the values
/// as an array, asked for only by the ordered and hierarchical EMD), so a set held as a bit mask is judged
/// without building the array for the other models.
/// kAscending: each gives the values in ascending order (a mask's bits), so the ordered EMD reads them at once.
template <bool kAscending = false, class Each, class Hv>
bool support_violates_on(const Criterion* crit, int64_t n_crit, int64_t nnz, Each&& each, Hv&& hv,
                         const Reference& R, Workspace& ws) {
  const auto P = static_cast<double>(R.total);
  for (int64_t i = 0; i < n_crit; ++i) {
    const Criterion& cr = crit[i];
    switch (cr.kind) {
      case Model::kEntropyL:
        if (nnz < static_cast<int64_t>(std::ceil(cr.a))) return true;
        break;
      case Model::kRecursiveCL:
        if (nnz < static_cast<int64_t>(cr.a)) return true;
        break;
      case Model::kDeltaDisclosure: {
        if (cr.b != 1.0) {  // the paper's reading: every value of the table present
          if (nnz < R.present) return true;
          break;
        }
        // ARX's reading (absent values not checked): each present value's share below p_v e^delta, and the
        // shares sum to 1, so a support whose caps sum to at most 1 admits no class (as beta-likeness's caps)
        const double e = std::exp(cr.a);
        double cap = 0.0;
        each([&](int32_t v) { cap += std::min(1.0, R.p[v] * e); });
        if (cap < 1.0 - kSupportEps) return true;
        break;
      }
      case Model::kEqualT:
      case Model::kHellingerT: {
        int64_t pres = 0;
        each([&](int32_t v) { pres += R.count[v]; });
        const double ps = static_cast<double>(pres) / P;
        const double bound = cr.kind == Model::kEqualT ? 1.0 - ps : std::sqrt(std::max(0.0, 1.0 - std::sqrt(ps)));
        if (support_above(bound, cr.a)) return true;
        break;
      }
      case Model::kBasicBeta:
      case Model::kEnhancedBeta: {
        double cap = 0.0;
        each([&](int32_t v) {
          double b = cr.a;
          if (cr.kind == Model::kEnhancedBeta) b = std::min(b, R.neg_log_p[v]);
          cap += std::min(1.0, R.p[v] * (1.0 + b));
        });
        if (cap < 1.0 - kSupportEps) return true;
        break;
      }
      case Model::kOrderedT: {
        int64_t tot = 0;
        if constexpr (kAscending) {
          if (R.ord_c != nullptr && ordered_support_cost([&](auto&& f) {
                each([&](int32_t v) {
                  if (const int64_t q = R.ord_pos[v]; q >= 0) f(q);
                });
              }, R, tot)) {
            if (ordered_support_above(tot, R, cr.a)) return true;
            break;
          }
        }
        if (ordered_support_violates(hv(), nnz, R, cr.a, ws)) return true;
        break;
      }
      case Model::kHierarchicalT:
        if (hierarchical_support_violates(hv(), nnz, R, cr.a, ws)) return true;
        break;
      default:  // k-anonymity, distinct-l: no support part beyond the distinct count
        break;
    }
  }
  return false;
}

inline bool support_violates(const Criterion* crit, int64_t n_crit, const int32_t* hv, int64_t nnz,
                             const Reference& R, Workspace& ws) {
  return support_violates_on(crit, n_crit, nnz, [&](auto&& f) {
    for (int64_t x = 0; x < nnz; ++x) f(hv[x]);
  }, [hv] { return hv; }, R, ws);
}

}  // namespace anoncore::criteria

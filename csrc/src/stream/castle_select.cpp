// CASTLE, the selection room: bestSelection (spec streams-castle-sabrew.md §2.4) over Gamma's mirror, with its
// vectorised loops.
#include <algorithm>
#include <cmath>
#include <limits>

#include "anoncore/core/clones.hpp"
#include "anoncore/stream/castle.hpp"
#include "castle_internal.hpp"

namespace anoncore::stream {

using detail::approx_eq;
using detail::sz;

namespace {

/// acc[g] = 0 + sum_j (max(hi_j[g], v_j) - min(lo_j[g], v_j)) * w_j over DN numeric dimensions j, in order, with
/// the per-cluster sum kept in a register (the same operations as the dimension-at-a-time loop below).
template <size_t DN>
inline __attribute__((always_inline)) void numeric_enlarged_fixed(double* __restrict acc, size_t G, size_t cap,
                                                                  const double* __restrict nlo,
                                                                  const double* __restrict nhi, const double* v,
                                                                  const double* w) {
  double vj[DN], wj[DN];
  for (size_t j = 0; j < DN; ++j) {
    vj[j] = v[j];
    wj[j] = w[j];
  }
  for (size_t g = 0; g < G; ++g) {
    double a = (std::max(nhi[g], vj[0]) - std::min(nlo[g], vj[0])) * wj[0];  // 0.0 + t == t (t >= 0)
    for (size_t j = 1; j < DN; ++j)
      a += (std::max(nhi[j * cap + g], vj[j]) - std::min(nlo[j * cap + g], vj[j])) * wj[j];
    acc[g] = a;
  }
}

/// acc[g] = 0 + sum_j (max(hi_j[g], v_j) - min(lo_j[g], v_j)) * w_j over the numeric dimensions j, in order
/// (dimension-major bounds with row stride `cap`).
ANONCORE_CLONES void add_numeric_enlarged(double* __restrict acc, size_t G, size_t cap, size_t dn,
                                          const double* __restrict nlo, const double* __restrict nhi, const double* v,
                                          const double* w) {
  switch (dn) {
    case 1: return numeric_enlarged_fixed<1>(acc, G, cap, nlo, nhi, v, w);
    case 2: return numeric_enlarged_fixed<2>(acc, G, cap, nlo, nhi, v, w);
    case 3: return numeric_enlarged_fixed<3>(acc, G, cap, nlo, nhi, v, w);
    case 4: return numeric_enlarged_fixed<4>(acc, G, cap, nlo, nhi, v, w);
    case 5: return numeric_enlarged_fixed<5>(acc, G, cap, nlo, nhi, v, w);
    case 6: return numeric_enlarged_fixed<6>(acc, G, cap, nlo, nhi, v, w);
    case 7: return numeric_enlarged_fixed<7>(acc, G, cap, nlo, nhi, v, w);
    case 8: return numeric_enlarged_fixed<8>(acc, G, cap, nlo, nhi, v, w);
    default: break;
  }
  if (dn == 0) {
    for (size_t g = 0; g < G; ++g) acc[g] = 0.0;
  }
  for (size_t j = 0; j < dn; ++j) {
    const double* __restrict lo = nlo + j * cap;
    const double* __restrict hi = nhi + j * cap;
    const double vj = v[j], wj = w[j];
    if (j == 0) {  // 0.0 + t == t for the non-negative t: stored directly
      for (size_t g = 0; g < G; ++g) acc[g] = (std::max(hi[g], vj) - std::min(lo[g], vj)) * wj;
    } else {
      for (size_t g = 0; g < G; ++g) acc[g] += (std::max(hi[g], vj) - std::min(lo[g], vj)) * wj;
    }
  }
}

/// acc[g] += row[g] (bestSelection's categorical terms read from the per-code rows).
ANONCORE_CLONES void add_row(double* __restrict acc, const double* __restrict row, size_t G) {
  for (size_t g = 0; g < G; ++g) acc[g] += row[g];
}

/// bestSelection, when every categorical term comes from a per-code row (nr <= 4 rows): acc[g] += row_0[g], ...,
/// += row_{nr-1}[g] in order, then acc[g] *= inv_d (IL of C ∪ {x}) and ev[g] = acc[g] - il[g] (the enlargement).
ANONCORE_CLONES void finish_enlarged(double* __restrict acc, double* __restrict ev, const double* __restrict il,
                                     const double* const* rp, size_t nr, size_t G, double inv_d) {
  const double* __restrict r0 = rp[0];
  const double* __restrict r1 = rp[1];
  const double* __restrict r2 = rp[2];
  const double* __restrict r3 = rp[3];
  switch (nr) {
    case 0:
      for (size_t g = 0; g < G; ++g) {
        acc[g] *= inv_d;
        ev[g] = acc[g] - il[g];
      }
      break;
    case 1:
      for (size_t g = 0; g < G; ++g) {
        acc[g] = (acc[g] + r0[g]) * inv_d;
        ev[g] = acc[g] - il[g];
      }
      break;
    case 2:
      for (size_t g = 0; g < G; ++g) {
        acc[g] = ((acc[g] + r0[g]) + r1[g]) * inv_d;
        ev[g] = acc[g] - il[g];
      }
      break;
    case 3:
      for (size_t g = 0; g < G; ++g) {
        acc[g] = (((acc[g] + r0[g]) + r1[g]) + r2[g]) * inv_d;
        ev[g] = acc[g] - il[g];
      }
      break;
    default:
      for (size_t g = 0; g < G; ++g) {
        acc[g] = ((((acc[g] + r0[g]) + r1[g]) + r2[g]) + r3[g]) * inv_d;
        ev[g] = acc[g] - il[g];
      }
      break;
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------------ bestSelection (§2.4)
int32_t Castle::best_selection(int32_t t) {
  if (gamma_.empty()) return -1;
  scratch_em_.clear();
  double em = std::numeric_limits<double>::infinity();
  std::vector<double>& em_il = scratch_il_;
  em_il.clear();
  // IL(C ∪ {x}) for every open cluster, one dimension at a time (same per-cluster order of operations as
  // il_of_bounds: numeric dimensions, then categorical ones, then the 1/d factor)
  const size_t G = gamma_.size();
  if (g_acc_.size() < G) g_acc_.resize(G);
  double* acc = g_acc_.data();  // written by add_numeric_enlarged first
  const double* v = t_num_.data() + sz(t) * sz(dn_);
  const int32_t* cv = t_cat_.data() + sz(t) * sz(dc_);
  add_numeric_enlarged(acc, G, gcap_, sz(dn_), g_nlo_.data(), g_nhi_.data(), v, inv_range_.data());
  if (g_e_.size() < G) g_e_.resize(G);
  double* __restrict ev = g_e_.data();
  const double* __restrict gil = g_il_.data();
  bool all_rows = true;
  for (size_t j = 0; j < sz(dc_); ++j) all_rows = all_rows && row_off_[j + 1] > row_off_[j];
  if (all_rows && dc_ <= 4) {
    // every categorical term from a per-code row: one fused pass adds them in dimension order, applies 1/d and
    // takes the enlargement (the same operations per cluster as below)
    const double* rp[4] = {nullptr, nullptr, nullptr, nullptr};
    for (size_t j = 0; j < sz(dc_); ++j) rp[j] = g_row_.data() + (row_off_[j] + static_cast<size_t>(cv[j])) * gcap_;
    finish_enlarged(acc, ev, gil, rp, sz(dc_), G, inv_d_);
  } else {
    for (size_t j = 0; j < sz(dc_); ++j) {
      const int32_t* lo = g_clo_.data() + j * gcap_;
      const int32_t* hi = g_chi_.data() + j * gcap_;
      const int32_t cj = cv[j];
      if (row_off_[j + 1] > row_off_[j]) {  // the same table values, laid out per code of x: contiguous loads
        add_row(acc, g_row_.data() + (row_off_[j] + static_cast<size_t>(cj)) * gcap_, G);
      } else if (const double* tab = cat_tab_[j]) {
        const size_t L = cat_L_[j];
        for (size_t g = 0; g < G; ++g)
          acc[g] += tab[static_cast<size_t>(std::min(lo[g], cj)) * L + static_cast<size_t>(std::max(hi[g], cj))];
      } else {
        for (size_t g = 0; g < G; ++g)
          acc[g] += cat_term(static_cast<int64_t>(j), std::min(lo[g], cj), std::max(hi[g], cj));
      }
    }
    for (size_t g = 0; g < G; ++g) {  // IL(C ∪ {x}) (kept in acc) and the enlargement, vectorisable
      acc[g] *= inv_d_;
      ev[g] = acc[g] - gil[g];
    }
  }
  // the argmin set in Gamma's order; approx_eq(e, em) is |e - em| <= tol with tol fixed by em (and
  // fl(e - em) = -fl(em - e)), so the same comparisons run without recomputing the tolerance
  double tol = 0.0;
  for (size_t g = 0; g < G; ++g) {
    const double e = ev[g];
    if (e > em && e - em > tol) continue;  // neither a new minimum nor a tie (the common case)
    const int32_t c = gamma_[g];
    const double nil = acc[g];
    if (scratch_em_.empty() || (e < em && em - e > tol)) {
      em = e;
      tol = 1e-12 * std::max(1.0, std::fabs(em));
      scratch_em_.clear();
      em_il.clear();
      scratch_em_.push_back(c);
      em_il.push_back(nil);
    } else if (std::fabs(e - em) <= tol) {
      scratch_em_.push_back(c);
      em_il.push_back(nil);
    }
  }
  // Minimum distinct-pid size among the argmin set, optionally restricted to IL(C ∪ {x}) <= tau; remaining
  // ties go to the oldest cluster (Gamma is in creation order).
  auto pick = [&](bool tau_only) {
    int32_t best = -1;
    size_t best_size = 0;
    for (size_t i = 0; i < scratch_em_.size(); ++i) {
      if (tau_only && !(em_il[i] <= tau_ || approx_eq(em_il[i], tau_))) continue;
      size_t s = clusters_[sz(scratch_em_[i])].pids.size();
      if (best < 0 || s < best_size) {
        best = scratch_em_[i];
        best_size = s;
      }
    }
    return best;
  };
  int32_t c = pick(true);
  if (c >= 0) return c;
  if (static_cast<int64_t>(gamma_.size()) >= p_.eta) return pick(false);  // forced push
  return -1;
}

}  // namespace anoncore::stream

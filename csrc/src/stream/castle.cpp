// CASTLE (spec streams-castle-sabrew.md §2). Section numbers below refer to that spec.
#include "anoncore/stream/castle.hpp"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/status.hpp"

namespace anoncore::stream {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int32_t kTableMaxLeaves = 256;  // L x L tables up to 256 leaves (512 KiB of IL per attribute)
constexpr size_t kRowMaxLeaves = 64;      // per-open-cluster rows of IL terms (L x eta doubles) up to 64 leaves

/// A7: enlargements and ILs compare equal within a relative 1e-12.
inline bool approx_eq(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b)); }

size_t sz(int64_t v) { return static_cast<size_t>(v); }

// The hot numeric loop of bestSelection is compiled twice, for AVX2 and for the baseline, and picked at load time
// (GCC/Clang function multiversioning on x86-64 Linux). Both run the same IEEE operations element by element
// (max, min, subtract, multiply, add; AVX2 has no FMA, so nothing is contracted): results are identical.
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && !defined(ANONCORE_NO_MULTIVERSION)
#define ANONCORE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ANONCORE_CLONES
#endif

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

/// split^k: the distances IL({x, y}) of the points of one block (numeric terms in dimension order, then the
/// categorical terms in order, then the 1/d factor: the operations of il_of_bounds for a two-point box), left in
/// `acc`, and the in-block offsets of the alive points whose distance is not above `thr`, compacted into `out`
/// (branch-free). Columns are dimension-major with row stride `stride`.
ANONCORE_CLONES size_t block_candidates(double* __restrict acc, uint32_t* __restrict out, size_t nq, size_t stride,
                                        size_t dn, size_t dc, const double* __restrict cols,
                                        const int32_t* __restrict codes, const uint8_t* __restrict alive,
                                        const double* v, const double* w, const double* const* rows, double inv_d,
                                        double thr) {
  // numeric terms; the first one is stored directly (0.0 + t == t for the non-negative t)
  if (dn == 0) {
    for (size_t i = 0; i < nq; ++i) acc[i] = 0.0;
  }
  for (size_t j = 0; j < dn; ++j) {
    const double* __restrict col = cols + j * stride;
    const double vj = v[j], wj = w[j];
    if (j == 0) {
      for (size_t i = 0; i < nq; ++i) acc[i] = std::fabs(col[i] - vj) * wj;
    } else {
      for (size_t i = 0; i < nq; ++i) acc[i] += std::fabs(col[i] - vj) * wj;
    }
  }
  for (size_t j = 0; j < dc; ++j) {
    const int32_t* __restrict col = codes + j * stride;
    const double* __restrict row = rows[j];
    for (size_t i = 0; i < nq; ++i) acc[i] += row[col[i]];
  }
  // the hits as a bit mask (nq <= 32), then its set bits in order
  uint32_t mask = 0;
  for (size_t i = 0; i < nq; ++i) {
    const double d = acc[i] * inv_d;
    acc[i] = d;
    mask |= static_cast<uint32_t>(!(d > thr) & (alive[i] != 0)) << i;
  }
  size_t c = 0;
  for (; mask != 0; mask &= mask - 1) out[c++] = static_cast<uint32_t>(__builtin_ctz(mask));
  return c;
}

}  // namespace

// ------------------------------------------------------------------------------------------------ setup
/// The numbering of docs/contracts.md, checked in O(n_nodes): leaves 0..L-1, every parent after its children, the
/// root last, and each node's leaves the contiguous range [leaf_start, leaf_start + leaf_count) of its children's.
void validate_hierarchy(const CatHierarchy& h) {
  const size_t n = h.parent.size();
  auto bad = [](const char* what) { throw std::invalid_argument(std::string("malformed hierarchy arrays: ") + what); };
  if (h.n_leaves < 1 || n < static_cast<size_t>(h.n_leaves) || n != h.leaf_start.size() || n != h.leaf_count.size() ||
      n > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    bad("sizes");
  const auto L = static_cast<size_t>(h.n_leaves);
  if (h.parent[n - 1] != -1) bad("the last node is not the root");
  std::vector<int64_t> lo(n, std::numeric_limits<int64_t>::max()), cnt(n, 0), hi(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (i < L) {
      if (h.leaf_start[i] != static_cast<int32_t>(i) || h.leaf_count[i] != 1) bad("leaf ranges");
      lo[i] = hi[i] = static_cast<int64_t>(i);
      cnt[i] = 1;
    } else if (cnt[i] == 0 || lo[i] != h.leaf_start[i] || cnt[i] != h.leaf_count[i] || hi[i] - lo[i] + 1 != cnt[i]) {
      bad("an internal node's leaves are not the contiguous union of its children's");
    }
    if (i + 1 == n) break;
    const int32_t p = h.parent[i];
    if (p < 0 || static_cast<size_t>(p) <= i || static_cast<size_t>(p) >= n || static_cast<size_t>(p) < L)
      bad("a parent is not an internal node after its child");
    const auto q = static_cast<size_t>(p);
    lo[q] = std::min(lo[q], lo[i]);
    hi[q] = std::max(hi[q], hi[i]);
    cnt[q] += cnt[i];
  }
}

Castle::Castle(const CastleParams& params, std::vector<double> num_domain_lo, std::vector<double> num_domain_hi,
               std::vector<CatHierarchy> cats)
    : p_(params),
      dn_(static_cast<int64_t>(num_domain_lo.size())),
      dc_(static_cast<int64_t>(cats.size())),
      inv_d_(0.0),
      dom_lo_(std::move(num_domain_lo)),
      dom_hi_(std::move(num_domain_hi)),
      cats_(std::move(cats)) {
  if (p_.k < 1 || p_.delta < 1 || p_.eta < 1 || p_.mu < 1 || p_.l < 0 || p_.max_reuse < -1 ||
      !(p_.initial_tau >= 0.0 && p_.initial_tau <= 1.0))
    throw std::invalid_argument("CASTLE parameters out of range");
  if (dom_hi_.size() != dom_lo_.size()) throw std::invalid_argument("numeric domain bounds differ in length");
  for (size_t j = 0; j < dom_lo_.size(); ++j)
    if (!(std::isfinite(dom_lo_[j]) && std::isfinite(dom_hi_[j]) && dom_lo_[j] <= dom_hi_[j]))
      throw std::invalid_argument("numeric domain bounds must be finite with lo <= hi");
  for (const CatHierarchy& h : cats_) validate_hierarchy(h);
  if (dn_ + dc_ < 1) throw std::invalid_argument("CASTLE needs at least one quasi-identifier");
  inv_d_ = 1.0 / static_cast<double>(dn_ + dc_);
  inv_range_.resize(sz(dn_));
  for (int64_t j = 0; j < dn_; ++j) {
    double w = dom_hi_[sz(j)] - dom_lo_[sz(j)];
    inv_range_[sz(j)] = w > 0 ? 1.0 / w : 0.0;  // A23: U = L gives IL 0
  }
  cat_il_table_.resize(sz(dc_));
  cat_lca_table_.resize(sz(dc_));
  for (int64_t j = 0; j < dc_; ++j) {
    const CatHierarchy& h = cats_[sz(j)];
    if (h.n_leaves <= kTableMaxLeaves) {
      const auto L = static_cast<size_t>(h.n_leaves);
      auto& il = cat_il_table_[sz(j)];
      auto& lca = cat_lca_table_[sz(j)];
      il.assign(L * L, 0.0);
      lca.assign(L * L, -1);
      for (int32_t lo = 0; lo < h.n_leaves; ++lo) {
        int32_t node = lo;
        for (int32_t hi = lo; hi < h.n_leaves; ++hi) {
          while (h.leaf_start[sz(node)] + h.leaf_count[sz(node)] - 1 < hi) node = h.parent[sz(node)];
          int32_t cnt = h.leaf_count[sz(node)];
          size_t a = static_cast<size_t>(lo) * L + static_cast<size_t>(hi);
          size_t b = static_cast<size_t>(hi) * L + static_cast<size_t>(lo);
          il[a] = il[b] = cnt <= 1 ? 0.0 : static_cast<double>(cnt) / static_cast<double>(h.n_leaves);
          lca[a] = lca[b] = node;
        }
      }
    }
  }
  for (int64_t j = 0; j < dc_; ++j) {
    cat_tab_.push_back(cat_il_table_[sz(j)].empty() ? nullptr : cat_il_table_[sz(j)].data());
    cat_L_.push_back(static_cast<size_t>(cats_[sz(j)].n_leaves));
  }
  // per categorical QI: the rank of each leaf's top group (its ancestor just below the root, ranked in leaf
  // order), so split^k's index can keep points of the same groups together (bounds only; no effect on results)
  cat_top_.resize(sz(dc_));
  for (int64_t j = 0; j < dc_; ++j) {
    const CatHierarchy& h = cats_[sz(j)];
    auto& top = cat_top_[sz(j)];
    top.assign(sz(h.n_leaves), 0);
    int32_t rank = -1, last = -1;
    for (int32_t c = 0; c < h.n_leaves; ++c) {
      int32_t node = c;
      for (int guard = 0; guard < 1 << 20; ++guard) {
        const int32_t par = h.parent[sz(node)];
        if (par < 0 || h.parent[sz(par)] < 0) break;
        node = par;
      }
      if (node != last) {
        ++rank;
        last = node;
      }
      top[sz(c)] = rank;
    }
  }
  row_off_.assign(1, 0);
  for (int64_t j = 0; j < dc_; ++j)
    row_off_.push_back(row_off_.back() + (cat_tab_[sz(j)] && cat_L_[sz(j)] <= kRowMaxLeaves ? cat_L_[sz(j)] : 0));
  recent_il_.reserve(std::min<size_t>(sz(p_.mu), 4096));
  tau_ = p_.initial_tau;
}

// ------------------------------------------------------------------------------------------------ IL (§1.8)
int32_t Castle::cat_lca(int64_t j, int32_t lo, int32_t hi) const {
  const auto& tab = cat_lca_table_[sz(j)];
  const CatHierarchy& h = cats_[sz(j)];
  if (!tab.empty()) return tab[static_cast<size_t>(lo) * static_cast<size_t>(h.n_leaves) + static_cast<size_t>(hi)];
  int32_t node = lo;
  while (h.leaf_start[sz(node)] + h.leaf_count[sz(node)] - 1 < hi) node = h.parent[sz(node)];
  return node;
}

double Castle::cat_term(int64_t j, int32_t lo, int32_t hi) const {
  if (lo == hi) return 0.0;
  const auto& tab = cat_il_table_[sz(j)];
  const CatHierarchy& h = cats_[sz(j)];
  if (!tab.empty()) return tab[static_cast<size_t>(lo) * static_cast<size_t>(h.n_leaves) + static_cast<size_t>(hi)];
  int32_t cnt = h.leaf_count[sz(cat_lca(j, lo, hi))];
  return cnt <= 1 ? 0.0 : static_cast<double>(cnt) / static_cast<double>(h.n_leaves);
}

double Castle::il_of_bounds(const double* nlo, const double* nhi, const int32_t* clo, const int32_t* chi) const {
  double s = 0.0;
  for (int64_t j = 0; j < dn_; ++j) s += (nhi[j] - nlo[j]) * inv_range_[sz(j)];
  for (int64_t j = 0; j < dc_; ++j) s += cat_fast(j, clo[j], chi[j]);
  return s * inv_d_;
}

double Castle::il_with_cluster(int32_t c, int32_t o) const {
  const size_t a = sz(c), b = sz(o), n = sz(dn_), m = sz(dc_);
  double s = 0.0;
  for (size_t j = 0; j < n; ++j)
    s += (std::max(c_nhi_[a * n + j], c_nhi_[b * n + j]) - std::min(c_nlo_[a * n + j], c_nlo_[b * n + j])) *
         inv_range_[j];
  for (size_t j = 0; j < m; ++j)
    s += cat_fast(static_cast<int64_t>(j), std::min(c_clo_[a * m + j], c_clo_[b * m + j]),
                  std::max(c_chi_[a * m + j], c_chi_[b * m + j]));
  return s * inv_d_;
}

// ------------------------------------------------------------------------------------------------ slabs
int32_t Castle::new_tuple_slot() {
  if (!t_free_.empty()) {
    int32_t s = t_free_.back();
    t_free_.pop_back();
    return s;
  }
  auto s = static_cast<int32_t>(t_pos_.size());
  t_pos_.push_back(0);
  t_pid_.push_back(0);
  t_sa_.push_back(0);
  t_cluster_.push_back(-1);
  t_member_.push_back(-1);
  t_alive_.push_back(0);
  t_num_.resize(t_num_.size() + sz(dn_));
  t_cat_.resize(t_cat_.size() + sz(dc_));
  return s;
}

int32_t Castle::new_cluster(int32_t first) {
  int32_t c;
  if (!c_free_.empty()) {
    c = c_free_.back();
    c_free_.pop_back();
  } else {
    c = static_cast<int32_t>(clusters_.size());
    clusters_.emplace_back();
    c_gpos_.push_back(-1);
    c_nlo_.resize(c_nlo_.size() + sz(dn_));
    c_nhi_.resize(c_nhi_.size() + sz(dn_));
    c_clo_.resize(c_clo_.size() + sz(dc_));
    c_chi_.resize(c_chi_.size() + sz(dc_));
  }
  Cluster& C = clusters_[sz(c)];
  C.id = next_cluster_id_++;
  C.used = true;
  C.il = 0.0;
  std::copy_n(t_num_.data() + sz(first) * sz(dn_), dn_, c_nlo_.data() + sz(c) * sz(dn_));
  std::copy_n(t_num_.data() + sz(first) * sz(dn_), dn_, c_nhi_.data() + sz(c) * sz(dn_));
  std::copy_n(t_cat_.data() + sz(first) * sz(dc_), dc_, c_clo_.data() + sz(c) * sz(dc_));
  std::copy_n(t_cat_.data() + sz(first) * sz(dc_), dc_, c_chi_.data() + sz(c) * sz(dc_));
  gamma_push(c);  // ids increase, so Gamma stays in creation order
  add_to_cluster(c, first);
  return c;
}

void Castle::gamma_push(int32_t c) {
  if (gamma_.size() == gcap_) {  // grow the mirror (dimension-major, so re-layout)
    size_t ncap = std::max<size_t>(16, 2 * gcap_);
    std::vector<double> nlo(sz(dn_) * ncap), nhi(sz(dn_) * ncap), il(ncap);
    std::vector<int32_t> clo(sz(dc_) * ncap), chi(sz(dc_) * ncap);
    for (size_t g = 0; g < gamma_.size(); ++g) {
      for (size_t j = 0; j < sz(dn_); ++j) {
        nlo[j * ncap + g] = g_nlo_[j * gcap_ + g];
        nhi[j * ncap + g] = g_nhi_[j * gcap_ + g];
      }
      for (size_t j = 0; j < sz(dc_); ++j) {
        clo[j * ncap + g] = g_clo_[j * gcap_ + g];
        chi[j * ncap + g] = g_chi_[j * gcap_ + g];
      }
      il[g] = g_il_[g];
    }
    g_nlo_ = std::move(nlo);
    g_nhi_ = std::move(nhi);
    std::vector<double> rows(row_off_.back() * ncap);
    for (size_t r = 0; r < row_off_.back(); ++r)
      std::copy_n(g_row_.data() + r * gcap_, gamma_.size(), rows.data() + r * ncap);
    g_row_ = std::move(rows);
    g_clo_ = std::move(clo);
    g_chi_ = std::move(chi);
    g_il_ = std::move(il);
    gcap_ = ncap;
  }
  c_gpos_[sz(c)] = static_cast<int32_t>(gamma_.size());
  gamma_.push_back(c);
  gamma_sync(c, true);
}

void Castle::gamma_sync(int32_t c, bool fresh) {
  const int32_t gp = c_gpos_[sz(c)];
  if (gp < 0) return;
  const auto g = static_cast<size_t>(gp);
  for (size_t j = 0; j < sz(dn_); ++j) {
    g_nlo_[j * gcap_ + g] = c_nlo_[sz(c) * sz(dn_) + j];
    g_nhi_[j * gcap_ + g] = c_nhi_[sz(c) * sz(dn_) + j];
  }
  for (size_t j = 0; j < sz(dc_); ++j) {
    const int32_t lo = c_clo_[sz(c) * sz(dc_) + j], hi = c_chi_[sz(c) * sz(dc_) + j];
    const bool changed = fresh || g_clo_[j * gcap_ + g] != lo || g_chi_[j * gcap_ + g] != hi;
    g_clo_[j * gcap_ + g] = lo;
    g_chi_[j * gcap_ + g] = hi;
    if (changed && row_off_[j + 1] > row_off_[j]) {  // this cluster's IL term for every code of x
      const size_t L = cat_L_[j];
      const double* tab = cat_tab_[j];
      for (size_t cc = 0; cc < L; ++cc) {
        const auto ci = static_cast<int32_t>(cc);
        g_row_[(row_off_[j] + cc) * gcap_ + g] =
            tab[static_cast<size_t>(std::min(lo, ci)) * L + static_cast<size_t>(std::max(hi, ci))];
      }
    }
  }
  g_il_[g] = clusters_[sz(c)].il;
}

void Castle::free_cluster(int32_t c) {
  Cluster& C = clusters_[sz(c)];
  C.members.clear();
  C.pids.clear();
  C.sas.clear();
  C.used = false;
  c_free_.push_back(c);
}

void Castle::add_to_cluster(int32_t c, int32_t t) {
  Cluster& C = clusters_[sz(c)];
  t_cluster_[sz(t)] = c;
  t_member_[sz(t)] = static_cast<int32_t>(C.members.size());
  C.members.push_back(t);
  C.pids.inc(t_pid_[sz(t)]);
  gamma_pids_.inc(t_pid_[sz(t)]);
  if (p_.l > 0) {
    C.sas.inc(t_sa_[sz(t)]);
    gamma_sas_.inc(t_sa_[sz(t)]);
  }
  widen_bounds(c, t);
  C.il = il_of_bounds(c_nlo_.data() + sz(c) * sz(dn_), c_nhi_.data() + sz(c) * sz(dn_), c_clo_.data() + sz(c) * sz(dc_),
                      c_chi_.data() + sz(c) * sz(dc_));
  gamma_sync(c);
}

/// Grows cluster c's minimal box to contain tuple t.
void Castle::widen_bounds(int32_t c, int32_t t) {
  double* nlo = c_nlo_.data() + sz(c) * sz(dn_);
  double* nhi = c_nhi_.data() + sz(c) * sz(dn_);
  int32_t* clo = c_clo_.data() + sz(c) * sz(dc_);
  int32_t* chi = c_chi_.data() + sz(c) * sz(dc_);
  const double* v = t_num_.data() + sz(t) * sz(dn_);
  const int32_t* cv = t_cat_.data() + sz(t) * sz(dc_);
  for (int64_t j = 0; j < dn_; ++j) {
    nlo[j] = std::min(nlo[j], v[j]);
    nhi[j] = std::max(nhi[j], v[j]);
  }
  for (int64_t j = 0; j < dc_; ++j) {
    clo[j] = std::min(clo[j], cv[j]);
    chi[j] = std::max(chi[j], cv[j]);
  }
}

/// A9 / invariant 4: after a removal the bounds are the minimal box of the remaining tuples.
void Castle::recompute_bounds(int32_t c) {
  Cluster& C = clusters_[sz(c)];
  double* nlo = c_nlo_.data() + sz(c) * sz(dn_);
  double* nhi = c_nhi_.data() + sz(c) * sz(dn_);
  int32_t* clo = c_clo_.data() + sz(c) * sz(dc_);
  int32_t* chi = c_chi_.data() + sz(c) * sz(dc_);
  int32_t f = C.members.front();
  std::copy_n(t_num_.data() + sz(f) * sz(dn_), dn_, nlo);
  std::copy_n(t_num_.data() + sz(f) * sz(dn_), dn_, nhi);
  std::copy_n(t_cat_.data() + sz(f) * sz(dc_), dc_, clo);
  std::copy_n(t_cat_.data() + sz(f) * sz(dc_), dc_, chi);
  for (int32_t t : C.members) widen_bounds(c, t);
  C.il = il_of_bounds(nlo, nhi, clo, chi);
  gamma_sync(c);
}

void Castle::gamma_erase(int32_t c) {
  const int32_t gp = c_gpos_[sz(c)];
  if (gp < 0 || gamma_[static_cast<size_t>(gp)] != c) throw InternalError("CASTLE: cluster not in Gamma");
  const auto g = static_cast<size_t>(gp);
  const size_t n = gamma_.size();
  for (size_t j = 0; j < sz(dn_); ++j) {
    std::copy(g_nlo_.data() + j * gcap_ + g + 1, g_nlo_.data() + j * gcap_ + n, g_nlo_.data() + j * gcap_ + g);
    std::copy(g_nhi_.data() + j * gcap_ + g + 1, g_nhi_.data() + j * gcap_ + n, g_nhi_.data() + j * gcap_ + g);
  }
  for (size_t j = 0; j < sz(dc_); ++j) {
    std::copy(g_clo_.data() + j * gcap_ + g + 1, g_clo_.data() + j * gcap_ + n, g_clo_.data() + j * gcap_ + g);
    std::copy(g_chi_.data() + j * gcap_ + g + 1, g_chi_.data() + j * gcap_ + n, g_chi_.data() + j * gcap_ + g);
  }
  for (size_t r = 0; r < row_off_.back(); ++r)
    std::copy(g_row_.data() + r * gcap_ + g + 1, g_row_.data() + r * gcap_ + n, g_row_.data() + r * gcap_ + g);
  std::copy(g_il_.data() + g + 1, g_il_.data() + n, g_il_.data() + g);
  gamma_.erase(gamma_.begin() + static_cast<std::ptrdiff_t>(g));
  for (size_t q = g; q < gamma_.size(); ++q) c_gpos_[sz(gamma_[q])] = static_cast<int32_t>(q);
  c_gpos_[sz(c)] = -1;
}

static void dec_count(CountMap& m, int64_t key) {
  if (!m.dec(key)) throw InternalError("CASTLE: count map out of sync");
}

/// Remove a pending tuple from its open cluster (reuse or suppression, A9/A11); drops the cluster if empty.
void Castle::remove_from_cluster(int32_t t) {
  int32_t c = t_cluster_[sz(t)];
  Cluster& C = clusters_[sz(c)];
  auto idx = static_cast<size_t>(t_member_[sz(t)]);
  int32_t last = C.members.back();
  C.members[idx] = last;
  t_member_[sz(last)] = static_cast<int32_t>(idx);
  C.members.pop_back();
  dec_count(C.pids, t_pid_[sz(t)]);
  dec_count(gamma_pids_, t_pid_[sz(t)]);
  if (p_.l > 0) {
    dec_count(C.sas, t_sa_[sz(t)]);
    dec_count(gamma_sas_, t_sa_[sz(t)]);
  }
  t_cluster_[sz(t)] = -1;
  if (C.members.empty()) {
    gamma_erase(c);
    free_cluster(c);
  } else {
    recompute_bounds(c);
  }
}

// ------------------------------------------------------------------------------------------------ main loop (§2.3)
void Castle::push(Span<int64_t> position, Span<int64_t> pid, Span<int32_t> sa, Matrix<double> num,
                  Matrix<int32_t> cat) {
  for (int64_t i = 0; i < position.size; ++i) {
    arrive(position[i], pid[i], sa.size ? sa[i] : 0, dn_ ? num.row(i) : nullptr, dc_ ? cat.row(i) : nullptr);
  }
}

void Castle::arrive(int64_t pos, int64_t pid, int32_t sa, const double* num, const int32_t* cat) {
  int32_t t = new_tuple_slot();
  t_pos_[sz(t)] = pos;
  t_pid_[sz(t)] = pid;
  t_sa_[sz(t)] = sa;
  t_alive_[sz(t)] = 1;
  if (dn_) std::copy_n(num, dn_, t_num_.data() + sz(t) * sz(dn_));
  if (dc_) std::copy_n(cat, dc_, t_cat_.data() + sz(t) * sz(dc_));
  ++n_alive_;
  ++n_arrivals_;
  last_pos_ = pos;
  has_last_ = true;
  queue_.push_back(t);
  int32_t c = best_selection(t);
  if (c < 0) {
    new_cluster(t);
  } else {
    add_to_cluster(c, t);
  }
  // Steps 11-13 run on EVERY arrival (A2); with gaps in positions every tuple with p <= x.p - delta expires (A3).
  expire_upto(pos - p_.delta, pos);
}

void Castle::expire_upto(int64_t bound, int64_t at) {
  while (!queue_.empty()) {
    int32_t s = queue_.front();
    if (!t_alive_[sz(s)]) {
      queue_.pop_front();
      t_free_.push_back(s);
      continue;
    }
    if (t_pos_[sz(s)] > bound) break;
    delay_constraint(s, at);
    if (t_alive_[sz(s)]) throw InternalError("CASTLE: expiring tuple not released");
  }
}

void Castle::flush() { expire_upto(std::numeric_limits<int64_t>::max(), -1); }

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

// ------------------------------------------------------------------------------------------------ delayConstraint (§2.5)
void Castle::delay_constraint(int32_t t, int64_t at) {
  int32_t c = t_cluster_[sz(t)];
  const Cluster& C = clusters_[sz(c)];
  if (static_cast<int64_t>(C.pids.size()) >= p_.k && (p_.l == 0 || static_cast<int64_t>(C.sas.size()) >= p_.l)) {
    output_cluster(c, Mode::Cluster, at);
    return;
  }
  if (try_reuse(t, at)) return;
  if (p_.outlier_suppression) {
    // TDSC variant: x's cluster is an outlier if more than half of Gamma is larger than it.
    size_t m = 0;
    for (int32_t o : gamma_) m += clusters_[sz(o)].pids.size() > C.pids.size() ? 1 : 0;
    if (2 * m > gamma_.size()) {
      suppress(t, at);
      return;
    }
  }
  // Suppression (steps 10-11, A10/A18): exact distinct persons (and SA values) over Gamma.
  if (static_cast<int64_t>(gamma_pids_.size()) < p_.k ||
      (p_.l > 0 && static_cast<int64_t>(gamma_sas_.size()) < p_.l)) {
    suppress(t, at);
    return;
  }
  if (merge_clusters(c)) {
    output_cluster(c, Mode::Merge, at);
  } else {
    suppress(t, at);  // guard of §2.6 (only reachable when pids repeat across clusters)
  }
}

void Castle::omega_push(OmegaEntry&& e) {
  for (size_t j = 0; j < sz(dn_); ++j) {
    om_num_.push_back(e.lo[j]);
    om_num_.push_back(e.hi[j]);
  }
  for (size_t j = 0; j < sz(dc_); ++j) {
    om_cat_.push_back(e.clo[j]);
    om_cat_.push_back(e.chi[j]);
  }
  omega_.push_back(std::move(e));
}

void Castle::omega_pop_front() {
  omega_.pop_front();
  ++om_start_;
  if (om_start_ >= 1024 && om_start_ >= omega_.size()) {  // drop the evicted prefix of the mirror
    om_num_.erase(om_num_.begin(), om_num_.begin() + static_cast<std::ptrdiff_t>(om_start_ * 2 * sz(dn_)));
    om_cat_.erase(om_cat_.begin(), om_cat_.begin() + static_cast<std::ptrdiff_t>(om_start_ * 2 * sz(dc_)));
    om_start_ = 0;
  }
}

/// Reuse (delayConstraint steps 5-9): publish x with a uniformly random Omega entry containing it (Thm 5.2).
bool Castle::try_reuse(int32_t t, int64_t at) {
  if (!omega_.empty()) {
    const double* v = t_num_.data() + sz(t) * sz(dn_);
    const int32_t* cv = t_cat_.data() + sz(t) * sz(dc_);
    int64_t count = 0;
    size_t chosen = 0;
    std::vector<size_t>& found = scratch_found_;
    found.clear();
    // the same containment tests over the flat mirror of Omega (entry i at om_start_ + i)
    const size_t dn = sz(dn_), dc = sz(dc_);
    const double* nb = om_num_.data() + om_start_ * 2 * dn;
    const int32_t* cb = om_cat_.data() + om_start_ * 2 * dc;
    for (size_t i = 0; i < omega_.size(); ++i, nb += 2 * dn, cb += 2 * dc) {
      bool in = true;
      for (size_t j = 0; j < dn && in; ++j) in = nb[2 * j] <= v[j] && v[j] <= nb[2 * j + 1];
      for (size_t j = 0; j < dc && in; ++j) in = cb[2 * j] <= cv[j] && cv[j] <= cb[2 * j + 1];
      if (in) found.push_back(i);
    }
    count = static_cast<int64_t>(found.size());
    if (count > 0) {
      if (count > 1) {
        Rng rng = next_rng();
        chosen = found[rng.below(static_cast<uint64_t>(count))];
      } else {
        chosen = found[0];
      }
      const OmegaEntry& e = omega_[chosen];
      emit_tuple(t, Mode::Reuse, at, e.gen_id, e.lo.data(), e.hi.data(), e.node.data());
      remove_from_cluster(t);
      release_tuple(t);
      return true;
    }
  }
  return false;
}

void Castle::suppress(int32_t t, int64_t at) {
  emit_tuple(t, Mode::Suppressed, at, -1, nullptr, nullptr, nullptr);
  remove_from_cluster(t);
  release_tuple(t);
}

void Castle::release_tuple(int32_t t) {
  t_alive_[sz(t)] = 0;
  t_cluster_[sz(t)] = -1;
  --n_alive_;
}

// ------------------------------------------------------------------------------------------------ mergeClusters (§2.6)
bool Castle::merge_clusters(int32_t c) {
  for (;;) {
    const Cluster& C = clusters_[sz(c)];
    if (static_cast<int64_t>(C.pids.size()) >= p_.k && (p_.l == 0 || static_cast<int64_t>(C.sas.size()) >= p_.l))
      return true;
    int32_t best = -1;
    double best_e = 0.0;
    size_t best_size = 0;
    for (int32_t o : gamma_) {
      if (o == c) continue;
      double e = il_with_cluster(c, o) - C.il;
      size_t s = clusters_[sz(o)].pids.size();
      if (best < 0 || (e < best_e && !approx_eq(e, best_e)) || (approx_eq(e, best_e) && s < best_size)) {
        best = o;
        best_e = e;
        best_size = s;
      }
    }
    if (best < 0) return false;
    absorb(c, best);
  }
}

/// C <- C ∪ O (members keep their order: C's, then O's); O leaves Gamma.
void Castle::absorb(int32_t c, int32_t o) {
  Cluster& B = clusters_[sz(o)];
  std::vector<int32_t> moved = std::move(B.members);
  B.members.clear();
  for (int32_t t : moved) {
    // move without touching the Gamma-wide counts (the tuples stay in Gamma)
    dec_count(gamma_pids_, t_pid_[sz(t)]);
    if (p_.l > 0) dec_count(gamma_sas_, t_sa_[sz(t)]);
    add_to_cluster(c, t);
  }
  gamma_erase(o);
  free_cluster(o);
}

/// End of stream, the thesis's comparison protocol (spec §2.10, flush='paper'): (i) release every open cluster
/// with >= k persons (and >= l values), (ii) publish the remaining tuples by reuse where possible, (iii) release
/// all the rest as ONE cluster if it has >= k persons (and >= l values), else suppress it.
void Castle::flush_paper() {
  const std::vector<int32_t> g = gamma_;
  for (int32_t c : g) {
    const Cluster& C = clusters_[sz(c)];
    if (static_cast<int64_t>(C.pids.size()) >= p_.k && (p_.l == 0 || static_cast<int64_t>(C.sas.size()) >= p_.l))
      output_cluster(c, Mode::Cluster, -1);
  }
  const std::deque<int32_t> q = queue_;
  for (int32_t t : q)
    if (t_alive_[sz(t)]) try_reuse(t, -1);
  if (!gamma_.empty()) {
    if (static_cast<int64_t>(gamma_pids_.size()) >= p_.k &&
        (p_.l == 0 || static_cast<int64_t>(gamma_sas_.size()) >= p_.l)) {
      int32_t c = gamma_.front();
      while (gamma_.size() > 1) absorb(c, gamma_[1]);
      output_cluster(c, Mode::Merge, -1);
    } else {
      for (int32_t t : q)
        if (t_alive_[sz(t)]) suppress(t, -1);
    }
  }
  expire_upto(std::numeric_limits<int64_t>::max(), -1);  // nothing left; frees the queue
}

// ------------------------------------------------------------------------------------------------ outputCluster (§2.7)
void Castle::output_cluster(int32_t c, Mode mode, int64_t at) {
  Cluster& C = clusters_[sz(c)];
  std::vector<int32_t> members = std::move(C.members);
  C.members.clear();
  auto npids = static_cast<int64_t>(C.pids.size());
  for (int32_t t : members) {
    dec_count(gamma_pids_, t_pid_[sz(t)]);
    if (p_.l > 0) dec_count(gamma_sas_, t_sa_[sz(t)]);
  }
  gamma_erase(c);
  free_cluster(c);
  Rng rng = next_rng();
  if (npids >= 2 * p_.k) {
    auto subs = p_.l > 0 ? split_l(members, rng) : split_k(members, rng);
    Mode m = subs.size() > 1 ? Mode::Split : mode;
    for (auto& s : subs) emit_group(s, m, at, rng);
  } else {
    emit_group(members, mode, at, rng);
  }
}

void Castle::emit_tuple(int32_t t, Mode mode, int64_t at, int64_t gen, const double* lo, const double* hi,
                        const int32_t* node) {
  ev_.position.push_back(t_pos_[sz(t)]);
  ev_.pid.push_back(t_pid_[sz(t)]);
  ev_.emitted_at.push_back(at);
  ev_.gen_id.push_back(gen);
  ev_.mode.push_back(static_cast<int8_t>(mode));
  // one resize per row and direct writes (instead of one push_back per value)
  const size_t n0 = ev_.num_lo.size(), c0 = ev_.cat_node.size(), dn = sz(dn_), dc = sz(dc_);
  ev_.num_lo.resize(n0 + dn);
  ev_.num_hi.resize(n0 + dn);
  ev_.cat_node.resize(c0 + dc);
  double* olo = ev_.num_lo.data() + n0;
  double* ohi = ev_.num_hi.data() + n0;
  int32_t* onode = ev_.cat_node.data() + c0;
  for (size_t j = 0; j < dn; ++j) {
    olo[j] = lo ? lo[j] : kNaN;
    ohi[j] = hi ? hi[j] : kNaN;
  }
  for (size_t j = 0; j < dc; ++j) onode[j] = node ? node[j] : -1;
}

/// Release a group of tuples with its generalization (Def. 5.5), update tau (A6) and Omega (A12).
void Castle::emit_group(const std::vector<int32_t>& tuples, Mode mode, int64_t at, Rng& rng) {
  std::vector<double> nlo(sz(dn_)), nhi(sz(dn_));
  std::vector<int32_t> clo(sz(dc_)), chi(sz(dc_)), node(sz(dc_));
  int32_t f = tuples.front();
  std::copy_n(t_num_.data() + sz(f) * sz(dn_), dn_, nlo.data());
  std::copy_n(t_num_.data() + sz(f) * sz(dn_), dn_, nhi.data());
  std::copy_n(t_cat_.data() + sz(f) * sz(dc_), dc_, clo.data());
  std::copy_n(t_cat_.data() + sz(f) * sz(dc_), dc_, chi.data());
  std::vector<int64_t> pids;
  std::vector<int32_t> sas;
  pids.reserve(tuples.size());
  for (int32_t t : tuples) {
    for (int64_t j = 0; j < dn_; ++j) {
      nlo[sz(j)] = std::min(nlo[sz(j)], t_num_[sz(t) * sz(dn_) + sz(j)]);
      nhi[sz(j)] = std::max(nhi[sz(j)], t_num_[sz(t) * sz(dn_) + sz(j)]);
    }
    for (int64_t j = 0; j < dc_; ++j) {
      clo[sz(j)] = std::min(clo[sz(j)], t_cat_[sz(t) * sz(dc_) + sz(j)]);
      chi[sz(j)] = std::max(chi[sz(j)], t_cat_[sz(t) * sz(dc_) + sz(j)]);
    }
    pids.push_back(t_pid_[sz(t)]);
    sas.push_back(t_sa_[sz(t)]);
  }
  for (int64_t j = 0; j < dc_; ++j) node[sz(j)] = cat_lca(j, clo[sz(j)], chi[sz(j)]);
  std::sort(pids.begin(), pids.end());
  std::sort(sas.begin(), sas.end());
  auto npids = static_cast<int64_t>(std::unique(pids.begin(), pids.end()) - pids.begin());
  auto ndiv = static_cast<int64_t>(std::unique(sas.begin(), sas.end()) - sas.begin());
  double il = il_of_bounds(nlo.data(), nhi.data(), clo.data(), chi.data());
  int64_t gen = next_gen_id_++;
  std::vector<int32_t> order(tuples);
  rng.shuffle(order.begin(), order.end());  // A21: no arrival order inside a released cluster
  // the rows of emit_tuple for the whole group: one resize per column, then direct writes
  const size_t cnt = order.size(), e0 = ev_.position.size(), dn = sz(dn_), dc = sz(dc_);
  ev_.position.resize(e0 + cnt);
  ev_.pid.resize(e0 + cnt);
  ev_.emitted_at.resize(e0 + cnt, at);
  ev_.gen_id.resize(e0 + cnt, gen);
  ev_.mode.resize(e0 + cnt, static_cast<int8_t>(mode));
  ev_.num_lo.resize((e0 + cnt) * dn);
  ev_.num_hi.resize((e0 + cnt) * dn);
  ev_.cat_node.resize((e0 + cnt) * dc);
  for (size_t i = 0; i < cnt; ++i) {
    const int32_t t = order[i];
    ev_.position[e0 + i] = t_pos_[sz(t)];
    ev_.pid[e0 + i] = t_pid_[sz(t)];
    std::copy_n(nlo.data(), dn, ev_.num_lo.data() + (e0 + i) * dn);
    std::copy_n(nhi.data(), dn, ev_.num_hi.data() + (e0 + i) * dn);
    std::copy_n(node.data(), dc, ev_.cat_node.data() + (e0 + i) * dc);
    release_tuple(t);
  }
  // tau = mean IL of the last min(mu, #released) clusters, including this one (§2.7 step 7)
  if (static_cast<int64_t>(recent_il_.size()) < p_.mu) {
    recent_il_.push_back(il);
  } else {
    recent_il_[sz(recent_head_)] = il;
    recent_head_ = (recent_head_ + 1) % p_.mu;
  }
  double s = 0.0;
  for (double x : recent_il_) s += x;
  tau_ = s / static_cast<double>(recent_il_.size());
  bool kept = il < tau_ && p_.max_reuse != 0;
  if (kept) {
    OmegaEntry e;
    e.gen_id = gen;
    e.lo = nlo;
    e.hi = nhi;
    e.node = node;
    if (p_.containment_range) {
      e.clo = clo;
      e.chi = chi;
    } else {
      e.clo.resize(sz(dc_));
      e.chi.resize(sz(dc_));
      for (int64_t j = 0; j < dc_; ++j) {
        const CatHierarchy& h = cats_[sz(j)];
        e.clo[sz(j)] = h.leaf_start[sz(node[sz(j)])];
        e.chi[sz(j)] = h.leaf_start[sz(node[sz(j)])] + h.leaf_count[sz(node[sz(j)])] - 1;
      }
    }
    omega_push(std::move(e));
    if (p_.max_reuse > 0 && static_cast<int64_t>(omega_.size()) > p_.max_reuse) omega_pop_front();  // FIFO
  }
  ev_.g_id.push_back(gen);
  ev_.g_pids.push_back(npids);
  ev_.g_tuples.push_back(static_cast<int64_t>(tuples.size()));
  ev_.g_diversity.push_back(ndiv);
  ev_.g_il.push_back(il);
  ev_.g_tau.push_back(tau_);
  ev_.g_kept.push_back(kept ? 1 : 0);
}

// ------------------------------------------------------------------------------------------------ split^k (§2.8)
namespace {
/// split^k rounds (spec §2.8 steps 3-20) when every bucket holds one tuple (one tuple per person), over a flat
/// index: the points are sorted by top-group vector and categorical vector (then index; or by categorical vector
/// and first numeric value when the codes do not pack) and cut into blocks of kBlock points with their bounding
/// boxes. A round computes, per block, a lower bound of IL({x, y}) over the box (the same sum of per-dimension
/// terms, each term no larger than any member's, and floating-point rounding is monotone, so the bound never
/// exceeds a member's computed distance), evaluates the blocks of smallest bounds first, then every other block
/// whose bound does not exceed the (k-1)-th best. The k-1 nearest are the smallest by (distance, bucket rank), a
/// total order, so the result is independent of the visiting order (and of the index order and the thread count)
/// and equal to the brute-force heap scan over phi: bit-identical distances (same operations in the same order)
/// and the same random draws. Cost per round O(n_blocks * d + evaluated points * d).
struct SingletonKnn {
  size_t n, dn, dc, k;
  const double* X;   // (n, dn) row-major, local index = bucket rank
  const int32_t* Y;  // (n, dc)
  const double* inv;                 // 1 / (U - L) per numeric dimension
  const std::vector<const double*>& tab;  // (L x L) IL tables per categorical dimension
  const std::vector<size_t>& L;
  const std::vector<std::vector<int32_t>>& top;  // per categorical dimension: leaf -> top-group rank
  double inv_d;
  int threads;
  static constexpr size_t kBlock = 32;
  static constexpr size_t kParMinBlocks = 64;  // rounds over fewer blocks run on one thread
  SingletonKnn(size_t n_, size_t dn_, size_t dc_, size_t k_, const double* X_, const int32_t* Y_, const double* inv_,
               const std::vector<const double*>& tab_, const std::vector<size_t>& L_,
               const std::vector<std::vector<int32_t>>& top_, double inv_d_, int threads_)
      : n(n_), dn(dn_), dc(dc_), k(k_), X(X_), Y(Y_), inv(inv_), tab(tab_), L(L_), top(top_), inv_d(inv_d_),
        threads(threads_) {}

  // Index over the alive points: sorted by categorical vector (see build) and cut into blocks of
  // kBlock consecutive points, each with its bounding box (numeric ranges, categorical code ranges).
  std::vector<uint32_t> P;        // P[pos] = local index
  std::vector<double> XT;         // (dn, m) numeric values in index order
  std::vector<size_t> bstart;     // block b = positions [bstart[b], bstart[b + 1])
  std::vector<int32_t> YT;        // (dc, m) categorical codes in index order
  std::vector<double> blo, bhi;   // (dn, n_blocks) numeric boxes
  std::vector<int32_t> bclo, bchi;  // (dc, n_blocks) categorical code ranges
  std::vector<uint8_t> aliveP;      // alive flag by index position
  std::vector<uint32_t> pos_of;     // local index -> index position (valid for indexed points)

  bool built = false;

  void build(const std::vector<uint8_t>& alive) {
    if (!built) {  // first build: sort; later builds keep the order and drop the dead points
      built = true;
      for (size_t i = 0; i < n; ++i) P.push_back(static_cast<uint32_t>(i));
      bool packed = dc <= 6;
      for (size_t j = 0; j < dc; ++j) packed = packed && L[j] <= 1024;
      if (packed) {
        // by categorical vector, then index: the codes packed into one key of B <= 60 bits (dimension 0 most
        // significant), sorted by a stable LSD radix sort on 8-bit digits. Any order gives the same k-1 nearest
        // (see above); this one only makes blocks share categorical values, so their bounds are tighter.
        // When they fit, the top-group ranks of all dimensions come first (blocks then mostly share every
        // dimension's group, which tightens the bounds of IL terms that jump between groups).
        std::vector<int> bits_of(dc), gbits_of(dc);
        int B = 0, GB = 0;
        for (size_t j = 0; j < dc; ++j) {
          int bj = 1;
          while ((size_t{1} << bj) < L[j]) ++bj;
          bits_of[j] = bj;
          B += bj;
          int gj = 1;
          while ((int32_t{1} << gj) <= top[j].back()) ++gj;
          gbits_of[j] = gj;
          GB += gj;
        }
        const bool groups = B + GB <= 64;
        if (groups) B += GB;
        std::vector<uint64_t> key(n), key2(n);
        std::vector<uint32_t> P2(n);
        for (size_t i = 0; i < n; ++i) {
          uint64_t kk = 0;
          if (groups)
            for (size_t j = 0; j < dc; ++j)
              kk = (kk << gbits_of[j]) | static_cast<uint64_t>(top[j][static_cast<size_t>(Y[i * dc + j])]);
          for (size_t j = 0; j < dc; ++j) kk = (kk << bits_of[j]) | static_cast<uint64_t>(Y[i * dc + j]);
          key[i] = kk;
        }
        for (int shift = 0; shift < B; shift += 8) {
          size_t cnt[257] = {0};
          for (size_t i = 0; i < n; ++i) ++cnt[((key[i] >> shift) & 0xFF) + 1];
          for (size_t d = 0; d < 256; ++d) cnt[d + 1] += cnt[d];
          for (size_t i = 0; i < n; ++i) {
            const size_t at = cnt[(key[i] >> shift) & 0xFF]++;
            P2[at] = P[i];
            key2[at] = key[i];
          }
          P.swap(P2);
          key.swap(key2);
        }
      } else {
        std::sort(P.begin(), P.end(), [&](uint32_t u, uint32_t v) {
          for (size_t j = 0; j < dc; ++j)
            if (Y[u * dc + j] != Y[v * dc + j]) return Y[u * dc + j] < Y[v * dc + j];
          if (dn && X[u * dn] != X[v * dn]) return X[u * dn] < X[v * dn];
          return u < v;
        });
      }
    } else {
      P.erase(std::remove_if(P.begin(), P.end(), [&](uint32_t u) { return !alive[u]; }), P.end());
    }
    const size_t m = P.size();
    XT.resize(dn * m);
    YT.resize(dc * m);
    aliveP.assign(m, 1);
    pos_of.resize(n);
    for (size_t q = 0; q < m; ++q) pos_of[P[q]] = static_cast<uint32_t>(q);
    for (size_t q = 0; q < m; ++q) {
      for (size_t j = 0; j < dn; ++j) XT[j * m + q] = X[P[q] * dn + j];
      for (size_t j = 0; j < dc; ++j) YT[j * m + q] = Y[P[q] * dc + j];
    }
    const size_t nb = (m + kBlock - 1) / kBlock;
    bstart.resize(nb + 1);
    for (size_t b = 0; b <= nb; ++b) bstart[b] = std::min(m, b * kBlock);
    blo.assign(dn * nb, 0.0);
    bhi.assign(dn * nb, 0.0);
    bclo.assign(dc * nb, 0);
    bchi.assign(dc * nb, 0);
    for (size_t j = 0; j < dn; ++j)
      for (size_t b = 0; b < nb; ++b) {
        double lo = XT[j * m + bstart[b]], hi = lo;
        for (size_t q = bstart[b]; q < bstart[b + 1]; ++q) {
          lo = std::min(lo, XT[j * m + q]);
          hi = std::max(hi, XT[j * m + q]);
        }
        blo[j * nb + b] = lo;
        bhi[j * nb + b] = hi;
      }
    for (size_t j = 0; j < dc; ++j)
      for (size_t b = 0; b < nb; ++b) {
        int32_t lo = YT[j * m + bstart[b]], hi = lo;
        for (size_t q = bstart[b]; q < bstart[b + 1]; ++q) {
          lo = std::min(lo, YT[j * m + q]);
          hi = std::max(hi, YT[j * m + q]);
        }
        bclo[j * nb + b] = lo;
        bchi[j * nb + b] = hi;
      }
  }

  /// Runs the rounds; returns the sub-clusters (local indices) and leaves `alive` marking the leftovers.
  // --- multi-threaded block scans: helper threads claim chunks of a round's blocks (see run)
  struct Node {
    double d;
    uint32_t l;
  };
  static bool cmp(const Node& a, const Node& b) { return a.d != b.d ? a.d < b.d : a.l < b.l; }
  static constexpr size_t kChunk = 4;  // blocks per claim
  struct Round {
    const std::pair<double, uint32_t>* order = nullptr;
    size_t nb = 0, m = 0;
    const double* xv = nullptr;
    std::atomic<size_t> nchunks{0};
  };
  Round round_;
  std::vector<const double*> row_ptr_;
  std::vector<std::vector<Node>> bufs;  // one candidate buffer per helper
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t epoch_ = 0;  // round counter (written under mu_ by the scanning thread only)
  bool stop_ = false;
  std::atomic<uint64_t> claim_{0};  // (epoch << 32) | next chunk; low word 0xFFFFFFFF = closed
  std::atomic<int> inflight_{0};    // helpers between a claim attempt and the end of its chunk
  std::vector<std::thread> helpers_;

  /// Scan the blocks order[chunk * kChunk, ...) of the current round into `buf` with the threshold `thr` of
  /// its owner (each owner's threshold is never below the final (k-1)-th distance, see run).
  void scan_chunk(size_t chunk, std::vector<Node>& buf, double& thr) {
    const size_t b1 = std::min(round_.nb, (chunk + 1) * kChunk);
    for (size_t oi = chunk * kChunk; oi < b1; ++oi) {
      const auto& ob = round_.order[oi];
      if (!block_may_hold(ob.first, buf, thr)) continue;
      scan_block(ob.second, round_.xv, round_.m, buf, thr);
    }
  }

  /// Cut `buf` to its k-1 smallest candidates under (distance, index); `thr` becomes the (k-1)-th distance.
  void prune(std::vector<Node>& buf, double& thr) const {
    const size_t want = k - 1;
    std::nth_element(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(want - 1), buf.end(), cmp);
    buf.resize(want);
    thr = buf[want - 1].d;
  }

  /// Whether a block whose distance lower bound is `bound` may still hold one of the k-1 nearest (tightening
  /// `thr` to the exact (k-1)-th distance first when the buffer holds more candidates than needed).
  bool block_may_hold(double bound, std::vector<Node>& buf, double& thr) const {
    if (buf.size() < k - 1 || bound <= thr) return true;
    if (buf.size() > k - 1) prune(buf, thr);
    return bound <= thr;
  }

  /// Buffer the points of block `bk` at distance <= thr from xv. thr is fixed during a block: it only ever
  /// decreases towards the final (k-1)-th distance, so accepting against a larger one adds candidates, never
  /// loses one. Once k-1 candidates are buffered thr is their largest distance; the buffer is cut back when it
  /// grows large.
  void scan_block(size_t bk, const double* xv, size_t m, std::vector<Node>& buf, double& thr) const {
    const size_t want = k - 1;
    double acc[kBlock];
    uint32_t hit[kBlock];
    const size_t q0 = bstart[bk], nq = bstart[bk + 1] - q0;
    const size_t nh = block_candidates(acc, hit, nq, m, dn, dc, XT.data() + q0, YT.data() + q0, aliveP.data() + q0,
                                       xv, inv, row_ptr_.data(), inv_d, thr);
    for (size_t h = 0; h < nh; ++h) buf.push_back(Node{acc[hit[h]], P[q0 + hit[h]]});
    if (buf.size() >= want && thr == std::numeric_limits<double>::infinity()) {
      if (buf.size() == want) {
        thr = buf[0].d;
        for (const Node& nd : buf) thr = std::max(thr, nd.d);
      } else {
        prune(buf, thr);
      }
    } else if (buf.size() >= 4 * want + kBlock) {
      prune(buf, thr);
    }
  }

  void helper_loop(size_t h) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || epoch_ != seen; });
        if (stop_) return;
        seen = epoch_;
      }
      double thr = std::numeric_limits<double>::infinity();
      for (;;) {
        inflight_.fetch_add(1);  // before the claim, so a closing round waits for a claim that succeeds
        uint64_t c = claim_.load();
        bool got = false;
        while ((c >> 32) == seen && (c & 0xFFFFFFFFu) < round_.nchunks.load()) {
          if (claim_.compare_exchange_weak(c, c + 1)) {
            got = true;
            break;
          }
        }
        if (got) scan_chunk(static_cast<size_t>(c & 0xFFFFFFFFu), bufs[h], thr);
        inflight_.fetch_sub(1);
        if (!got) break;
      }
    }
  }

  /// Starts T - 1 helpers for the rounds of run() and stops them when it returns (or throws).
  struct Helpers {
    SingletonKnn& s;
    Helpers(SingletonKnn& s_, int T) : s(s_) {
      if (T <= 1) return;
      s.bufs.resize(static_cast<size_t>(T - 1));
      for (auto& b : s.bufs) b.reserve(4 * s.k + 2 * kBlock);  // nothing allocates in a helper
      for (size_t h = 0; h + 1 < static_cast<size_t>(T); ++h) s.helpers_.emplace_back([this, h] { s.helper_loop(h); });
    }
    ~Helpers() {
      {
        std::lock_guard<std::mutex> lk(s.mu_);
        s.stop_ = true;
      }
      s.cv_.notify_all();
      for (auto& t : s.helpers_) t.join();
      s.helpers_.clear();
    }
    Helpers(const Helpers&) = delete;
    Helpers& operator=(const Helpers&) = delete;
  };

  std::vector<std::vector<int32_t>> run(Rng& rng, std::vector<uint8_t>& alive) {
    std::vector<std::vector<int32_t>> subs;
    alive.assign(n, 1);
    size_t n_alive = n;
    std::vector<uint64_t> bits((n + 63) / 64, ~uint64_t{0});  // alive, for the rank-r selection
    if (n % 64) bits.back() = (uint64_t{1} << (n % 64)) - 1;
    auto kill = [&](size_t l) {
      alive[l] = 0;
      aliveP[pos_of[l]] = 0;
      bits[l / 64] &= ~(uint64_t{1} << (l % 64));
    };
    build(alive);
    size_t indexed = n;
    std::vector<std::vector<double>> rows(dc);
    for (size_t j = 0; j < dc; ++j) rows[j].resize(L[j]);
    std::vector<const double*> row_ptr(dc);
    for (size_t j = 0; j < dc; ++j) row_ptr[j] = rows[j].data();
    std::vector<double> lb;
    std::vector<std::pair<double, uint32_t>> order;
    std::vector<Node> heap;
    heap.reserve(4 * k + 2 * kBlock);
    row_ptr_ = row_ptr;
    Helpers helpers(*this, threads > 1 && n >= kParMinBlocks * kBlock ? threads : 1);
    while (n_alive >= k) {
      // steps 4-6: a uniformly random bucket of phi (phi = alive buckets in rank order), then a random tuple of it
      uint64_t r = rng.below(n_alive);
      size_t w = 0;
      for (;; ++w) {
        const auto c = static_cast<uint64_t>(__builtin_popcountll(bits[w]));
        if (r < c) break;
        r -= c;
      }
      uint64_t word = bits[w];
      for (; r > 0; --r) word &= word - 1;  // drop the r lowest set bits
      const size_t xl = w * 64 + static_cast<size_t>(__builtin_ctzll(word));
      (void)rng.below(1);  // the bucket's only tuple (draws nothing, as in the general loop)
      kill(xl);
      --n_alive;
      const double* xv = X + xl * dn;
      const int32_t* yv = Y + xl * dc;
      for (size_t j = 0; j < dc; ++j) {
        const size_t Lj = L[j];
        for (size_t c = 0; c < Lj; ++c) {
          const auto ci = static_cast<int32_t>(c);
          rows[j][c] = tab[j][static_cast<size_t>(std::min(ci, yv[j])) * Lj + static_cast<size_t>(std::max(ci, yv[j]))];
        }
      }
      // lower bound per block (same term order as the distance: numeric, categorical, then 1/d); a block's
      // categorical terms are exact (its points share the vector)
      const size_t nb = bstart.size() - 1, m = P.size();
      lb.assign(nb, 0.0);
      for (size_t j = 0; j < dn; ++j) {
        const double v = xv[j], w = inv[j];
        const double* lo = blo.data() + j * nb;
        const double* hi = bhi.data() + j * nb;
        for (size_t b = 0; b < nb; ++b) lb[b] += std::fabs(std::min(std::max(v, lo[b]), hi[b]) - v) * w;
      }
      for (size_t j = 0; j < dc; ++j) {
        // a row is smallest at the code nearest to y (the leaf range [min, max] only grows away from it)
        const int32_t y = yv[j];
        const int32_t* lo = bclo.data() + j * nb;
        const int32_t* hi = bchi.data() + j * nb;
        const double* row = rows[j].data();
        for (size_t b = 0; b < nb; ++b) lb[b] += row[std::min(std::max(y, lo[b]), hi[b])];
      }
      for (size_t b = 0; b < nb; ++b) lb[b] *= inv_d;
      order.resize(nb);
      for (size_t b = 0; b < nb; ++b) order[b] = {lb[b], static_cast<uint32_t>(b)};
      // the blocks of smallest bounds first (in order), so the root tightens fast; then one pass over the rest
      const size_t want = k - 1;
      const size_t head = std::min(nb, std::max<size_t>(16, 2 * want * nb / std::max<size_t>(m, 1) + 1));
      std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(head - 1), order.end());
      std::sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(head));
      // The k-1 nearest under (distance, index): candidates at or below the threshold are buffered, and the
      // buffer is cut to its k-1 smallest (nth_element) only when a block's bound must be tested against the exact
      // (k-1)-th distance or when it grows large. With T threads, thread t scans the blocks order[t], order[t + T],
      // ... with its own buffer and threshold (each thread's threshold is never below the final (k-1)-th distance,
      // so no block or point of the k-1 nearest is skipped), and the buffers are merged under the same total order
      // (distance, index): the result does not depend on T.
      const int T = threads > 1 && nb >= kParMinBlocks && !helpers_.empty() ? threads : 1;
      // Serial scan: the sorted head in order, then one pass over the rest.
      auto scan = [&](std::vector<Node>& buf) {
        buf.clear();
        double thr = std::numeric_limits<double>::infinity();  // (k-1)-th smallest so far once buf.size() >= want
        size_t oi = 0;
        while (oi < nb) {
          const auto& ob = order[oi];
          if (!block_may_hold(ob.first, buf, thr)) {
            // in the sorted head every later block is bounded as high: go on after the head
            oi = oi < head ? head : oi + 1;
            continue;
          }
          scan_block(ob.second, xv, m, buf, thr);
          ++oi;
        }
      };
      if (T > 1) {
        // chunks of kChunk blocks (in `order`) are claimed by this thread and the helpers through one atomic
        // word (round << 32 | next chunk); the round is then closed and only chunks already claimed are waited
        // for, so a helper that is not running costs nothing (this thread simply scans every chunk itself)
        round_.order = order.data();
        round_.nb = nb;
        round_.m = m;
        round_.xv = xv;
        round_.nchunks.store((nb + kChunk - 1) / kChunk);
        {
          std::lock_guard<std::mutex> lk(mu_);
          ++epoch_;
          claim_.store(epoch_ << 32);
        }
        cv_.notify_all();
        double thr0 = std::numeric_limits<double>::infinity();
        heap.clear();
        for (;;) {
          uint64_t c = claim_.load();
          if ((c & 0xFFFFFFFFu) >= round_.nchunks.load()) break;
          if (claim_.compare_exchange_weak(c, c + 1)) scan_chunk(static_cast<size_t>(c & 0xFFFFFFFFu), heap, thr0);
        }
        claim_.store((epoch_ << 32) | 0xFFFFFFFFu);  // closed: no further claims in this round
        while (inflight_.load() > 0) std::this_thread::yield();
        for (auto& hb : bufs) {
          heap.insert(heap.end(), hb.begin(), hb.end());
          hb.clear();
        }
      } else {
        scan(heap);
      }
      if (heap.size() > want) {
        std::nth_element(heap.begin(), heap.begin() + static_cast<std::ptrdiff_t>(want - 1), heap.end(), cmp);
        heap.resize(want);
      }
      std::sort(heap.begin(), heap.end(), cmp);
      std::vector<int32_t> cnew{static_cast<int32_t>(xl)};
      for (const Node& nd : heap) {
        cnew.push_back(static_cast<int32_t>(nd.l));
        kill(nd.l);
      }
      n_alive -= heap.size();
      subs.push_back(std::move(cnew));
      if (n_alive * 2 < indexed && indexed > 64) {
        build(alive);
        indexed = n_alive;
      }
    }
    return subs;
  }
};
}  // namespace

std::vector<std::vector<int32_t>> Castle::split_k(const std::vector<int32_t>& members, Rng& rng) {
  // phi: buckets of tuples grouped by pid (in pid order, tuples by position)
  std::vector<int32_t> order(members);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return t_pid_[sz(a)] != t_pid_[sz(b)] ? t_pid_[sz(a)] < t_pid_[sz(b)] : t_pos_[sz(a)] < t_pos_[sz(b)];
  });
  // contiguous copies of the QI values (local index = rank in `order`), for the O(n^2/k) distance scans
  const size_t n = order.size(), dn = sz(dn_), dc = sz(dc_);
  std::vector<double> X(n * dn);
  std::vector<int32_t> Y(n * dc);
  for (size_t i = 0; i < n; ++i) {
    std::copy_n(t_num_.data() + sz(order[i]) * dn, dn, X.data() + i * dn);
    std::copy_n(t_cat_.data() + sz(order[i]) * dc, dc, Y.data() + i * dc);
  }
  // Buckets are contiguous runs of the active arrays (sorted by pid). Distances to x are computed for all
  // active tuples at once in a column layout (vectorisable; same arithmetic order as il_of_bounds), and the
  // arrays are compacted when half of them are dead, so each round costs O(alive * d).
  const size_t nb = [&] {
    size_t c = 0;
    for (size_t i = 0; i < n; ++i) c += (i == 0 || t_pid_[sz(order[i])] != t_pid_[sz(order[i - 1])]);
    return c;
  }();
  bool all_tables = p_.k > 1;
  for (size_t j = 0; j < dc; ++j) all_tables = all_tables && cat_tab_[j] != nullptr;
  if (nb == n && all_tables) {  // one tuple per person: indexed k-NN rounds (bit-identical, see SingletonKnn)
    SingletonKnn knn(n, dn, dc, static_cast<size_t>(p_.k), X.data(), Y.data(), inv_range_.data(), cat_tab_,
                     cat_L_, cat_top_, inv_d_, resolve_threads(n_threads_));
    std::vector<uint8_t> left;
    auto subs = knn.run(rng, left);
    for (auto& sv : subs)
      for (auto& v : sv) v = order[sz(v)];
    std::vector<std::vector<int32_t>> buckets;
    for (size_t i = 0; i < n; ++i)
      if (left[i]) buckets.push_back({order[i]});
    if (subs.empty()) return {members};
    return split_leftovers(std::move(subs), buckets);
  }
  std::vector<uint32_t> bid(n);
  for (size_t i = 0, b = 0; i < n; ++i) {
    if (i > 0 && t_pid_[sz(order[i])] != t_pid_[sz(order[i - 1])]) ++b;
    bid[i] = static_cast<uint32_t>(b);
  }
  std::vector<size_t> ids(n);  // active position -> local index
  for (size_t i = 0; i < n; ++i) ids[i] = i;
  std::vector<uint8_t> alive(n, 1);
  std::vector<size_t> b_start(nb), b_end(nb), b_alive(nb, 0);
  std::vector<double> XT, D;
  std::vector<int32_t> YT;
  size_t m = 0, n_alive = n;
  auto rebuild = [&]() {
    std::vector<size_t> nid;
    nid.reserve(n_alive);
    for (size_t q = 0; q < m || (m == 0 && q < ids.size()); ++q)
      if (alive[q]) nid.push_back(ids[q]);
    ids = std::move(nid);
    m = ids.size();
    alive.assign(m, 1);
    XT.resize(dn * m);
    YT.resize(dc * m);
    D.resize(m);
    for (size_t q = 0; q < m; ++q) {
      for (size_t j = 0; j < dn; ++j) XT[j * m + q] = X[ids[q] * dn + j];
      for (size_t j = 0; j < dc; ++j) YT[j * m + q] = Y[ids[q] * dc + j];
    }
    std::fill(b_alive.begin(), b_alive.end(), 0);
    for (size_t q = 0; q < m; ++q) {
      uint32_t b = bid[ids[q]];
      if (b_alive[b]++ == 0) b_start[b] = q;
      b_end[b] = q + 1;
    }
  };
  rebuild();
  std::vector<size_t> phi(nb);
  for (size_t i = 0; i < nb; ++i) phi[i] = i;
  const double* inv = inv_range_.data();
  auto take = [&](size_t b, size_t q) {
    alive[q] = 0;
    --b_alive[b];
    --n_alive;
  };
  const auto k = static_cast<size_t>(p_.k);
  std::vector<std::vector<int32_t>> subs;  // local indices until the end
  struct Node {
    double d;
    size_t rank;    // position in phi (ties: earlier bucket wins)
    size_t bucket;
    size_t pos;     // active position of the representative
  };
  auto cmp = [](const Node& a, const Node& b) { return a.d != b.d ? a.d < b.d : a.rank < b.rank; };
  std::vector<Node> heap;
  while (phi.size() >= k) {
    size_t bi = phi[rng.below(phi.size())];
    size_t ti = rng.below(b_alive[bi]);  // a uniformly random alive tuple of the bucket
    size_t xq = b_start[bi];
    for (;; ++xq) {
      if (alive[xq] && ti-- == 0) break;
    }
    const size_t xl = ids[xq];
    take(bi, xq);
    std::vector<int32_t> cnew{static_cast<int32_t>(xl)};
    if (k > 1) {
      // dist(x̂, x) = IL({x̂, x}) (A13) for every active tuple
      std::fill(D.begin(), D.end(), 0.0);
      for (size_t j = 0; j < dn; ++j) {
        const double xv = X[xl * dn + j], w = inv[j];
        const double* col = XT.data() + j * m;
        for (size_t q = 0; q < m; ++q) D[q] += std::fabs(col[q] - xv) * w;
      }
      for (size_t j = 0; j < dc; ++j) {
        const int32_t yv = Y[xl * dc + j];
        const int32_t* col = YT.data() + j * m;
        const double* tab = cat_tab_[j];
        if (tab) {
          const size_t L = cat_L_[j];
          for (size_t q = 0; q < m; ++q)
            D[q] += tab[static_cast<size_t>(std::min(col[q], yv)) * L + static_cast<size_t>(std::max(col[q], yv))];
        } else {
          for (size_t q = 0; q < m; ++q)
            if (col[q] != yv) D[q] += cat_term(static_cast<int64_t>(j), std::min(col[q], yv), std::max(col[q], yv));
        }
      }
      for (size_t q = 0; q < m; ++q) D[q] *= inv_d_;
    }
    heap.clear();
    double root = std::numeric_limits<double>::infinity();
    for (size_t r = 0; k > 1 && r < phi.size(); ++r) {
      size_t b = phi[r];
      if (b == bi) continue;
      // A14: the bucket's representative is its tuple nearest to x
      size_t bj = m;
      double bd = 0.0;
      for (size_t q = b_start[b]; q < b_end[b]; ++q) {
        if (!alive[q]) continue;
        if (bj == m || D[q] < bd) {
          bd = D[q];
          bj = q;
        }
      }
      if (heap.size() < k - 1) {
        heap.push_back(Node{bd, r, b, bj});
        std::push_heap(heap.begin(), heap.end(), cmp);
        if (heap.size() == k - 1) root = heap.front().d;
      } else if (bd < root) {  // ties keep the earlier bucket (rank order)
        std::pop_heap(heap.begin(), heap.end(), cmp);
        heap.back() = Node{bd, r, b, bj};
        std::push_heap(heap.begin(), heap.end(), cmp);
        root = heap.front().d;
      }
    }
    std::sort(heap.begin(), heap.end(), cmp);
    for (const Node& nd : heap) {
      cnew.push_back(static_cast<int32_t>(ids[nd.pos]));
      take(nd.bucket, nd.pos);
    }
    subs.push_back(std::move(cnew));
    phi.erase(std::remove_if(phi.begin(), phi.end(), [&](size_t bb) { return b_alive[bb] == 0; }), phi.end());
    if (n_alive * 2 < m && m > 64) rebuild();
  }
  // back to tuple slots; leftover buckets as lists of slots
  for (auto& sv : subs)
    for (auto& v : sv) v = order[sz(v)];
  std::vector<std::vector<int32_t>> buckets;
  for (size_t bb : phi) {
    buckets.emplace_back();
    for (size_t q = b_start[bb]; q < b_end[bb]; ++q)
      if (alive[q]) buckets.back().push_back(order[ids[q]]);
  }
  if (subs.empty()) return {members};
  return split_leftovers(std::move(subs), buckets);
}

/// split^k steps 21-24: each leftover bucket (fewer than k remain), in phi order, joins with all its tuples the
/// sub-cluster of least enlargement for its first tuple.
std::vector<std::vector<int32_t>> Castle::split_leftovers(std::vector<std::vector<int32_t>> subs,
                                                          const std::vector<std::vector<int32_t>>& buckets) {
  // Leftover buckets (fewer than k): all their tuples go to the sub-cluster of least enlargement. Boxes are kept
  // in flat arrays with each box's own IL sum (s0) cached and refreshed when the box grows (the same sums).
  const size_t dn = sz(dn_), dc = sz(dc_), ns = subs.size();
  std::vector<double> blo(ns * dn), bhi(ns * dn), s0(ns);
  std::vector<int32_t> bclo(ns * dc), bchi(ns * dc);
  auto grow = [&](size_t s, int32_t t) {
    for (size_t j = 0; j < dn; ++j) {
      blo[s * dn + j] = std::min(blo[s * dn + j], t_num_[sz(t) * dn + j]);
      bhi[s * dn + j] = std::max(bhi[s * dn + j], t_num_[sz(t) * dn + j]);
    }
    for (size_t j = 0; j < dc; ++j) {
      bclo[s * dc + j] = std::min(bclo[s * dc + j], t_cat_[sz(t) * dc + j]);
      bchi[s * dc + j] = std::max(bchi[s * dc + j], t_cat_[sz(t) * dc + j]);
    }
  };
  auto own = [&](size_t s) {
    double v = 0.0;
    for (size_t j = 0; j < dn; ++j) v += (bhi[s * dn + j] - blo[s * dn + j]) * inv_range_[j];
    for (size_t j = 0; j < dc; ++j) v += cat_fast(static_cast<int64_t>(j), bclo[s * dc + j], bchi[s * dc + j]);
    s0[s] = v;
  };
  for (size_t s = 0; s < ns; ++s) {
    int32_t f = subs[s][0];
    std::copy_n(t_num_.data() + sz(f) * dn, dn, blo.data() + s * dn);
    std::copy_n(t_num_.data() + sz(f) * dn, dn, bhi.data() + s * dn);
    std::copy_n(t_cat_.data() + sz(f) * dc, dc, bclo.data() + s * dc);
    std::copy_n(t_cat_.data() + sz(f) * dc, dc, bchi.data() + s * dc);
    for (int32_t t : subs[s]) grow(s, t);
    own(s);
  }
  for (size_t b = 0; b < buckets.size(); ++b) {
    const int32_t xt = buckets[b][0];
    const double* xv = t_num_.data() + sz(xt) * dn;
    const int32_t* yv = t_cat_.data() + sz(xt) * dc;
    size_t best = 0;
    double best_e = 0.0;
    for (size_t s = 0; s < ns; ++s) {
      double s1 = 0.0;
      const double* lo = blo.data() + s * dn;
      const double* hi = bhi.data() + s * dn;
      for (size_t j = 0; j < dn; ++j) s1 += (std::max(hi[j], xv[j]) - std::min(lo[j], xv[j])) * inv_range_[j];
      const int32_t* clo = bclo.data() + s * dc;
      const int32_t* chi = bchi.data() + s * dc;
      for (size_t j = 0; j < dc; ++j)
        s1 += cat_fast(static_cast<int64_t>(j), std::min(clo[j], yv[j]), std::max(chi[j], yv[j]));
      double e = (s1 - s0[s]) * inv_d_;
      if (s == 0 || (e < best_e && !approx_eq(e, best_e))) {
        best = s;
        best_e = e;
      }
    }
    for (int32_t t : buckets[b]) {
      subs[best].push_back(t);
      grow(best, t);
    }
    own(best);
  }
  return subs;
}

// ------------------------------------------------------------------------------------------------ split^l (§2.9, A17)
namespace {
struct Box {
  std::vector<double> lo, hi;
  std::vector<int32_t> clo, chi;
};
}  // namespace

std::vector<std::vector<int32_t>> Castle::split_l(const std::vector<int32_t>& members, Rng& rng) {
  std::vector<int32_t> order(members);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return t_pid_[sz(a)] != t_pid_[sz(b)] ? t_pid_[sz(a)] < t_pid_[sz(b)] : t_pos_[sz(a)] < t_pos_[sz(b)];
  });
  // A17(iii): a pid is represented by its earliest tuple.
  std::vector<int32_t> reps;
  for (size_t i = 0; i < order.size(); ++i)
    if (i == 0 || t_pid_[sz(order[i])] != t_pid_[sz(order[i - 1])]) reps.push_back(order[i]);
  std::stable_sort(reps.begin(), reps.end(), [&](int32_t a, int32_t b) { return t_sa_[sz(a)] < t_sa_[sz(b)]; });
  std::vector<std::vector<int32_t>> buckets;
  for (size_t i = 0; i < reps.size(); ++i) {
    if (i == 0 || t_sa_[sz(reps[i])] != t_sa_[sz(reps[i - 1])]) buckets.emplace_back();
    buckets.back().push_back(reps[i]);
  }
  std::vector<size_t> phi(buckets.size());
  for (size_t i = 0; i < phi.size(); ++i) phi[i] = i;
  const auto k = static_cast<size_t>(p_.k);
  const auto l = static_cast<size_t>(p_.l);
  std::vector<std::vector<int32_t>> subs;
  std::vector<Box> boxes;
  auto box_of = [&](int32_t f) {
    Box b;
    b.lo.assign(t_num_.data() + sz(f) * sz(dn_), (t_num_.data() + sz(f) * sz(dn_)) + dn_);
    b.hi = b.lo;
    b.clo.assign(t_cat_.data() + sz(f) * sz(dc_), (t_cat_.data() + sz(f) * sz(dc_)) + dc_);
    b.chi = b.clo;
    return b;
  };
  auto box_add = [&](Box& b, int32_t t) {
    for (int64_t j = 0; j < dn_; ++j) {
      b.lo[sz(j)] = std::min(b.lo[sz(j)], t_num_[sz(t) * sz(dn_) + sz(j)]);
      b.hi[sz(j)] = std::max(b.hi[sz(j)], t_num_[sz(t) * sz(dn_) + sz(j)]);
    }
    for (int64_t j = 0; j < dc_; ++j) {
      b.clo[sz(j)] = std::min(b.clo[sz(j)], t_cat_[sz(t) * sz(dc_) + sz(j)]);
      b.chi[sz(j)] = std::max(b.chi[sz(j)], t_cat_[sz(t) * sz(dc_) + sz(j)]);
    }
  };
  auto box_il = [&](const Box& b) { return il_of_bounds(b.lo.data(), b.hi.data(), b.clo.data(), b.chi.data()); };
  auto enl = [&](const Box& b, int32_t t) {
    Box c = b;
    box_add(c, t);
    return box_il(c) - box_il(b);
  };
  auto box_union = [&](const Box& a, const Box& b) {
    Box c = a;
    for (int64_t j = 0; j < dn_; ++j) {
      c.lo[sz(j)] = std::min(c.lo[sz(j)], b.lo[sz(j)]);
      c.hi[sz(j)] = std::max(c.hi[sz(j)], b.hi[sz(j)]);
    }
    for (int64_t j = 0; j < dc_; ++j) {
      c.clo[sz(j)] = std::min(c.clo[sz(j)], b.clo[sz(j)]);
      c.chi[sz(j)] = std::max(c.chi[sz(j)], b.chi[sz(j)]);
    }
    return c;
  };
  std::vector<std::pair<double, int32_t>> keyed;
  while (phi.size() >= l) {
    size_t sum = 0;
    std::vector<size_t> frozen(buckets.size(), 0);
    for (size_t b : phi) {
      frozen[b] = buckets[b].size();
      sum += frozen[b];
    }
    if (sum < k) break;
    size_t bi = phi[rng.below(phi.size())];
    size_t ti = rng.below(buckets[bi].size());
    int32_t x = buckets[bi][ti];
    buckets[bi].erase(buckets[bi].begin() + static_cast<std::ptrdiff_t>(ti));
    std::vector<int32_t> sub{x};
    Box box = box_of(x);
    for (size_t b : phi) {
      auto& Bh = buckets[b];
      if (Bh.empty()) continue;
      size_t want = std::max<size_t>(1, (k * frozen[b] + sum - 1) / sum);  // A17(i): ceil, at least 1
      size_t nb = std::min(Bh.size(), want);
      keyed.clear();
      for (int32_t y : Bh) keyed.emplace_back(enl(box, y), y);
      auto by = [&](const std::pair<double, int32_t>& a, const std::pair<double, int32_t>& c) {
        return a.first != c.first ? a.first < c.first : t_pos_[sz(a.second)] < t_pos_[sz(c.second)];
      };
      std::sort(keyed.begin(), keyed.end(), by);
      std::vector<int32_t> rest;
      for (size_t q = 0; q < keyed.size(); ++q) {
        if (q < nb) {
          sub.push_back(keyed[q].second);
          box_add(box, keyed[q].second);
        } else {
          rest.push_back(keyed[q].second);
        }
      }
      std::sort(rest.begin(), rest.end(), [&](int32_t a, int32_t c) { return t_pid_[sz(a)] < t_pid_[sz(c)]; });
      Bh = std::move(rest);
    }
    subs.push_back(std::move(sub));
    boxes.push_back(std::move(box));
    phi.erase(std::remove_if(phi.begin(), phi.end(), [&](size_t b) { return buckets[b].empty(); }), phi.end());
  }
  if (subs.empty()) return {members};  // A17(iv)
  // Leftover representatives, one by one, to the sub-cluster of least enlargement.
  for (size_t b : phi) {
    for (int32_t y : buckets[b]) {
      size_t best = 0;
      double best_e = 0.0;
      for (size_t s = 0; s < subs.size(); ++s) {
        double e = enl(boxes[s], y);
        if (s == 0 || (e < best_e && !approx_eq(e, best_e))) {
          best = s;
          best_e = e;
        }
      }
      subs[best].push_back(y);
      box_add(boxes[best], y);
    }
  }
  // Every tuple of a represented pid joins its representative (set semantics, A17(v)).
  std::unordered_map<int64_t, size_t> where;
  for (size_t s = 0; s < subs.size(); ++s)
    for (int32_t y : subs[s]) where[t_pid_[sz(y)]] = s;
  std::vector<std::vector<int32_t>> full(subs.size());
  for (int32_t t : order) {
    size_t s = where.at(t_pid_[sz(t)]);
    full[s].push_back(t);
  }
  // A17 final check: merge a sub-cluster short of k pids or l SA values into its nearest sibling.
  auto ok = [&](const std::vector<int32_t>& g) {
    std::vector<int64_t> ps;
    std::vector<int32_t> ss;
    for (int32_t t : g) {
      ps.push_back(t_pid_[sz(t)]);
      ss.push_back(t_sa_[sz(t)]);
    }
    std::sort(ps.begin(), ps.end());
    std::sort(ss.begin(), ss.end());
    auto np = static_cast<size_t>(std::unique(ps.begin(), ps.end()) - ps.begin());
    auto ns = static_cast<size_t>(std::unique(ss.begin(), ss.end()) - ss.begin());
    return np >= k && ns >= l;
  };
  std::vector<Box> fb;
  for (auto& g : full) {
    Box b = box_of(g[0]);
    for (int32_t t : g) box_add(b, t);
    fb.push_back(std::move(b));
  }
  for (;;) {
    if (full.size() <= 1) break;
    size_t bad = full.size();
    for (size_t s = 0; s < full.size(); ++s)
      if (!ok(full[s])) {
        bad = s;
        break;
      }
    if (bad == full.size()) break;
    size_t best = bad == 0 ? 1 : 0;
    double best_e = std::numeric_limits<double>::infinity();
    double base = box_il(fb[bad]);
    for (size_t s = 0; s < full.size(); ++s) {
      if (s == bad) continue;
      double e = box_il(box_union(fb[bad], fb[s])) - base;
      if (e < best_e && !approx_eq(e, best_e)) {
        best = s;
        best_e = e;
      }
    }
    full[best].insert(full[best].end(), full[bad].begin(), full[bad].end());
    fb[best] = box_union(fb[best], fb[bad]);
    full.erase(full.begin() + static_cast<std::ptrdiff_t>(bad));
    fb.erase(fb.begin() + static_cast<std::ptrdiff_t>(bad));
  }
  return full;
}

CastleEvents Castle::take_events() {
  CastleEvents out = std::move(ev_);
  ev_ = CastleEvents{};
  // the next batch usually emits about as many events: reserve once instead of growing by doubling
  auto res = [](auto& v, const auto& like) { v.reserve(like.size()); };
  res(ev_.position, out.position);
  res(ev_.pid, out.pid);
  res(ev_.emitted_at, out.emitted_at);
  res(ev_.gen_id, out.gen_id);
  res(ev_.mode, out.mode);
  res(ev_.num_lo, out.num_lo);
  res(ev_.num_hi, out.num_hi);
  res(ev_.cat_node, out.cat_node);
  res(ev_.g_id, out.g_id);
  res(ev_.g_pids, out.g_pids);
  res(ev_.g_tuples, out.g_tuples);
  res(ev_.g_diversity, out.g_diversity);
  res(ev_.g_il, out.g_il);
  res(ev_.g_tau, out.g_tau);
  res(ev_.g_kept, out.g_kept);
  return out;
}

}  // namespace anoncore::stream

// CASTLE (spec streams-castle-sabrew.md §2), the clustering room: setup, information loss, the tuple and cluster
// slabs with Gamma's mirror, the main loop (arrival, expiry), delayConstraint with reuse, merge and suppression,
// and the release of clusters. Section numbers below refer to that spec. The other rooms: castle_select.cpp
// (bestSelection), castle_split.cpp (split^k, split^l; the singleton kNN index is in knn/), castle_checkpoint.cpp.
#include "anoncore/stream/castle.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "anoncore/core/status.hpp"
#include "castle_internal.hpp"

namespace anoncore::stream {

using detail::approx_eq;
using detail::kNaN;
using detail::kRowMaxLeaves;
using detail::kTableMaxLeaves;
using detail::sz;

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

// CASTLE, the split room: split^k (spec streams-castle-sabrew.md §2.8) with its leftover step, and split^l (§2.9,
// A17). One tuple per person goes through the indexed k-NN rounds of knn/singleton_knn.hpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

#include "anoncore/core/parallel.hpp"
#include "anoncore/knn/singleton_knn.hpp"
#include "anoncore/stream/castle.hpp"
#include "castle_internal.hpp"

namespace anoncore::stream {

using detail::approx_eq;
using detail::sz;

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
    knn::SingletonKnnInput in;
    in.n = n;
    in.dn = dn;
    in.dc = dc;
    in.k = static_cast<size_t>(p_.k);
    in.X = X.data();
    in.Y = Y.data();
    in.inv = inv_range_.data();
    in.tab = &cat_tab_;
    in.L = &cat_L_;
    in.top = &cat_top_;
    in.inv_d = inv_d_;
    in.threads = resolve_threads(n_threads_);
    std::vector<uint8_t> left;
    auto subs = knn::singleton_knn_rounds(in, rng, left);
    for (auto& sv : subs)
      for (auto& v : sv) v = order[sz(v)];
    std::vector<std::vector<int32_t>> buckets;
    for (size_t i = 0; i < n; ++i)
      if (left[i]) buckets.push_back({order[i]});
    if (subs.empty()) return {members};
    return split_leftovers(std::move(subs), buckets);
  }
  return split_k_buckets(members, order, X, Y, nb, rng);
}

/// split^k steps 3-24 when some person has several tuples: rounds over phi (buckets of one person's tuples), the
/// representative of a bucket being its tuple nearest to x (A14); brute-force distances over the active tuples.
std::vector<std::vector<int32_t>> Castle::split_k_buckets(const std::vector<int32_t>& members,
                                                          const std::vector<int32_t>& order,
                                                          const std::vector<double>& X, const std::vector<int32_t>& Y,
                                                          size_t nb, Rng& rng) {
  const size_t n = order.size(), dn = sz(dn_), dc = sz(dc_);
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

/// Minimal boxes over tuple slots (numeric ranges, categorical leaf ranges) and their IL, computed by `il`
/// (Castle::il_of_bounds).
template <class IL>
struct BoxOps {
  const std::vector<double>& num;
  const std::vector<int32_t>& cat;
  size_t dn, dc;
  IL il;

  Box of(int32_t f) const {
    Box b;
    b.lo.assign(num.data() + sz(f) * dn, num.data() + sz(f) * dn + dn);
    b.hi = b.lo;
    b.clo.assign(cat.data() + sz(f) * dc, cat.data() + sz(f) * dc + dc);
    b.chi = b.clo;
    return b;
  }
  void add(Box& b, int32_t t) const {
    for (size_t j = 0; j < dn; ++j) {
      b.lo[j] = std::min(b.lo[j], num[sz(t) * dn + j]);
      b.hi[j] = std::max(b.hi[j], num[sz(t) * dn + j]);
    }
    for (size_t j = 0; j < dc; ++j) {
      b.clo[j] = std::min(b.clo[j], cat[sz(t) * dc + j]);
      b.chi[j] = std::max(b.chi[j], cat[sz(t) * dc + j]);
    }
  }
  double cost(const Box& b) const { return il(b.lo.data(), b.hi.data(), b.clo.data(), b.chi.data()); }
  /// IL(b ∪ {t}) - IL(b).
  double enl(const Box& b, int32_t t) const {
    Box c = b;
    add(c, t);
    return cost(c) - cost(b);
  }
  Box unite(const Box& a, const Box& b) const {
    Box c = a;
    for (size_t j = 0; j < dn; ++j) {
      c.lo[j] = std::min(c.lo[j], b.lo[j]);
      c.hi[j] = std::max(c.hi[j], b.hi[j]);
    }
    for (size_t j = 0; j < dc; ++j) {
      c.clo[j] = std::min(c.clo[j], b.clo[j]);
      c.chi[j] = std::max(c.chi[j], b.chi[j]);
    }
    return c;
  }
};

/// A17 final check: merge a sub-cluster short of k pids or l SA values into the sibling of least enlargement,
/// until none is short (or one is left).
template <class IL>
void merge_short_subclusters(std::vector<std::vector<int32_t>>& full, const BoxOps<IL>& box,
                             const std::vector<int64_t>& t_pid, const std::vector<int32_t>& t_sa, size_t k, size_t l) {
  auto ok = [&](const std::vector<int32_t>& g) {
    std::vector<int64_t> ps;
    std::vector<int32_t> ss;
    for (int32_t t : g) {
      ps.push_back(t_pid[sz(t)]);
      ss.push_back(t_sa[sz(t)]);
    }
    std::sort(ps.begin(), ps.end());
    std::sort(ss.begin(), ss.end());
    auto np = static_cast<size_t>(std::unique(ps.begin(), ps.end()) - ps.begin());
    auto ns = static_cast<size_t>(std::unique(ss.begin(), ss.end()) - ss.begin());
    return np >= k && ns >= l;
  };
  std::vector<Box> fb;
  for (auto& g : full) {
    Box b = box.of(g[0]);
    for (int32_t t : g) box.add(b, t);
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
    double base = box.cost(fb[bad]);
    for (size_t s = 0; s < full.size(); ++s) {
      if (s == bad) continue;
      double e = box.cost(box.unite(fb[bad], fb[s])) - base;
      if (e < best_e && !approx_eq(e, best_e)) {
        best = s;
        best_e = e;
      }
    }
    full[best].insert(full[best].end(), full[bad].begin(), full[bad].end());
    fb[best] = box.unite(fb[best], fb[bad]);
    full.erase(full.begin() + static_cast<std::ptrdiff_t>(bad));
    fb.erase(fb.begin() + static_cast<std::ptrdiff_t>(bad));
  }
}
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
  auto il = [this](const double* a, const double* b, const int32_t* c, const int32_t* d) {
    return il_of_bounds(a, b, c, d);
  };
  const BoxOps<decltype(il)> box{t_num_, t_cat_, sz(dn_), sz(dc_), il};
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
    Box bx = box.of(x);
    for (size_t b : phi) {
      auto& Bh = buckets[b];
      if (Bh.empty()) continue;
      size_t want = std::max<size_t>(1, (k * frozen[b] + sum - 1) / sum);  // A17(i): ceil, at least 1
      size_t nb = std::min(Bh.size(), want);
      keyed.clear();
      for (int32_t y : Bh) keyed.emplace_back(box.enl(bx, y), y);
      auto by = [&](const std::pair<double, int32_t>& a, const std::pair<double, int32_t>& c) {
        return a.first != c.first ? a.first < c.first : t_pos_[sz(a.second)] < t_pos_[sz(c.second)];
      };
      std::sort(keyed.begin(), keyed.end(), by);
      std::vector<int32_t> rest;
      for (size_t q = 0; q < keyed.size(); ++q) {
        if (q < nb) {
          sub.push_back(keyed[q].second);
          box.add(bx, keyed[q].second);
        } else {
          rest.push_back(keyed[q].second);
        }
      }
      std::sort(rest.begin(), rest.end(), [&](int32_t a, int32_t c) { return t_pid_[sz(a)] < t_pid_[sz(c)]; });
      Bh = std::move(rest);
    }
    subs.push_back(std::move(sub));
    boxes.push_back(std::move(bx));
    phi.erase(std::remove_if(phi.begin(), phi.end(), [&](size_t b) { return buckets[b].empty(); }), phi.end());
  }
  if (subs.empty()) return {members};  // A17(iv)
  // Leftover representatives, one by one, to the sub-cluster of least enlargement.
  for (size_t b : phi) {
    for (int32_t y : buckets[b]) {
      size_t best = 0;
      double best_e = 0.0;
      for (size_t s = 0; s < subs.size(); ++s) {
        double e = box.enl(boxes[s], y);
        if (s == 0 || (e < best_e && !approx_eq(e, best_e))) {
          best = s;
          best_e = e;
        }
      }
      subs[best].push_back(y);
      box.add(boxes[best], y);
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
  merge_short_subclusters(full, box, t_pid_, t_sa_, k, l);
  return full;
}

}  // namespace anoncore::stream

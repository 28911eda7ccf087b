#include "anoncore/twophase/burel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace anoncore::twophase {
namespace {
/// 1 + min{beta, -ln p} (enhanced) or 1 + beta (basic): the factor of f(p) = p * factor.
double bound_factor(double p, double beta, bool enhanced) {
  if (!enhanced) return 1.0 + beta;
  return 1.0 + std::min(beta, -std::log(p));
}
}  // namespace

double burel_f(double p, double beta, bool enhanced) { return p * bound_factor(p, beta, enhanced); }

BurelBuckets dp_partition(Span<int64_t> reference, double beta, bool enhanced, bool strict) {
  BurelBuckets out;
  const int64_t m = reference.size;
  int64_t n = 0;
  for (int64_t v = 0; v < m; ++v) {
    n += reference[v];
    if (reference[v] > 0) out.order.push_back(static_cast<int32_t>(v));
  }
  std::stable_sort(out.order.begin(), out.order.end(),
                   [&](int32_t a, int32_t b) { return reference[a] < reference[b]; });
  const auto mp = static_cast<int64_t>(out.order.size());
  auto cnt = [&](int64_t i) { return reference[out.order[static_cast<size_t>(i - 1)]]; };  // 1-based
  // Limit of a bucket starting at value b (1-based): N_b * factor(p_b), in count space.
  std::vector<double> limit(static_cast<size_t>(mp + 1), 0.0);
  for (int64_t b = 1; b <= mp; ++b) {
    const double nb = static_cast<double>(cnt(b));
    limit[static_cast<size_t>(b)] = nb * bound_factor(nb / static_cast<double>(n), beta, enhanced);
  }
  auto combinable = [&](int64_t run, int64_t b) {
    const double r = static_cast<double>(run), lim = limit[static_cast<size_t>(b)];
    return strict ? r < lim * (1.0 - kBurelTolerance) : r <= lim * (1.0 + kBurelTolerance);
  };
  out.dp_n.assign(static_cast<size_t>(mp + 1), 0);
  out.dp_s.assign(static_cast<size_t>(mp + 1), 0);
  for (int64_t e = 1; e <= mp; ++e) {
    auto& ne = out.dp_n[static_cast<size_t>(e)];
    auto& se = out.dp_s[static_cast<size_t>(e)];
    ne = out.dp_n[static_cast<size_t>(e - 1)] + 1;
    se = e;
    int64_t run = cnt(e);
    for (int64_t b = e - 1; b > 0; --b) {
      run += cnt(b);
      if (!combinable(run, b)) break;  // extending further left lowers p_min and raises the sum
      if (out.dp_n[static_cast<size_t>(b - 1)] + 1 < ne) {
        ne = out.dp_n[static_cast<size_t>(b - 1)] + 1;
        se = b;
      }
    }
  }
  // Backtrack; buckets are numbered in ascending frequency order.
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t e = mp; e > 0;) {
    const int64_t b = out.dp_s[static_cast<size_t>(e)];
    runs.emplace_back(b, e);
    e = b - 1;
  }
  std::reverse(runs.begin(), runs.end());
  out.bucket_of.assign(static_cast<size_t>(m), -1);
  for (size_t j = 0; j < runs.size(); ++j) {
    int64_t total = 0;
    for (int64_t i = runs[j].first; i <= runs[j].second; ++i) {
      out.bucket_of[static_cast<size_t>(out.order[static_cast<size_t>(i - 1)])] = static_cast<int32_t>(j);
      total += cnt(i);
    }
    const int64_t nmin = cnt(runs[j].first);
    out.size.push_back(total);
    out.min_count.push_back(nmin);
    out.bound.push_back(burel_f(static_cast<double>(nmin) / static_cast<double>(n), beta, enhanced));
  }
  return out;
}

EcLeaves burel_ec_sizes(const BurelBuckets& phi) {
  const int64_t B = phi.n_buckets();
  const Span<int64_t> totals{phi.size.data(), B};
  auto accept = [&](Matrix<int64_t> kids, MutSpan<uint8_t> ok) {
    for (int64_t r = 0; r < kids.rows; ++r) {
      int64_t size = 0;
      for (int64_t j = 0; j < B; ++j) size += kids(r, j);
      bool good = size > 0;
      for (int64_t j = 0; good && j < B; ++j)
        good = static_cast<double>(kids(r, j)) <= phi.bound[static_cast<size_t>(j)] * static_cast<double>(size) *
                                                      (1.0 + kBurelTolerance);
      ok[r] = good ? 1 : 0;
    }
  };
  return ec_size_tree(totals, accept);
}

EcLeaves burel_ec_sizes_balanced(const BurelBuckets& phi) {
  const int64_t B = phi.n_buckets();
  EcLeaves out;
  out.n_buckets = B;
  out.n_nodes = 1;
  auto eligible = [&](const int64_t* x, int64_t size) {
    if (size <= 0) return false;
    for (int64_t j = 0; j < B; ++j)
      if (static_cast<double>(x[j]) > phi.bound[static_cast<size_t>(j)] * static_cast<double>(size) * (1.0 + kBurelTolerance))
        return false;
    return true;
  };
  std::vector<int64_t> lo(static_cast<size_t>(B)), hi(static_cast<size_t>(B)), x(static_cast<size_t>(B)),
      y(static_cast<size_t>(B));
  std::vector<double> want(static_cast<size_t>(B));
  std::vector<int64_t> order(static_cast<size_t>(B));
  // Split `a` (size S) at left size L if possible: fills x (left) and y (right).
  auto try_size = [&](const int64_t* a, int64_t S, int64_t L) {
    const int64_t R = S - L;
    int64_t slo = 0, shi = 0;
    for (int64_t j = 0; j < B; ++j) {
      const double f = phi.bound[static_cast<size_t>(j)] * (1.0 + kBurelTolerance);
      const auto capl = static_cast<int64_t>(std::floor(f * static_cast<double>(L)));
      const auto capr = static_cast<int64_t>(std::floor(f * static_cast<double>(R)));
      lo[static_cast<size_t>(j)] = std::max<int64_t>(0, a[j] - capr);
      hi[static_cast<size_t>(j)] = std::min<int64_t>(a[j], capl);
      if (lo[static_cast<size_t>(j)] > hi[static_cast<size_t>(j)]) return false;
      slo += lo[static_cast<size_t>(j)];
      shi += hi[static_cast<size_t>(j)];
    }
    if (slo > L || shi < L) return false;
    int64_t sum = 0;
    for (int64_t j = 0; j < B; ++j) {
      const auto js = static_cast<size_t>(j);
      want[js] = static_cast<double>(a[j]) * static_cast<double>(L) / static_cast<double>(S);
      x[js] = std::clamp(static_cast<int64_t>(std::floor(want[js])), lo[js], hi[js]);
      sum += x[js];
    }
    // Move the remaining difference one unit at a time, largest shortfall (resp. excess) first, ties by bucket.
    std::iota(order.begin(), order.end(), int64_t{0});
    if (sum < L) {
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        return want[static_cast<size_t>(p)] - static_cast<double>(x[static_cast<size_t>(p)]) >
               want[static_cast<size_t>(q)] - static_cast<double>(x[static_cast<size_t>(q)]);
      });
      while (sum < L)
        for (int64_t j : order) {
          if (sum == L) break;
          const auto js = static_cast<size_t>(j);
          if (x[js] < hi[js]) { ++x[js]; ++sum; }
        }
    } else if (sum > L) {
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        return static_cast<double>(x[static_cast<size_t>(p)]) - want[static_cast<size_t>(p)] >
               static_cast<double>(x[static_cast<size_t>(q)]) - want[static_cast<size_t>(q)];
      });
      while (sum > L)
        for (int64_t j : order) {
          if (sum == L) break;
          const auto js = static_cast<size_t>(j);
          if (x[js] > lo[js]) { --x[js]; --sum; }
        }
    }
    for (int64_t j = 0; j < B; ++j) y[static_cast<size_t>(j)] = a[j] - x[static_cast<size_t>(j)];
    return eligible(x.data(), L) && eligible(y.data(), R);
  };
  // Depth-first, left child first; nodes on an explicit stack (arrays copied).
  std::vector<std::vector<int64_t>> stack{std::vector<int64_t>(phi.size.begin(), phi.size.end())};
  while (!stack.empty()) {
    std::vector<int64_t> a = std::move(stack.back());
    stack.pop_back();
    int64_t S = 0;
    for (int64_t v : a) S += v;
    bool split = false;
    if (S >= 2) {
      const int64_t half = S / 2, reach = std::max<int64_t>(1, S / 4);
      for (int64_t k = 0; k <= reach && !split; ++k) {
        for (int64_t L : {half - k, half + k + (S % 2)}) {
          if (L < 1 || L > S - 1) continue;
          if (try_size(a.data(), S, L)) {
            split = true;
            break;
          }
        }
      }
    }
    if (!split) {
      if (S >= 2) ++out.n_rejected;
      out.counts.insert(out.counts.end(), a.begin(), a.end());
      continue;
    }
    out.n_nodes += 2;
    stack.push_back(y);  // right, popped after the left subtree
    stack.push_back(x);
  }
  return out;
}

BurelOutput burel(Span<int32_t> sa, int64_t m, Matrix<int32_t> qi, const CoordTables& coords, int64_t max_card,
                  const BurelConfig& cfg) {
  const MaterializeConfig mc =
      materialize_config(cfg, KeyMode::PerCell, cfg.slices ? Retrieval::Slices : Retrieval::Hilbert);
  return two_phase<BurelBuckets>(
      sa, m, qi, coords, max_card,
      [&](Span<int64_t> counts) { return dp_partition(counts, cfg.beta, cfg.enhanced, cfg.strict); },
      [&](const BurelBuckets& b) { return cfg.balanced ? burel_ec_sizes_balanced(b) : burel_ec_sizes(b); }, mc);
}

// ------------------------------------------------------------------------------------------- merge
namespace {

struct MergeState {
  const MergeInput& in;
  int64_t d, m, P;
  std::vector<int64_t> hist, size;         // per class (C x m), sizes
  std::vector<int32_t> lo, hi;             // per class boxes (C x d)
  std::vector<double> il;                  // per class per dim loss (C x d)
  std::vector<int64_t> ref_prefix;         // (m + 1)
  std::vector<double> group_bound;         // (G): -ln rho1 per group

  int32_t lca_leaves(int64_t j, int32_t a, int32_t b) const {
    const int64_t off = in.node_offsets[j];
    int32_t cur = a;
    while (true) {
      const int32_t s = in.leaf_start[off + cur], c = in.leaf_count[off + cur];
      if (s <= a && s + c - 1 >= b) return c;
      cur = in.parent[off + cur];
    }
  }
  double dim_loss(int64_t j, int32_t a, int32_t b) const {
    if (in.categorical[j]) {
      if (a == b) return 0.0;
      const int32_t c = lca_leaves(j, a, b);
      return c <= 1 ? 0.0 : static_cast<double>(c) / static_cast<double>(in.n_leaves[j]);
    }
    return in.coords.at(b, j) - in.coords.at(a, j);
  }
  /// Whether class c satisfies every group's enhanced bound (integer gains as the audit: (rho2 - rho1) / rho1).
  bool complies(int64_t c) const {
    const int64_t* h = hist.data() + c * m;
    const int64_t Q = size[static_cast<size_t>(c)];
    for (int64_t g = 0; g < in.groups.rows; ++g) {
      const int32_t a = in.groups(g, 0), b = in.groups(g, 1);
      int64_t x = 0;
      for (int32_t v = a; v <= b; ++v) x += h[v];
      const int64_t r = ref_prefix[static_cast<size_t>(b + 1)] - ref_prefix[static_cast<size_t>(a)];
      if (r == 0) {
        if (x > 0) return false;
        continue;
      }
      const int64_t num = x * P - r * Q;
      if (num <= 0) continue;
      const double gain = static_cast<double>(num) / (static_cast<double>(r) * static_cast<double>(Q));
      if (gain > group_bound[static_cast<size_t>(g)]) return false;
    }
    return true;
  }
};

}  // namespace

MergeOutput burel_merge(const MergeInput& in) {
  MergeOutput out;
  const int64_t C = in.hist.rows, m = in.hist.cols, d = in.box_lo.cols;
  MergeState st{in, d, m, 0, {}, {}, {}, {}, {}, {}, {}};
  st.hist.assign(in.hist.data, in.hist.data + C * m);
  st.size.assign(static_cast<size_t>(C), 0);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t v = 0; v < m; ++v) st.size[static_cast<size_t>(c)] += in.hist(c, v);
  st.ref_prefix.assign(static_cast<size_t>(m + 1), 0);
  for (int64_t v = 0; v < m; ++v) st.ref_prefix[static_cast<size_t>(v + 1)] = st.ref_prefix[static_cast<size_t>(v)] + in.reference[v];
  st.P = st.ref_prefix[static_cast<size_t>(m)];
  st.group_bound.resize(static_cast<size_t>(in.groups.rows));
  for (int64_t g = 0; g < in.groups.rows; ++g) {
    const int64_t r = st.ref_prefix[static_cast<size_t>(in.groups(g, 1) + 1)] -
                      st.ref_prefix[static_cast<size_t>(in.groups(g, 0))];
    const double rho = static_cast<double>(r) / static_cast<double>(st.P);
    st.group_bound[static_cast<size_t>(g)] = r > 0 ? std::min(in.beta, -std::log(rho)) : 0.0;
  }
  st.lo.assign(in.box_lo.data, in.box_lo.data + C * d);
  st.hi.assign(in.box_hi.data, in.box_hi.data + C * d);
  st.il.assign(static_cast<size_t>(C * d), 0.0);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < d; ++j)
      st.il[static_cast<size_t>(c * d + j)] = st.dim_loss(j, st.lo[static_cast<size_t>(c * d + j)], st.hi[static_cast<size_t>(c * d + j)]);
  // KD-tree over the classes' box centres (built once). Every node keeps the union of its classes' boxes
  // (min lo, max hi codes per dimension, widened as boxes grow through merges) and the smallest per-dimension
  // loss of its classes at build time (a valid lower bound: losses only grow). A best-first search visits
  // nodes by the lower bound sum_j max(0, numeric gap between the query box and the node's union box,
  // min loss_j - query loss_j) and stops when the bound exceeds the best exact increase found. The result is the
  // linear scan's: smallest increase, ties to the smallest class index.
  struct KdNode {
    int64_t begin = 0, end = 0, left = -1, right = -1, parent = -1;
  };
  std::vector<KdNode> nodes;
  std::vector<int32_t> nlo, nhi;   // per node x d
  std::vector<double> nminil;      // per node x d
  std::vector<int64_t> perm(static_cast<size_t>(C)), leaf_of(static_cast<size_t>(C), -1);
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::vector<double> centre(static_cast<size_t>(C * d));
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < d; ++j) {
      const auto k = static_cast<size_t>(c * d + j);
      centre[k] = 0.5 * (in.coords.at(st.lo[k], j) + in.coords.at(st.hi[k], j));
    }
  constexpr int64_t kLeaf = 8;
  {
    nodes.push_back({0, C, -1, -1, -1});
    std::vector<int64_t> work{0};
    while (!work.empty()) {
      const int64_t id = work.back();
      work.pop_back();
      const int64_t b = nodes[static_cast<size_t>(id)].begin, e = nodes[static_cast<size_t>(id)].end;
      if (e - b <= kLeaf) {
        for (int64_t i = b; i < e; ++i) leaf_of[static_cast<size_t>(perm[static_cast<size_t>(i)])] = id;
        continue;
      }
      int64_t best_j = 0;
      double best_w = -1.0;
      for (int64_t j = 0; j < d; ++j) {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (int64_t i = b; i < e; ++i) {
          const double x = centre[static_cast<size_t>(perm[static_cast<size_t>(i)] * d + j)];
          lo = std::min(lo, x);
          hi = std::max(hi, x);
        }
        if (hi - lo > best_w) {
          best_w = hi - lo;
          best_j = j;
        }
      }
      const int64_t mid = b + (e - b) / 2;
      std::nth_element(perm.begin() + b, perm.begin() + mid, perm.begin() + e, [&](int64_t x, int64_t y) {
        const double cx = centre[static_cast<size_t>(x * d + best_j)], cy = centre[static_cast<size_t>(y * d + best_j)];
        return cx < cy || (cx == cy && x < y);
      });
      const auto l = static_cast<int64_t>(nodes.size());
      nodes.push_back({b, mid, -1, -1, id});
      nodes.push_back({mid, e, -1, -1, id});
      nodes[static_cast<size_t>(id)].left = l;
      nodes[static_cast<size_t>(id)].right = l + 1;
      work.push_back(l + 1);
      work.push_back(l);
    }
    const auto nn = nodes.size();
    nlo.assign(nn * static_cast<size_t>(d), INT32_MAX);
    nhi.assign(nn * static_cast<size_t>(d), INT32_MIN);
    nminil.assign(nn * static_cast<size_t>(d), std::numeric_limits<double>::infinity());
    for (int64_t c = 0; c < C; ++c)
      for (int64_t x = leaf_of[static_cast<size_t>(c)]; x >= 0; x = nodes[static_cast<size_t>(x)].parent)
        for (int64_t j = 0; j < d; ++j) {
          const auto k = static_cast<size_t>(x * d + j), ck = static_cast<size_t>(c * d + j);
          nlo[k] = std::min(nlo[k], st.lo[ck]);
          nhi[k] = std::max(nhi[k], st.hi[ck]);
          nminil[k] = std::min(nminil[k], st.il[ck]);
        }
  }
  std::vector<int64_t> parent(static_cast<size_t>(C));
  std::iota(parent.begin(), parent.end(), int64_t{0});
  std::vector<uint8_t> alive(static_cast<size_t>(C), 1);
  int64_t n_alive = C;
  using Entry = std::pair<double, int64_t>;  // (lower bound, node), smallest first, ties by node id
  std::vector<Entry> heap;
  auto node_bound = [&](int64_t x, const double* il1, const int32_t* lo1, const int32_t* hi1) {
    double lb = 0.0;
    for (int64_t j = 0; j < d; ++j) {
      const auto k = static_cast<size_t>(x * d + j);
      double v = nminil[k] - il1[j];
      if (!in.categorical[j]) {
        if (nlo[k] > hi1[j]) v = std::max(v, in.coords.at(nlo[k], j) - in.coords.at(hi1[j], j));
        else if (nhi[k] < lo1[j]) v = std::max(v, in.coords.at(lo1[j], j) - in.coords.at(nhi[k], j));
      }
      lb += std::max(v, 0.0);
    }
    return lb;
  };
  for (int64_t c = 0; c < C; ++c) {
    if (!alive[static_cast<size_t>(c)]) continue;
    if (st.complies(c)) continue;
    ++out.n_violating;
    while (!st.complies(c)) {
      if (interrupted(in.interrupt)) {
        out.status = Status::Interrupted;
        return out;
      }
      if (n_alive <= 1) throw InternalError("burel_merge: the whole table violates its own distribution");
      const double* il1 = st.il.data() + c * d;
      const int32_t* lo1 = st.lo.data() + c * d;
      const int32_t* hi1 = st.hi.data() + c * d;
      double best = std::numeric_limits<double>::infinity();
      int64_t arg = -1;
      heap.clear();
      heap.emplace_back(node_bound(0, il1, lo1, hi1), 0);
      auto cmp = [](const Entry& a, const Entry& b) { return a.first > b.first || (a.first == b.first && a.second > b.second); };
      while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), cmp);
        const auto [lb_node, x] = heap.back();
        heap.pop_back();
        if (lb_node > best) break;  // equal bounds may still hold a lower-index tie
        const KdNode& nd = nodes[static_cast<size_t>(x)];
        if (nd.left >= 0) {
          for (int64_t ch : {nd.left, nd.right}) {
            const double lb = node_bound(ch, il1, lo1, hi1);
            if (lb <= best) {
              heap.emplace_back(lb, ch);
              std::push_heap(heap.begin(), heap.end(), cmp);
            }
          }
          continue;
        }
        for (int64_t i = nd.begin; i < nd.end; ++i) {
          const int64_t o = perm[static_cast<size_t>(i)];
          if (o == c || !alive[static_cast<size_t>(o)]) continue;
          const double* il2 = st.il.data() + o * d;
          const int32_t* lo2 = st.lo.data() + o * d;
          const int32_t* hi2 = st.hi.data() + o * d;
          double lb = 0.0;
          for (int64_t j = 0; j < d; ++j) {
            double v = il2[j] - il1[j];
            if (!in.categorical[j]) {
              if (lo2[j] > hi1[j]) v = std::max(v, in.coords.at(lo2[j], j) - in.coords.at(hi1[j], j));
              else if (hi2[j] < lo1[j]) v = std::max(v, in.coords.at(lo1[j], j) - in.coords.at(hi2[j], j));
            }
            lb += std::max(v, 0.0);
          }
          if (lb > best || (lb == best && o > arg)) continue;
          ++out.n_evaluated;
          double inc = 0.0;
          for (int64_t j = 0; j < d && inc <= best; ++j)
            inc += st.dim_loss(j, std::min(lo1[j], lo2[j]), std::max(hi1[j], hi2[j])) - il1[j];
          if (inc < best || (inc == best && o < arg)) {
            best = inc;
            arg = o;
          }
        }
      }
      if (arg < 0) throw InternalError("burel_merge: no merge candidate");
      // Merge arg into c (c stays alive; classes are renumbered densely by first member at the end).
      int64_t* h1 = st.hist.data() + c * m;
      const int64_t* h2 = st.hist.data() + arg * m;
      for (int64_t v = 0; v < m; ++v) h1[v] += h2[v];
      st.size[static_cast<size_t>(c)] += st.size[static_cast<size_t>(arg)];
      for (int64_t j = 0; j < d; ++j) {
        const auto cj = static_cast<size_t>(c * d + j), aj = static_cast<size_t>(arg * d + j);
        st.lo[cj] = std::min(st.lo[cj], st.lo[aj]);
        st.hi[cj] = std::max(st.hi[cj], st.hi[aj]);
        st.il[cj] = st.dim_loss(j, st.lo[cj], st.hi[cj]);
      }
      for (int64_t x = leaf_of[static_cast<size_t>(c)]; x >= 0; x = nodes[static_cast<size_t>(x)].parent)
        for (int64_t j = 0; j < d; ++j) {
          const auto k = static_cast<size_t>(x * d + j), ck = static_cast<size_t>(c * d + j);
          nlo[k] = std::min(nlo[k], st.lo[ck]);
          nhi[k] = std::max(nhi[k], st.hi[ck]);
        }
      alive[static_cast<size_t>(arg)] = 0;
      parent[static_cast<size_t>(arg)] = c;
      --n_alive;
      ++out.n_merges;
    }
  }
  // Resolve merge chains and number the survivors densely in index order.
  std::vector<int64_t> dense(static_cast<size_t>(C), -1);
  out.class_map.assign(static_cast<size_t>(C), -1);
  for (int64_t c = 0; c < C; ++c) {
    int64_t r = c;
    while (parent[static_cast<size_t>(r)] != r) r = parent[static_cast<size_t>(r)];
    if (dense[static_cast<size_t>(r)] < 0) dense[static_cast<size_t>(r)] = out.n_classes++;
    out.class_map[static_cast<size_t>(c)] = dense[static_cast<size_t>(r)];
  }
  return out;
}

}  // namespace anoncore::twophase

#include "anoncore/twophase/bucketize.hpp"

#include <algorithm>
#include <limits>

#include "anoncore/core/status.hpp"

namespace anoncore::twophase {
namespace {

using wide = __int128;

/// A bucket of the bucketization tree under construction: its CET^U numerator (over a fixed denominator),
/// its best split's children and the gain dv of splitting it. `splittable` false for single-value buckets.
struct Node {
  int64_t key = 0;  // domain order: leaf_start (categorical) or lo rank (ordered)
  int32_t lo = 0, hi = 0, node = -1;
  wide cet = 0;
  bool splittable = false;
  bool expanded = false;
  wide dv = 0;
  std::vector<Node> kids;
};

double as_double(wide num, double denom) { return static_cast<double>(num) / denom; }

/// Greedy loop shared by bucketCat and bucketNum: `expand(n)` fills n.kids and n.dv (if splittable).
template <class Expand>
std::vector<Node> greedy(Node root, double denom, double t, Expand&& expand, std::vector<double>& trace,
                         wide& u_num) {
  std::vector<Node> leaves;
  u_num = root.cet;
  expand(root);
  leaves.push_back(std::move(root));
  while (as_double(u_num, denom) >= t) {
    int64_t best = -1;
    for (int64_t i = 0; i < static_cast<int64_t>(leaves.size()); ++i) {
      const Node& x = leaves[static_cast<size_t>(i)];
      if (!x.splittable) continue;
      if (best < 0 || x.dv > leaves[static_cast<size_t>(best)].dv ||
          (x.dv == leaves[static_cast<size_t>(best)].dv && x.key < leaves[static_cast<size_t>(best)].key))
        best = i;
    }
    if (best < 0) break;
    Node n = std::move(leaves[static_cast<size_t>(best)]);
    leaves.erase(leaves.begin() + best);
    u_num -= n.dv;
    for (auto& c : n.kids) {
      expand(c);
      leaves.push_back(std::move(c));
    }
    trace.push_back(as_double(u_num, denom));
    std::sort(leaves.begin(), leaves.end(), [](const Node& a, const Node& b) { return a.key < b.key; });
  }
  return leaves;
}

}  // namespace

Buckets bucket_cat(Span<int64_t> reference, const HierarchyView& h, double t, bool tight) {
  const int64_t m = reference.size, nn = h.n_nodes();
  const int32_t H = h.height[nn - 1];
  int64_t N = 0;
  for (int64_t v = 0; v < m; ++v) N += reference[v];
  // Per node: mass, min present p, lowest/highest present leaf (post-order pass over node ids).
  std::vector<int64_t> mass(static_cast<size_t>(nn), 0), minp(static_cast<size_t>(nn), std::numeric_limits<int64_t>::max());
  std::vector<int32_t> plo(static_cast<size_t>(nn), -1), phi(static_cast<size_t>(nn), -1);
  for (int64_t v = 0; v < nn; ++v) {
    const auto vi = static_cast<size_t>(v);
    if (v < h.n_leaves && reference[v] > 0) {
      mass[vi] = reference[v];
      minp[vi] = reference[v];
      plo[vi] = phi[vi] = static_cast<int32_t>(v);
    }
    const int32_t p = h.parent[v];
    if (p >= 0 && plo[vi] >= 0) {
      const auto pi = static_cast<size_t>(p);
      mass[pi] += mass[vi];
      minp[pi] = std::min(minp[pi], minp[vi]);
      if (plo[pi] < 0 || plo[vi] < plo[pi]) plo[pi] = plo[vi];
      phi[pi] = std::max(phi[pi], phi[vi]);
    }
  }
  // Children lists (ordered by leaf_start = pre-order).
  std::vector<std::vector<int32_t>> kids(static_cast<size_t>(nn));
  for (int64_t v = 0; v < nn; ++v)
    if (h.parent[v] >= 0) kids[static_cast<size_t>(h.parent[v])].push_back(static_cast<int32_t>(v));
  for (auto& k : kids)
    std::sort(k.begin(), k.end(), [&](int32_t a, int32_t b) { return h.leaf_start[a] < h.leaf_start[b]; });
  // Lowest node covering the present leaves of node v.
  auto plca = [&](int32_t v) {
    int32_t x = plo[static_cast<size_t>(v)];
    const int32_t b = phi[static_cast<size_t>(v)];
    while (!(b >= h.leaf_start[x] && b < h.leaf_start[x] + h.leaf_count[x])) x = h.parent[x];
    return x;
  };
  // CET^U numerator over denominator H * N.
  auto cet_of = [&](int32_t n) -> wide {
    const auto ni = static_cast<size_t>(n);
    if (!tight) return static_cast<wide>(h.height[n]) * (mass[ni] - minp[ni]);
    // Exact max over present members l of sum_i h(LCA(l, i)) p_i, walking up from each member.
    wide best = 0;
    const int32_t s = h.leaf_start[n], e = s + h.leaf_count[n];
    for (int32_t l = s; l < e; ++l) {
      if (reference[l] == 0) continue;
      wide acc = 0;
      int32_t child = l;
      for (int32_t a = h.parent[l]; a >= 0 && child != n; child = a, a = h.parent[a])
        acc += static_cast<wide>(h.height[a]) * (mass[static_cast<size_t>(a)] - mass[static_cast<size_t>(child)]);
      best = std::max(best, acc);
    }
    return best;
  };
  auto make = [&](int32_t v) {
    Node x;
    const int32_t n = plca(v);
    x.node = n;
    x.key = h.leaf_start[n];
    x.lo = h.leaf_start[n];
    x.hi = h.leaf_start[n] + h.leaf_count[n] - 1;
    x.cet = cet_of(n);
    x.splittable = n >= h.n_leaves;
    return x;
  };
  Buckets out;
  if (N <= 0) throw InternalError("bucket_cat on an empty reference");
  const double denom = static_cast<double>(H > 0 ? H : 1) * static_cast<double>(N);
  Node root = make(static_cast<int32_t>(nn - 1));
  if (H <= 0) root.splittable = false;
  out.root_cet = as_double(root.cet, denom);
  auto expand = [&](Node& x) {
    if (!x.splittable || x.expanded) return;
    x.expanded = true;
    wide s = 0;
    for (int32_t c : kids[static_cast<size_t>(x.node)]) {
      if (plo[static_cast<size_t>(c)] < 0) continue;
      x.kids.push_back(make(c));
      s += x.kids.back().cet;
    }
    x.dv = x.cet - s;
  };
  wide u_num = 0;
  std::vector<Node> leaves = greedy(std::move(root), denom, t, expand, out.u_trace, u_num);
  out.u = as_double(u_num, denom);
  out.bucket_of.assign(static_cast<size_t>(m), -1);
  for (const Node& x : leaves) {
    const auto b = static_cast<int32_t>(out.size.size());
    out.node.push_back(x.node);
    out.lo.push_back(x.lo);
    out.hi.push_back(x.hi);
    out.size.push_back(mass[static_cast<size_t>(x.node)]);
    out.cet.push_back(as_double(x.cet, denom));
    for (int32_t v = x.lo; v <= x.hi; ++v)
      if (reference[v] > 0) out.bucket_of[static_cast<size_t>(v)] = b;
  }
  for (int64_t v = 0; v < m; ++v) out.n_present += reference[v] > 0;
  return out;
}

Buckets bucket_num(Span<int64_t> reference, double t) {
  const int64_t m = reference.size;
  std::vector<int32_t> code_of;  // present rank -> code
  for (int64_t v = 0; v < m; ++v)
    if (reference[v] > 0) code_of.push_back(static_cast<int32_t>(v));
  const auto mp = static_cast<int64_t>(code_of.size());
  if (mp == 0) throw InternalError("bucket_num on an empty reference");
  // Prefix sums over ranks: S0 = counts, S1 = rank * counts.
  std::vector<wide> S0(static_cast<size_t>(mp + 1), 0), S1(static_cast<size_t>(mp + 1), 0);
  for (int64_t r = 0; r < mp; ++r) {
    const wide c = reference[code_of[static_cast<size_t>(r)]];
    S0[static_cast<size_t>(r + 1)] = S0[static_cast<size_t>(r)] + c;
    S1[static_cast<size_t>(r + 1)] = S1[static_cast<size_t>(r)] + c * r;
  }
  const wide N = S0[static_cast<size_t>(mp)];
  // CET^U numerator of ranks [a, b] over denominator (m'-1) N: max(first - a mass, b mass - first).
  auto cet = [&](int64_t a, int64_t b) -> wide {
    const wide mass = S0[static_cast<size_t>(b + 1)] - S0[static_cast<size_t>(a)];
    const wide first = S1[static_cast<size_t>(b + 1)] - S1[static_cast<size_t>(a)];
    return std::max(first - a * mass, b * mass - first);
  };
  auto make = [&](int64_t a, int64_t b) {
    Node x;
    x.key = a;
    x.lo = static_cast<int32_t>(a);
    x.hi = static_cast<int32_t>(b);
    x.cet = cet(a, b);
    x.splittable = b > a;
    return x;
  };
  const double denom = static_cast<double>(mp > 1 ? mp - 1 : 1) * static_cast<double>(N);
  Buckets out;
  Node root = make(0, mp - 1);
  out.root_cet = as_double(root.cet, denom);
  auto expand = [&](Node& x) {
    if (!x.splittable || x.expanded) return;
    x.expanded = true;
    int64_t best_sp = x.lo;
    wide best = -1;
    for (int64_t sp = x.lo; sp < x.hi; ++sp) {
      const wide c = cet(x.lo, sp) + cet(sp + 1, x.hi);
      if (best < 0 || c < best) {
        best = c;
        best_sp = sp;
      }
    }
    x.kids.push_back(make(x.lo, best_sp));
    x.kids.push_back(make(best_sp + 1, x.hi));
    x.dv = x.cet - best;
  };
  wide u_num = 0;
  std::vector<Node> leaves = greedy(std::move(root), denom, t, expand, out.u_trace, u_num);
  out.u = as_double(u_num, denom);
  out.n_present = mp;
  out.bucket_of.assign(static_cast<size_t>(m), -1);
  for (const Node& x : leaves) {
    const auto b = static_cast<int32_t>(out.size.size());
    out.node.push_back(-1);
    out.lo.push_back(x.lo);
    out.hi.push_back(x.hi);
    out.size.push_back(static_cast<int64_t>(S0[static_cast<size_t>(x.hi + 1)] - S0[static_cast<size_t>(x.lo)]));
    out.cet.push_back(as_double(x.cet, denom));
    for (int32_t r = x.lo; r <= x.hi; ++r) out.bucket_of[static_cast<size_t>(code_of[static_cast<size_t>(r)])] = b;
  }
  return out;
}

}  // namespace anoncore::twophase

#include "anoncore/distance/sabre_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/per_class.hpp"
#include "anoncore/core/status.hpp"

namespace anoncore::distance {
namespace {

using wide = __int128;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Lowest common ancestor of leaves a <= b: the first ancestor of a whose leaf range contains b.
int64_t lca_of_leaves(const HierarchyView& h, int64_t a, int64_t b) {
  int64_t v = a;
  while (v >= 0) {
    const int64_t s = h.leaf_start[v];
    if (b >= s && b < s + h.leaf_count[v]) return v;
    v = h.parent[v];
  }
  throw InternalError("leaves without a common ancestor in lca_of_leaves");
}

}  // namespace

void cet_upper_ordered(Span<int64_t> reference, Span<int32_t> bucket_of, MutSpan<double> out) {
  const int64_t nb = out.size, P = total_of(reference);
  std::vector<int64_t> mass(static_cast<size_t>(nb), 0), first(static_cast<size_t>(nb), 0),
      lo(static_cast<size_t>(nb), -1), hi(static_cast<size_t>(nb), -1);
  int64_t rank = 0;
  for (int64_t v = 0; v < reference.size; ++v) {
    if (reference[v] == 0) continue;
    const int32_t b = bucket_of[v];
    if (b >= 0) {
      const auto bi = static_cast<size_t>(b);
      mass[bi] += reference[v];
      first[bi] += rank * reference[v];
      if (lo[bi] < 0) lo[bi] = rank;
      hi[bi] = rank;
    }
    ++rank;
  }
  const int64_t present = rank;
  for (int64_t b = 0; b < nb; ++b) {
    const auto bi = static_cast<size_t>(b);
    if (present <= 1 || lo[bi] < 0) {
      out[b] = 0.0;
      continue;
    }
    const int64_t left = first[bi] - lo[bi] * mass[bi];   // sum (r_i - lo) P_i
    const int64_t right = hi[bi] * mass[bi] - first[bi];  // sum (hi - r_i) P_i
    out[b] = static_cast<double>(std::max(left, right)) /
             (static_cast<double>(present - 1) * static_cast<double>(P));
  }
}

void cet_upper_hierarchical(Span<int64_t> reference, Span<int32_t> bucket_of, const HierarchyView& h, bool tight,
                            MutSpan<double> out) {
  const int64_t nb = out.size, m = reference.size, P = total_of(reference), nn = h.n_nodes();
  const int32_t H = h.height[nn - 1];
  if (H <= 0) {
    for (int64_t b = 0; b < nb; ++b) out[b] = 0.0;
    return;
  }
  const double denom = static_cast<double>(H) * static_cast<double>(P);
  if (!tight) {
    std::vector<int64_t> mass(static_cast<size_t>(nb), 0), minp(static_cast<size_t>(nb), 0),
        lo(static_cast<size_t>(nb), -1), hi(static_cast<size_t>(nb), -1);
    for (int64_t v = 0; v < m; ++v) {
      const int32_t b = bucket_of[v];
      if (b < 0 || reference[v] == 0) continue;
      const auto bi = static_cast<size_t>(b);
      mass[bi] += reference[v];
      if (lo[bi] < 0 || reference[v] < minp[bi]) minp[bi] = reference[v];
      if (lo[bi] < 0) lo[bi] = v;
      hi[bi] = v;
    }
    for (int64_t b = 0; b < nb; ++b) {
      const auto bi = static_cast<size_t>(b);
      if (lo[bi] < 0) {
        out[b] = 0.0;
        continue;
      }
      const int64_t n = lca_of_leaves(h, lo[bi], hi[bi]);
      out[b] = static_cast<double>(static_cast<int64_t>(h.height[n]) * (mass[bi] - minp[bi])) / denom;
    }
    return;
  }
  // Tight bound: for each present member l, sum_i h(LCA(l, i)) P_i = sum over proper ancestors a of l of
  // h(a) * (mass_B(a) - mass_B(child of a towards l)), with bucket masses from a per-bucket prefix over codes.
  std::vector<int64_t> pre(static_cast<size_t>(m + 1));
  for (int64_t b = 0; b < nb; ++b) {
    pre[0] = 0;
    for (int64_t v = 0; v < m; ++v)
      pre[static_cast<size_t>(v + 1)] = pre[static_cast<size_t>(v)] + (bucket_of[v] == b ? reference[v] : 0);
    auto mass_under = [&](int64_t node) {
      const int64_t s = h.leaf_start[node];
      return pre[static_cast<size_t>(s + h.leaf_count[node])] - pre[static_cast<size_t>(s)];
    };
    wide best = 0;
    for (int64_t l = 0; l < m; ++l) {
      if (bucket_of[l] != b || reference[l] == 0) continue;
      wide s = 0;
      int64_t child = l;
      for (int64_t a = h.parent[l]; a >= 0; child = a, a = h.parent[a])
        s += static_cast<wide>(h.height[a]) * (mass_under(a) - mass_under(child));
      best = std::max(best, s);
    }
    out[b] = static_cast<double>(best) / denom;
  }
}

void bucket_emd_ordered(Matrix<int64_t> counts, Span<int64_t> totals, Span<int32_t> lo, Span<int32_t> hi,
                        int64_t n_present, MutSpan<double> out, int n_threads) {
  const int64_t nb = counts.cols, B = total_of(totals);
  parallel_chunks(counts.rows, 256, threads_for(counts.rows * counts.cols, n_threads), [&](int64_t, int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t* a = counts.row(c);
      int64_t A = 0;
      for (int64_t i = 0; i < nb; ++i) A += a[i];
      if (A <= 0) {
        out[c] = kNaN;
        continue;
      }
      if (n_present <= 1) {
        out[c] = 0.0;
        continue;
      }
      wide s = 0;
      int64_t prefix = 0;
      for (int64_t i = 0; i < nb; ++i) {
        const int64_t d = a[i] * B - totals[i] * A;
        s += static_cast<wide>(hi[i] - lo[i]) * (d < 0 ? -d : d);
        prefix += d;
        if (i + 1 < nb) {
          const int64_t gap = static_cast<int64_t>(lo[i + 1]) + hi[i + 1] - lo[i] - hi[i];
          s += static_cast<wide>(gap) * (prefix < 0 ? -prefix : prefix);
        }
      }
      out[c] = static_cast<double>(s) / (2.0 * static_cast<double>(n_present - 1) * static_cast<double>(A) *
                                         static_cast<double>(B));
    }
  });
}

void bucket_emd_hierarchical(Matrix<int64_t> counts, Span<int64_t> totals, Span<int32_t> bucket_node,
                             const HierarchyView& h, MutSpan<double> out, int n_threads) {
  const int64_t nb = counts.cols, B = total_of(totals), nn = h.n_nodes();
  const int32_t H = h.height[nn - 1];
  std::vector<int64_t> slot(static_cast<size_t>(nn), -1);
  for (int64_t i = 0; i < nb; ++i) slot[static_cast<size_t>(bucket_node[i])] = i;
  parallel_chunks(counts.rows, 256, threads_for(counts.rows * counts.cols, n_threads), [&](int64_t, int64_t begin, int64_t end) {
    std::vector<int64_t> pos(static_cast<size_t>(nn)), neg(static_cast<size_t>(nn));
    for (int64_t c = begin; c < end; ++c) {
      const int64_t* a = counts.row(c);
      int64_t A = 0;
      for (int64_t i = 0; i < nb; ++i) A += a[i];
      if (A <= 0) {
        out[c] = kNaN;
        continue;
      }
      if (H <= 0) {
        out[c] = 0.0;
        continue;
      }
      std::fill(pos.begin(), pos.end(), 0);
      std::fill(neg.begin(), neg.end(), 0);
      wide cost = 0;
      for (int64_t v = 0; v < nn; ++v) {
        const auto vi = static_cast<size_t>(v);
        int64_t e;
        if (slot[vi] >= 0) {
          const int64_t i = slot[vi];
          e = totals[i] * A - a[i] * B;
        } else if (v < h.n_leaves) {
          e = 0;
        } else {
          cost += static_cast<wide>(h.height[v]) * std::min(pos[vi], neg[vi]);
          e = pos[vi] - neg[vi];
        }
        const int32_t par = h.parent[v];
        if (par >= 0) {
          if (e > 0)
            pos[static_cast<size_t>(par)] += e;
          else
            neg[static_cast<size_t>(par)] -= e;
        }
      }
      out[c] = static_cast<double>(cost) /
               (static_cast<double>(H) * static_cast<double>(A) * static_cast<double>(B));
    }
  });
}

}  // namespace anoncore::distance

namespace anoncore::distance {
namespace {

/// Min-cost transportation from surplus to deficit buckets, successive shortest paths (Dijkstra on reduced
/// costs over the dense residual graph). Returns sum flow * cost.
double transport(const std::vector<int64_t>& supply_in, const std::vector<int64_t>& demand_in,
                 const std::vector<int64_t>& src, const std::vector<int64_t>& dst, Matrix<double> ground) {
  const size_t S = src.size(), T = dst.size(), n = S + T;
  if (S == 0 || T == 0) return 0.0;
  std::vector<int64_t> supply(supply_in), demand(demand_in);
  std::vector<int64_t> flow(S * T, 0);
  std::vector<double> pot(n, 0.0), dist(n);
  std::vector<int64_t> prev(n);
  std::vector<char> done(n);
  const double inf = std::numeric_limits<double>::infinity();
  auto cost = [&](size_t i, size_t j) { return ground(src[i], dst[j]); };
  double total = 0.0;
  for (;;) {
    // Dijkstra from every source with supply left (multi-source), nodes 0..S-1 sources, S..S+T-1 sinks.
    std::fill(dist.begin(), dist.end(), inf);
    std::fill(prev.begin(), prev.end(), -1);
    std::fill(done.begin(), done.end(), 0);
    for (size_t i = 0; i < S; ++i)
      if (supply[i] > 0) dist[i] = 0.0;
    for (;;) {
      size_t u = n;
      for (size_t v = 0; v < n; ++v)
        if (!done[v] && dist[v] < inf && (u == n || dist[v] < dist[u])) u = v;
      if (u == n) break;
      done[u] = 1;
      if (u < S) {  // forward arcs source u -> every sink
        for (size_t j = 0; j < T; ++j) {
          const double rc = std::max(0.0, cost(u, j) + pot[u] - pot[S + j]);
          if (dist[u] + rc < dist[S + j]) {
            dist[S + j] = dist[u] + rc;
            prev[S + j] = static_cast<int64_t>(u);
          }
        }
      } else {  // backward arcs sink -> sources that send it flow
        const size_t j = u - S;
        for (size_t i = 0; i < S; ++i) {
          if (flow[i * T + j] == 0) continue;
          const double rc = std::max(0.0, -cost(i, j) + pot[u] - pot[i]);
          if (dist[u] + rc < dist[i]) {
            dist[i] = dist[u] + rc;
            prev[i] = static_cast<int64_t>(u);
          }
        }
      }
    }
    size_t best = n;
    for (size_t j = 0; j < T; ++j)
      if (demand[j] > 0 && dist[S + j] < inf && (best == n || dist[S + j] < dist[best])) best = S + j;
    if (best == n) break;
    // Johnson potentials; unreached nodes move by the largest distance so reduced costs stay >= 0.
    double reach = 0.0;
    for (size_t v = 0; v < n; ++v)
      if (dist[v] < inf) reach = std::max(reach, dist[v]);
    for (size_t v = 0; v < n; ++v) pot[v] += dist[v] < inf ? dist[v] : reach;
    // Bottleneck along the path.
    int64_t amount = demand[best - S];
    size_t v = best;
    while (prev[v] >= 0) {
      const auto u = static_cast<size_t>(prev[v]);
      if (v < S) amount = std::min(amount, flow[v * T + (u - S)]);  // backward arc sink u -> source v
      v = u;
    }
    amount = std::min(amount, supply[v]);
    if (amount <= 0) throw InternalError("empty augmenting path in emd_general");
    supply[v] -= amount;
    demand[best - S] -= amount;
    v = best;
    while (prev[v] >= 0) {
      const auto u = static_cast<size_t>(prev[v]);
      if (v >= S) {
        flow[u * T + (v - S)] += amount;
        total += static_cast<double>(amount) * cost(u, v - S);
      } else {
        flow[v * T + (u - S)] -= amount;
        total -= static_cast<double>(amount) * cost(v, u - S);
      }
      v = u;
    }
  }
  return total;
}

}  // namespace

void emd_general(Matrix<int64_t> counts, Span<int64_t> totals, Matrix<double> ground, MutSpan<double> out,
                 int n_threads) {
  const int64_t nb = counts.cols, B = total_of(totals);
  parallel_chunks(counts.rows, 64, threads_for(counts.rows * nb * nb, n_threads), [&](int64_t, int64_t begin,
                                                                                     int64_t end) {
    std::vector<int64_t> src, dst, supply, demand;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t* a = counts.row(c);
      int64_t A = 0;
      for (int64_t i = 0; i < nb; ++i) A += a[i];
      if (A <= 0) {
        out[c] = kNaN;
        continue;
      }
      src.clear();
      dst.clear();
      supply.clear();
      demand.clear();
      for (int64_t i = 0; i < nb; ++i) {
        const int64_t d = a[i] * B - totals[i] * A;
        if (d > 0) {
          src.push_back(i);
          supply.push_back(d);
        } else if (d < 0) {
          dst.push_back(i);
          demand.push_back(-d);
        }
      }
      out[c] = transport(supply, demand, src, dst, ground) / (static_cast<double>(A) * static_cast<double>(B));
    }
  });
}

}  // namespace anoncore::distance

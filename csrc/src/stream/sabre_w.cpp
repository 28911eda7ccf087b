#include "anoncore/stream/sabre_w.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "anoncore/twophase/hilbert.hpp"
#include "anoncore/twophase/pipeline.hpp"
#include "anoncore/twophase/retrieve.hpp"
#include "anoncore/twophase/sabre.hpp"

namespace anoncore::stream {
namespace {

using wide = __int128;

struct Interval {
  int64_t a = 0, b = 0;  // present-rank range [a, b]
  wide cet = 0;
  wide dv = 0;
  int64_t split = -1;  // best split point (last rank of the left part), -1 if not splittable
};

}  // namespace

twophase::Buckets bucket_num_global(Span<int64_t> reference, double t) {
  const int64_t m = reference.size;
  std::vector<int64_t> code_of;
  for (int64_t v = 0; v < m; ++v)
    if (reference[v] > 0) code_of.push_back(v);
  const auto mp = static_cast<int64_t>(code_of.size());
  if (mp == 0) throw InternalError("bucket_num_global on an empty reference");
  std::vector<wide> S0(static_cast<size_t>(mp + 1), 0), S1(static_cast<size_t>(mp + 1), 0);
  for (int64_t r = 0; r < mp; ++r) {
    const wide c = reference[code_of[static_cast<size_t>(r)]];
    S0[static_cast<size_t>(r + 1)] = S0[static_cast<size_t>(r)] + c;
    S1[static_cast<size_t>(r + 1)] = S1[static_cast<size_t>(r)] + c * code_of[static_cast<size_t>(r)];
  }
  const wide N = S0[static_cast<size_t>(mp)];
  // CET^U numerator of ranks [a, b] over denominator (m - 1) N (Thm 3.2; the sum is convex in the candidate
  // value, so the maximum sits at the lowest or highest present code of the bucket).
  auto cet = [&](int64_t a, int64_t b) -> wide {
    const wide mass = S0[static_cast<size_t>(b + 1)] - S0[static_cast<size_t>(a)];
    const wide first = S1[static_cast<size_t>(b + 1)] - S1[static_cast<size_t>(a)];
    const wide lo = code_of[static_cast<size_t>(a)], hi = code_of[static_cast<size_t>(b)];
    return std::max(first - lo * mass, hi * mass - first);
  };
  auto make = [&](int64_t a, int64_t b) {
    Interval x;
    x.a = a;
    x.b = b;
    x.cet = cet(a, b);
    if (b > a) {
      wide best = -1;
      for (int64_t sp = a; sp < b; ++sp) {
        const wide c = cet(a, sp) + cet(sp + 1, b);
        if (best < 0 || c < best) {
          best = c;
          x.split = sp;
        }
      }
      x.dv = x.cet - best;
    }
    return x;
  };
  const double denom = static_cast<double>(m > 1 ? m - 1 : 1) * static_cast<double>(N);
  twophase::Buckets out;
  std::vector<Interval> leaves{make(0, mp - 1)};
  out.root_cet = static_cast<double>(leaves[0].cet) / denom;
  wide u = leaves[0].cet;
  while (static_cast<double>(u) / denom >= t) {
    int64_t best = -1;
    for (int64_t i = 0; i < static_cast<int64_t>(leaves.size()); ++i) {
      const Interval& x = leaves[static_cast<size_t>(i)];
      if (x.split < 0) continue;
      if (best < 0 || x.dv > leaves[static_cast<size_t>(best)].dv) best = i;  // leaves sorted: ties to lowest code
    }
    if (best < 0) break;
    const Interval n = leaves[static_cast<size_t>(best)];
    u -= n.dv;
    leaves[static_cast<size_t>(best)] = make(n.a, n.split);
    leaves.insert(leaves.begin() + best + 1, make(n.split + 1, n.b));
    out.u_trace.push_back(static_cast<double>(u) / denom);
  }
  out.u = static_cast<double>(u) / denom;
  out.n_present = m;  // global metric: bucket_emd_ordered divides by m - 1
  out.bucket_of.assign(static_cast<size_t>(m), -1);
  for (const Interval& x : leaves) {
    const auto b = static_cast<int32_t>(out.size.size());
    const auto lo = static_cast<int32_t>(code_of[static_cast<size_t>(x.a)]);
    const auto hi = static_cast<int32_t>(code_of[static_cast<size_t>(x.b)]);
    out.node.push_back(-1);
    out.lo.push_back(lo);
    out.hi.push_back(hi);
    out.size.push_back(static_cast<int64_t>(S0[static_cast<size_t>(x.b + 1)] - S0[static_cast<size_t>(x.a)]));
    out.cet.push_back(static_cast<double>(x.cet) / denom);
    for (int64_t r = x.a; r <= x.b; ++r) out.bucket_of[static_cast<size_t>(code_of[static_cast<size_t>(r)])] = b;
  }
  return out;
}

int64_t merge_for_persons(MutSpan<int64_t> labels, int64_t n_labels, Span<int64_t> pids, int64_t k) {
  const int64_t n = labels.size;
  if (n == 0) return 0;
  // Rows grouped by label (counting sort).
  std::vector<int64_t> start(static_cast<size_t>(n_labels + 1), 0), rows(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) ++start[static_cast<size_t>(labels[r] + 1)];
  for (int64_t e = 0; e < n_labels; ++e) start[static_cast<size_t>(e + 1)] += start[static_cast<size_t>(e)];
  {
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (int64_t r = 0; r < n; ++r) rows[static_cast<size_t>(fill[static_cast<size_t>(labels[r])]++)] = r;
  }
  std::vector<int64_t> group_of(static_cast<size_t>(n_labels), -1);
  std::unordered_set<int64_t> seen;
  int64_t groups = 0;
  std::vector<int64_t> open;  // labels of the group being built
  for (int64_t e = 0; e < n_labels; ++e) {
    const int64_t b = start[static_cast<size_t>(e)], f = start[static_cast<size_t>(e + 1)];
    if (b == f) continue;
    open.push_back(e);
    for (int64_t i = b; i < f; ++i) seen.insert(pids[rows[static_cast<size_t>(i)]]);
    if (static_cast<int64_t>(seen.size()) >= k) {
      for (int64_t x : open) group_of[static_cast<size_t>(x)] = groups;
      ++groups;
      open.clear();
      seen.clear();
    }
  }
  if (!open.empty()) {
    if (groups == 0) return -1;
    for (int64_t x : open) group_of[static_cast<size_t>(x)] = groups - 1;
  }
  for (int64_t r = 0; r < n; ++r) labels[r] = group_of[static_cast<size_t>(labels[r])];
  return groups;
}

WindowSabreOutput window_sabre(Span<int32_t> sa, int64_t m, const twophase::HierarchyView* h, Span<uint64_t> keys,
                               Span<int64_t> pids, Matrix<double> coords, const WindowSabreConfig& cfg) {
  WindowSabreOutput out;
  const int64_t n = sa.size;
  if (n == 0) return out;
  std::vector<int64_t> reference = twophase::sa_counts(sa, m);
  const Span<int64_t> ref{reference.data(), m};
  const twophase::Buckets phi = h != nullptr ? twophase::bucket_cat(ref, *h, cfg.t, false) : bucket_num_global(ref, cfg.t);
  out.u = phi.u;
  out.n_buckets = phi.n_buckets();
  twophase::EcLeaves leaves = twophase::sabre_ec_sizes(phi, h, cfg.t, cfg.k, cfg.n_threads);
  out.n_recipes = leaves.n_leaves();
  std::vector<int32_t> bucket_of_row = twophase::bucket_of_rows(sa, phi.bucket_of);
  twophase::MaterializeConfig mc;
  mc.retrieval = cfg.knn ? twophase::Retrieval::Knn : cfg.slices ? twophase::Retrieval::Slices : twophase::Retrieval::Hilbert;
  mc.policy = twophase::SeedPolicy::Random;
  mc.seed = cfg.seed;
  mc.n_threads = cfg.n_threads;
  out.labels.assign(static_cast<size_t>(n), -1);
  const MutSpan<int64_t> lab{out.labels.data(), n};
  const Span<int32_t> rows_bucket{bucket_of_row.data(), n};
  if (cfg.knn) {
    // Exact kNN over float coordinates: code (r, j) = r, value table of dimension j = column j of coords.
    const int64_t d = coords.cols;
    std::vector<int32_t> codes(static_cast<size_t>(n * d));
    std::vector<double> values(static_cast<size_t>(n * d));
    std::vector<int64_t> offsets(static_cast<size_t>(d + 1));
    for (int64_t j = 0; j <= d; ++j) offsets[static_cast<size_t>(j)] = j * n;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < d; ++j) {
        codes[static_cast<size_t>(r * d + j)] = static_cast<int32_t>(r);
        values[static_cast<size_t>(j * n + r)] = coords(r, j);
      }
    const twophase::CoordTables ct{Span<double>{values.data(), n * d}, Span<int64_t>{offsets.data(), d + 1}};
    out.status = twophase::retrieve_classes(rows_bucket, phi.n_buckets(), leaves, keys, Matrix<int32_t>{codes.data(), n, d},
                                            ct, mc, lab);
  } else {
    out.status = twophase::retrieve_classes(rows_bucket, phi.n_buckets(), leaves, keys, Matrix<int32_t>{}, twophase::CoordTables{},
                                            mc, lab);
  }
  if (out.status != Status::Ok) return out;
  out.n_classes = merge_for_persons(lab, out.n_recipes, pids, cfg.k);
  if (out.n_classes < 0) {
    out.status = Status::Infeasible;
    out.n_classes = 0;
  }
  return out;
}

void stream_hilbert_keys(Matrix<double> coords, int bits, MutSpan<uint64_t> keys) {
  const int64_t d = std::min<int64_t>(coords.cols, 64);
  const double scale = std::ldexp(1.0, bits);
  const auto top = static_cast<uint32_t>((uint64_t{1} << bits) - 1);
  std::vector<uint32_t> cell(static_cast<size_t>(std::max<int64_t>(d, 1)));
  for (int64_t r = 0; r < coords.rows; ++r) {
    for (int64_t j = 0; j < d; ++j) {
      const double c = std::floor(coords(r, j) * scale);
      cell[static_cast<size_t>(j)] = c <= 0 ? 0u : c >= static_cast<double>(top) ? top : static_cast<uint32_t>(c);
    }
    keys[r] = twophase::hilbert_index(cell.data(), d, bits);
  }
}

}  // namespace anoncore::stream

#include "anoncore/twophase/sabre.hpp"

#include <chrono>

namespace anoncore::twophase {
namespace {
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

EcLeaves sabre_ec_sizes(const Buckets& phi, const HierarchyView* h, double t, int64_t k, int n_threads) {
  const Span<int64_t> totals{phi.size.data(), phi.n_buckets()};
  const double limit = t - phi.u + kSplitTolerance;
  std::vector<double> dist;
  auto accept = [&](Matrix<int64_t> kids, MutSpan<uint8_t> ok) {
    dist.resize(static_cast<size_t>(kids.rows));
    MutSpan<double> out{dist.data(), kids.rows};
    if (h != nullptr)
      bucket_emd_hierarchical(kids, totals, Span<int32_t>{phi.node.data(), phi.n_buckets()}, *h, out, n_threads);
    else
      bucket_emd_ordered(kids, totals, Span<int32_t>{phi.lo.data(), phi.n_buckets()},
                         Span<int32_t>{phi.hi.data(), phi.n_buckets()}, phi.n_present, out, n_threads);
    for (int64_t r = 0; r < kids.rows; ++r) {
      int64_t size = 0;
      for (int64_t i = 0; i < kids.cols; ++i) size += kids(r, i);
      ok[r] = size >= k && size > 0 && dist[static_cast<size_t>(r)] <= limit ? 1 : 0;
    }
  };
  return ec_size_tree(totals, accept);
}

SabreOutput sabre(Span<int32_t> sa, int64_t m, const HierarchyView* h, Matrix<int32_t> qi,
                  const CoordTables& coords, int64_t max_card, const SabreConfig& cfg) {
  SabreOutput out;
  const int64_t n = sa.size;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> reference(static_cast<size_t>(m), 0);
  for (int64_t r = 0; r < n; ++r) ++reference[static_cast<size_t>(sa[r])];
  const Span<int64_t> ref{reference.data(), m};
  out.buckets = h != nullptr ? bucket_cat(ref, *h, cfg.t, cfg.tight_bound) : bucket_num(ref, cfg.t);
  out.seconds_bucketize = since(t0);
  t0 = std::chrono::steady_clock::now();
  out.leaves = sabre_ec_sizes(out.buckets, h, cfg.t, cfg.k, cfg.n_threads);
  out.seconds_ec_tree = since(t0);
  t0 = std::chrono::steady_clock::now();
  std::vector<int32_t> bucket_of_row(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) bucket_of_row[static_cast<size_t>(r)] = out.buckets.bucket_of[static_cast<size_t>(sa[r])];
  std::vector<uint64_t> keys(static_cast<size_t>(n));
  out.hilbert_bits = hilbert_bits(qi.cols, max_card);
  // SABRE-KNN with random seeds never looks at the keys: leave them 0 (buckets then keep row order).
  if (!cfg.knn || cfg.policy == SeedPolicy::MinKey)
    hilbert_keys(qi, coords, out.hilbert_bits, MutSpan<uint64_t>{keys.data(), n}, cfg.n_threads);
  out.seconds_keys = since(t0);
  t0 = std::chrono::steady_clock::now();
  RetrieveInput in;
  in.bucket_of_row = Span<int32_t>{bucket_of_row.data(), n};
  in.n_buckets = out.buckets.n_buckets();
  in.leaves = Matrix<int64_t>{out.leaves.counts.data(), out.leaves.n_leaves(), out.leaves.n_buckets};
  in.keys = Span<uint64_t>{keys.data(), n};
  in.seed = cfg.seed;
  in.policy = cfg.policy;
  in.n_threads = cfg.n_threads;
  in.interrupt = cfg.interrupt;
  out.labels.assign(static_cast<size_t>(n), -1);
  const MutSpan<int64_t> lab{out.labels.data(), n};
  out.status = cfg.knn ? retrieve_knn(in, qi, coords, lab) : cfg.slices ? retrieve_slices(in, lab) : retrieve_hilbert(in, lab);
  out.seconds_retrieve = since(t0);
  return out;
}

}  // namespace anoncore::twophase

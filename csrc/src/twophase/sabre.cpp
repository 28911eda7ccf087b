#include "anoncore/twophase/sabre.hpp"

namespace anoncore::twophase {

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
  // SABRE-KNN with random seeds never looks at the keys: leave them 0 (buckets then keep row order).
  const MaterializeConfig mc = materialize_config(
      cfg, !cfg.knn || cfg.policy == SeedPolicy::MinKey ? KeyMode::PerRow : KeyMode::None,
      cfg.knn ? Retrieval::Knn : cfg.slices ? Retrieval::Slices : Retrieval::Hilbert);
  return two_phase<Buckets>(
      sa, m, qi, coords, max_card,
      [&](Span<int64_t> counts) {
        return h != nullptr ? bucket_cat(counts, *h, cfg.t, cfg.tight_bound) : bucket_num(counts, cfg.t);
      },
      [&](const Buckets& phi) { return sabre_ec_sizes(phi, h, cfg.t, cfg.k, cfg.n_threads); }, mc);
}

}  // namespace anoncore::twophase

#include "anoncore/twophase/pipeline.hpp"

#include <algorithm>
#include <memory>

#include "anoncore/core/parallel.hpp"

namespace anoncore::twophase {

std::vector<int64_t> sa_counts(Span<int32_t> sa, int64_t m) {
  std::vector<int64_t> counts(static_cast<size_t>(m), 0);
  for (int64_t r = 0; r < sa.size; ++r) ++counts[static_cast<size_t>(sa[r])];
  return counts;
}

std::vector<int32_t> bucket_of_rows(Span<int32_t> sa, const std::vector<int32_t>& bucket_of, int n_threads) {
  std::vector<int32_t> out(static_cast<size_t>(sa.size));
  parallel_chunks(sa.size, int64_t{1} << 16, n_threads, [&](int64_t, int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) out[static_cast<size_t>(r)] = bucket_of[static_cast<size_t>(sa[r])];
  });
  return out;
}

Status retrieve_classes(Span<int32_t> bucket_of_row, int64_t n_buckets, const EcLeaves& leaves, Span<uint64_t> keys,
                        Matrix<int32_t> qi, const CoordTables& coords, const MaterializeConfig& cfg,
                        MutSpan<int64_t> labels) {
  RetrieveInput in;
  in.bucket_of_row = bucket_of_row;
  in.n_buckets = n_buckets;
  in.leaves = Matrix<int64_t>{leaves.counts.data(), leaves.n_leaves(), leaves.n_buckets};
  in.keys = keys;
  in.seed = cfg.seed;
  in.policy = cfg.policy;
  in.n_threads = cfg.n_threads;
  in.interrupt = cfg.interrupt;
  switch (cfg.retrieval) {
    case Retrieval::Knn: return retrieve_knn(in, qi, coords, labels);
    case Retrieval::Slices: return retrieve_slices(in, labels);
    case Retrieval::Hilbert: break;
  }
  return retrieve_hilbert(in, labels);
}

namespace detail {

Phase2 materialize(Span<int32_t> sa, const std::vector<int32_t>& bucket_of, int64_t n_buckets, const EcLeaves& leaves,
                   Matrix<int32_t> qi, const CoordTables& coords, int64_t max_card, const MaterializeConfig& cfg) {
  using clock = std::chrono::steady_clock;
  const auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  Phase2 p;
  const int64_t n = sa.size;
  auto t0 = clock::now();
  std::vector<int32_t> rows_bucket = bucket_of_rows(sa, bucket_of, cfg.n_threads);
  // (not value-initialised: every key is written below, by the threads that first touch its page)
  std::unique_ptr<uint64_t[]> keys(new uint64_t[static_cast<size_t>(n)]);
  p.hilbert_bits = hilbert_bits(qi.cols, max_card);
  const MutSpan<uint64_t> key_span{keys.get(), n};
  if (cfg.keys == KeyMode::PerRow) hilbert_keys(qi, coords, p.hilbert_bits, key_span, cfg.n_threads);
  if (cfg.keys == KeyMode::PerCell) hilbert_keys_by_cell(qi, coords, p.hilbert_bits, key_span, cfg.n_threads);
  if (cfg.keys == KeyMode::None) std::fill(keys.get(), keys.get() + n, uint64_t{0});
  p.seconds_keys = since(t0);
  t0 = clock::now();
  p.labels.assign(static_cast<size_t>(n), -1);
  p.status = retrieve_classes(Span<int32_t>{rows_bucket.data(), n}, n_buckets, leaves,
                              Span<uint64_t>{keys.get(), n}, qi, coords, cfg, MutSpan<int64_t>{p.labels.data(), n});
  p.seconds_retrieve = since(t0);
  return p;
}

}  // namespace detail
}  // namespace anoncore::twophase

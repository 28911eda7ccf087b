// The two-phase pipeline shared by SABRE, BUREL and the window SABRE of SABRE_W (spec sabre-burel.md §3.1,
// §4.1): count the sensitive values, bucketize them, split the EC-size tree over the buckets, then materialize
// the classes by retrieving tuples near a seed (Hilbert neighbours, Hilbert slices or exact kNN). Only the
// bucketization and the acceptance test of a split differ between the algorithms; they come in as callables.
#pragma once
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/twophase/ec_tree.hpp"
#include "anoncore/twophase/hilbert.hpp"
#include "anoncore/twophase/retrieve.hpp"

namespace anoncore::twophase {

/// How the rows' Hilbert keys are computed: not at all (SABRE-KNN with random seeds never reads them), per row,
/// or once per grid cell when the QI domain is small (the same keys, see hilbert_keys_by_cell).
enum class KeyMode { None, PerRow, PerCell };

/// How the classes are materialized from the EC-size leaves (retrieve.hpp).
enum class Retrieval { Hilbert, Slices, Knn };

struct MaterializeConfig {
  KeyMode keys = KeyMode::PerRow;
  Retrieval retrieval = Retrieval::Hilbert;
  SeedPolicy policy = SeedPolicy::Random;
  uint64_t seed = 0;
  int n_threads = 1;
  InterruptHook interrupt;
};

/// The retrieval settings of an algorithm's config (`policy`, `seed`, `n_threads`, `interrupt`) with its key mode
/// and retrieval method.
template <class Cfg>
MaterializeConfig materialize_config(const Cfg& cfg, KeyMode keys, Retrieval retrieval) {
  MaterializeConfig mc;
  mc.keys = keys;
  mc.retrieval = retrieval;
  mc.policy = cfg.policy;
  mc.seed = cfg.seed;
  mc.n_threads = cfg.n_threads;
  mc.interrupt = cfg.interrupt;
  return mc;
}

/// What SABRE and BUREL return; `B` is their bucketization (`Buckets`, `BurelBuckets`).
template <class B>
struct TwoPhaseOutput {
  Status status = Status::Ok;
  B buckets;
  EcLeaves leaves;
  std::vector<int64_t> labels;  // EC index per row (leaf order)
  int hilbert_bits = 0;
  double seconds_bucketize = 0, seconds_ec_tree = 0, seconds_keys = 0, seconds_retrieve = 0;
};

/// Count of every sensitive code in [0, m) over the rows: the table's distribution. O(n + m).
std::vector<int64_t> sa_counts(Span<int32_t> sa, int64_t m);

/// Bucket of every row: bucket_of[sa[r]]. O(n), over n_threads (fixed chunks).
std::vector<int32_t> bucket_of_rows(Span<int32_t> sa, const std::vector<int32_t>& bucket_of, int n_threads = 1);

/// Retrieval of the classes given the rows' buckets and keys: labels[r] = EC index of row r. `qi` and `coords`
/// are read by the kNN retrieval only.
Status retrieve_classes(Span<int32_t> bucket_of_row, int64_t n_buckets, const EcLeaves& leaves, Span<uint64_t> keys,
                        Matrix<int32_t> qi, const CoordTables& coords, const MaterializeConfig& cfg,
                        MutSpan<int64_t> labels);

/// Phase 2 of both algorithms: the rows' buckets, their Hilbert keys (cfg.keys) and the retrieval; fills
/// out.labels, out.hilbert_bits, out.status and the keys / retrieval times.
template <class B>
void materialize(Span<int32_t> sa, Matrix<int32_t> qi, const CoordTables& coords, int64_t max_card,
                 const MaterializeConfig& cfg, TwoPhaseOutput<B>& out);

/// The whole pipeline: `bucketize(Span<int64_t> counts) -> B`, then `ec_sizes(const B&) -> EcLeaves`, then
/// materialize. Precondition (checked in Python): sa values in [0, m), qi has sa.size rows.
template <class B, class Bucketize, class EcSizes>
TwoPhaseOutput<B> two_phase(Span<int32_t> sa, int64_t m, Matrix<int32_t> qi, const CoordTables& coords,
                            int64_t max_card, Bucketize&& bucketize, EcSizes&& ec_sizes,
                            const MaterializeConfig& cfg) {
  using clock = std::chrono::steady_clock;
  const auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  TwoPhaseOutput<B> out;
  auto t0 = clock::now();
  std::vector<int64_t> counts = sa_counts(sa, m);
  out.buckets = bucketize(Span<int64_t>{counts.data(), m});
  out.seconds_bucketize = since(t0);
  t0 = clock::now();
  out.leaves = ec_sizes(static_cast<const B&>(out.buckets));
  out.seconds_ec_tree = since(t0);
  materialize(sa, qi, coords, max_card, cfg, out);
  return out;
}

namespace detail {
struct Phase2 {
  Status status = Status::Ok;
  std::vector<int64_t> labels;
  int hilbert_bits = 0;
  double seconds_keys = 0, seconds_retrieve = 0;
};
Phase2 materialize(Span<int32_t> sa, const std::vector<int32_t>& bucket_of, int64_t n_buckets, const EcLeaves& leaves,
                   Matrix<int32_t> qi, const CoordTables& coords, int64_t max_card, const MaterializeConfig& cfg);
}  // namespace detail

template <class B>
void materialize(Span<int32_t> sa, Matrix<int32_t> qi, const CoordTables& coords, int64_t max_card,
                 const MaterializeConfig& cfg, TwoPhaseOutput<B>& out) {
  detail::Phase2 p = detail::materialize(sa, out.buckets.bucket_of, out.buckets.n_buckets(), out.leaves, qi, coords, max_card, cfg);
  out.status = p.status;
  out.labels = std::move(p.labels);
  out.hilbert_bits = p.hilbert_bits;
  out.seconds_keys = p.seconds_keys;
  out.seconds_retrieve = p.seconds_retrieve;
}

}  // namespace anoncore::twophase

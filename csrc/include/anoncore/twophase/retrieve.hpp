// Materialization of EC recipes (spec sabre-burel.md §3.4 SABRE-AK / SABRE-KNN, §4.4 BUREL Retrieve): for each
// leaf array a of the EC-size tree (in order), pick a seed tuple x and take a_i tuples from every bucket B_i
// near x, deleting them from their buckets.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/raw_vec.hpp"
#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/twophase/hilbert.hpp"

namespace anoncore::twophase {

enum class SeedPolicy : int {
  /// Uniform among buckets with a_i > 0, then a uniform remaining tuple of that bucket (spec §8 item 10).
  Random = 0,
  /// The remaining tuple with the smallest Hilbert key among buckets with a_i > 0 (deterministic variant,
  /// Ghinita et al.): tends to peel the space in curve order.
  MinKey = 1,
};

struct RetrieveInput {
  Span<int32_t> bucket_of_row;  // bucket of every row (0..n_buckets-1)
  int64_t n_buckets = 0;
  Matrix<int64_t> leaves;  // (n_ecs, n_buckets): tuples to take from each bucket per EC; column sums = bucket sizes
  Span<uint64_t> keys;     // Hilbert key per row
  uint64_t seed = 0;
  SeedPolicy policy = SeedPolicy::Random;
  int n_threads = 1;
  InterruptHook interrupt;
};

/// The order shared by every retrieval: rows sorted by (bucket, key, row), with keys_out[p] = keys[rows_out[p]].
/// Stable LSD radix sort: passes of at most 11 bits over only the key bits that vary between rows (few passes
/// when the keys take few distinct values, e.g. 3 QIs on coarse grids), then a counting pass by bucket; the rows
/// start in increasing order, so equal (bucket, key) keep increasing rows. Parallel over fixed-size chunks whose
/// boundaries depend only on n: the output is the same for any thread count. O(n * passes).
void sort_bucket_key_row(Span<int32_t> bucket_of_row, int64_t n_buckets, Span<uint64_t> keys, int n_threads,
                         core::RawVec<int64_t>& rows_out, core::RawVec<uint64_t>& keys_out);

/// SABRE-AK / BUREL retrieval: per bucket, tuple ids sorted by (key, row); for each EC, binary search for
/// H(x) in every bucket and expand to both sides over the remaining tuples (deleted ones are skipped with
/// path-compressed next/previous-alive links), taking the a_i smallest |H(t) - H(x)| (ties: left side first).
/// Writes the EC index of every row into `labels`. O(n log n + |S_G| |phi| log n).
Status retrieve_hilbert(const RetrieveInput& in, MutSpan<int64_t> labels);

/// "Hilbert slicing" (spec §7, an optional deviation from the thesis): because EC-tree leaves come from halving
/// every bucket, giving the left child the first ceil(a_i/2) tuples of each bucket's current slice in Hilbert
/// order is the same as handing every bucket's tuples, sorted by (key, row), to the leaves in depth-first order,
/// a_i at a time. No seed, no leftovers, deterministic; O(n log n).
Status retrieve_slices(const RetrieveInput& in, MutSpan<int64_t> labels);

/// SABRE-KNN retrieval: the a_i exact Euclidean nearest remaining neighbours of x in every bucket (coordinates
/// normalised as for the Hilbert keys), found with a per-bucket k-d tree that supports deletion (subtree alive
/// counts; pruning by bounding boxes). Ties between equal distances are resolved by the tree's deterministic
/// visiting order. Same seed choice as retrieve_hilbert.
Status retrieve_knn(const RetrieveInput& in, Matrix<int32_t> codes, const CoordTables& coords,
                    MutSpan<int64_t> labels);

}  // namespace anoncore::twophase

// Item sets of anoncore.distributed: the distinct rows of a table (quasi-identifier leaf codes, then the
// sensitive code) packed into one mixed-radix 64-bit key each, with their row counts and a rank (the position
// of their first row, as (partition << 40) + position of the item in its partition's list). Kernels group the
// rows of a partition, split items into shards by a hash of the key, merge item sets (counts summed, the
// smallest rank kept) and interleave disjoint shards back into rank order, so that a table reduced partition
// by partition on many workers comes out with its items in order of first appearance over the rows.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::itemsets {

/// Items: keys[i] with counts[i] rows and rank ranks[i].
struct Items {
  std::vector<uint64_t> keys;
  std::vector<int64_t> counts;
  std::vector<int64_t> ranks;
};

/// A read-only view of one item set.
struct ItemsView {
  Span<uint64_t> keys;
  Span<int64_t> counts;
  Span<int64_t> ranks;
};

/// Mixed-radix multipliers of `radix` (last column least significant); throws std::invalid_argument when the
/// product of the radices is 2^63 or more, or a radix is < 1.
std::vector<uint64_t> key_multipliers(Span<int64_t> radix);

/// The distinct rows of `codes` (n, d) as keys in order of first appearance, with their summed weights
/// (`weights` empty: 1 per row) and ranks rank_base + position. Codes must lie in [0, radix[j]) (else
/// std::out_of_range naming row and column); weights must be > 0.
Items count_rows(Matrix<int32_t> codes, Span<int64_t> radix, Span<int64_t> weights, int64_t rank_base);

/// The shard of every item: a hash of its key modulo n_shards.
std::vector<int32_t> shard_of(Span<uint64_t> keys, int32_t n_shards);

/// The union of item sets: one item per distinct key, its counts summed and its smallest rank kept, in
/// increasing rank order.
Items merge_items(const std::vector<ItemsView>& parts);

/// Item sets with disjoint keys, each in increasing rank order, interleaved into one set in increasing rank
/// order (a k-way merge); throws std::invalid_argument when a part is not sorted by rank.
Items interleave_by_rank(const std::vector<ItemsView>& parts);

/// codes(i, j) of key i (the inverse of the packing of count_rows).
void unpack_keys(Span<uint64_t> keys, Span<int64_t> radix, MutMatrix<int32_t> codes);

/// member[i] = whether keys[i] is one of `set` (any order, duplicates allowed).
void is_member(Span<uint64_t> keys, Span<uint64_t> set, MutSpan<uint8_t> member);

}  // namespace anoncore::itemsets

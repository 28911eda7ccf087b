#include "anoncore/itemsets/itemsets.hpp"

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>

#include "anoncore/core/hash.hpp"

namespace anoncore::itemsets {
namespace {

constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();  // never a key (keys are < 2^63)

inline uint64_t mix(uint64_t x) { return mix64(x); }

/// Open addressing (linear probing) from keys to item positions in an Items, grown at load 1/2.
class KeyTable {
 public:
  explicit KeyTable(int64_t expected) { rebuild(expected, nullptr); }

  /// The position of `key` in `items`, appending it (count 0, rank r) when absent.
  int64_t find_or_add(uint64_t key, uint64_t h, int64_t r, Items& items) {
    size_t s = static_cast<size_t>(h & mask_);
    while (true) {
      Slot& sl = slots_[s];
      if (sl.key == key) return sl.pos;
      if (sl.key == kEmpty) break;
      s = (s + 1) & mask_;
    }
    const auto pos = static_cast<int64_t>(items.keys.size());
    items.keys.push_back(key);
    items.counts.push_back(0);
    items.ranks.push_back(r);
    if (2 * (pos + 1) > static_cast<int64_t>(slots_.size())) {
      rebuild(2 * (pos + 1), &items);
    } else {
      slots_[s] = Slot{key, pos};
    }
    return pos;
  }

  /// The position of `key`, or -1.
  int64_t find(uint64_t key, uint64_t h) const {
    size_t s = static_cast<size_t>(h & mask_);
    while (slots_[s].key != kEmpty) {
      if (slots_[s].key == key) return slots_[s].pos;
      s = (s + 1) & mask_;
    }
    return -1;
  }

  void prefetch(uint64_t h) const { __builtin_prefetch(&slots_[static_cast<size_t>(h & mask_)]); }

 private:
  struct Slot {
    uint64_t key;
    int64_t pos;
  };
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;

  void rebuild(int64_t expected, const Items* items) {
    size_t cap = 1024;
    while (cap < static_cast<size_t>(2 * std::max<int64_t>(expected, 1))) cap <<= 1;
    slots_.assign(cap, Slot{kEmpty, -1});
    mask_ = cap - 1;
    if (items == nullptr) return;
    for (size_t p = 0; p < items->keys.size(); ++p) {
      size_t s = static_cast<size_t>(mix(items->keys[p]) & mask_);
      while (slots_[s].key != kEmpty) s = (s + 1) & mask_;
      slots_[s] = Slot{items->keys[p], static_cast<int64_t>(p)};
    }
  }
};

constexpr int64_t kBatch = 16;  // keys hashed and prefetched ahead of their probes

}  // namespace

std::vector<uint64_t> key_multipliers(Span<int64_t> radix) {
  std::vector<uint64_t> mult(static_cast<size_t>(radix.size), 1);
  unsigned __int128 space = 1;
  for (int64_t j = radix.size - 1; j >= 0; --j) {
    if (radix[j] < 1) throw std::invalid_argument("every radix must be >= 1");
    mult[static_cast<size_t>(j)] = static_cast<uint64_t>(space);
    space *= static_cast<unsigned __int128>(radix[j]);
    if (space >= (static_cast<unsigned __int128>(1) << 63))
      throw std::invalid_argument("the product of the radices must be below 2^63");
  }
  return mult;
}

Items count_rows(Matrix<int32_t> codes, Span<int64_t> radix, Span<int64_t> weights, int64_t rank_base) {
  const int64_t n = codes.rows, d = codes.cols;
  if (radix.size != d) throw std::invalid_argument("one radix per column expected");
  if (weights.size != 0 && weights.size != n) throw std::invalid_argument("weights must be empty or one per row");
  const std::vector<uint64_t> mult = key_multipliers(radix);
  Items items;
  KeyTable table(std::min<int64_t>(n, 1 << 16));
  uint64_t key[kBatch], h[kBatch];
  for (int64_t b0 = 0; b0 < n; b0 += kBatch) {
    const int64_t nb = std::min(kBatch, n - b0);
    for (int64_t b = 0; b < nb; ++b) {
      const int32_t* row = codes.row(b0 + b);
      uint64_t k = 0;
      for (int64_t j = 0; j < d; ++j) {
        if (row[j] < 0 || row[j] >= radix[j])
          throw std::out_of_range("code " + std::to_string(row[j]) + " out of range at row " +
                                  std::to_string(b0 + b) + ", column " + std::to_string(j));
        k += static_cast<uint64_t>(row[j]) * mult[static_cast<size_t>(j)];
      }
      key[b] = k;
      h[b] = mix(k);
      table.prefetch(h[b]);
    }
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t w = weights.size ? weights[b0 + b] : 1;
      if (w <= 0) throw std::invalid_argument("weights must be > 0");
      const int64_t pos = table.find_or_add(key[b], h[b], 0, items);
      items.counts[static_cast<size_t>(pos)] += w;
    }
  }
  for (size_t p = 0; p < items.ranks.size(); ++p) items.ranks[p] = rank_base + static_cast<int64_t>(p);
  return items;
}

std::vector<int32_t> shard_of(Span<uint64_t> keys, int32_t n_shards) {
  if (n_shards < 1) throw std::invalid_argument("n_shards must be >= 1");
  std::vector<int32_t> out(static_cast<size_t>(keys.size));
  for (int64_t i = 0; i < keys.size; ++i)
    out[static_cast<size_t>(i)] = static_cast<int32_t>((mix(keys[i] ^ 0x5bd1e9955bd1e995ULL) >> 33) %
                                                       static_cast<uint64_t>(n_shards));
  return out;
}

Items merge_items(const std::vector<ItemsView>& parts) {
  int64_t largest = 0;
  for (const auto& p : parts) {
    if (p.counts.size != p.keys.size || p.ranks.size != p.keys.size)
      throw std::invalid_argument("keys, counts and ranks must have the same length");
    largest = std::max(largest, p.keys.size);
  }
  Items items;
  items.keys.reserve(static_cast<size_t>(largest));
  items.counts.reserve(static_cast<size_t>(largest));
  items.ranks.reserve(static_cast<size_t>(largest));
  KeyTable table(largest);
  uint64_t h[kBatch];
  bool sorted = true;
  for (const auto& p : parts) {
    for (int64_t b0 = 0; b0 < p.keys.size; b0 += kBatch) {
      const int64_t nb = std::min(kBatch, p.keys.size - b0);
      for (int64_t b = 0; b < nb; ++b) {
        h[b] = mix(p.keys[b0 + b]);
        table.prefetch(h[b]);
      }
      for (int64_t b = 0; b < nb; ++b) {
        const int64_t i = b0 + b;
        if (p.counts[i] <= 0) throw std::invalid_argument("item counts must be > 0");
        const auto before = static_cast<int64_t>(items.keys.size());
        const auto pos = static_cast<size_t>(table.find_or_add(p.keys[i], h[b], p.ranks[i], items));
        items.counts[pos] += p.counts[i];
        if (static_cast<int64_t>(pos) < before) {
          items.ranks[pos] = std::min(items.ranks[pos], p.ranks[i]);
        } else if (pos > 0 && items.ranks[pos - 1] >= p.ranks[i]) {
          sorted = false;
        }
      }
    }
  }
  if (!sorted || !std::is_sorted(items.ranks.begin(), items.ranks.end())) {
    std::vector<int64_t> order(items.keys.size());
    for (size_t p = 0; p < order.size(); ++p) order[p] = static_cast<int64_t>(p);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return items.ranks[static_cast<size_t>(a)] < items.ranks[static_cast<size_t>(b)] ||
             (items.ranks[static_cast<size_t>(a)] == items.ranks[static_cast<size_t>(b)] && a < b);
    });
    Items out;
    out.keys.resize(order.size());
    out.counts.resize(order.size());
    out.ranks.resize(order.size());
    for (size_t p = 0; p < order.size(); ++p) {
      const auto q = static_cast<size_t>(order[p]);
      out.keys[p] = items.keys[q];
      out.counts[p] = items.counts[q];
      out.ranks[p] = items.ranks[q];
    }
    return out;
  }
  return items;
}

Items interleave_by_rank(const std::vector<ItemsView>& parts) {
  int64_t total = 0;
  for (const auto& p : parts) {
    if (p.counts.size != p.keys.size || p.ranks.size != p.keys.size)
      throw std::invalid_argument("keys, counts and ranks must have the same length");
    for (int64_t i = 1; i < p.ranks.size; ++i)
      if (p.ranks[i - 1] >= p.ranks[i]) throw std::invalid_argument("a part is not in increasing rank order");
    total += p.keys.size;
  }
  Items out;
  out.keys.resize(static_cast<size_t>(total));
  out.counts.resize(static_cast<size_t>(total));
  out.ranks.resize(static_cast<size_t>(total));
  using Head = std::pair<int64_t, size_t>;  // (rank, part)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
  std::vector<int64_t> at(parts.size(), 0);
  for (size_t q = 0; q < parts.size(); ++q)
    if (parts[q].keys.size > 0) heap.emplace(parts[q].ranks[0], q);
  size_t o = 0;
  while (!heap.empty()) {
    const size_t q = heap.top().second;
    heap.pop();
    const ItemsView& p = parts[q];
    // copy the run of this part that precedes the next head of the others
    const int64_t bound = heap.empty() ? std::numeric_limits<int64_t>::max() : heap.top().first;
    int64_t i = at[q];
    do {
      out.keys[o] = p.keys[i];
      out.counts[o] = p.counts[i];
      out.ranks[o] = p.ranks[i];
      ++o;
      ++i;
    } while (i < p.keys.size && p.ranks[i] < bound);
    at[q] = i;
    if (i < p.keys.size) heap.emplace(p.ranks[i], q);
  }
  return out;
}

void unpack_keys(Span<uint64_t> keys, Span<int64_t> radix, MutMatrix<int32_t> codes) {
  const std::vector<uint64_t> mult = key_multipliers(radix);
  const int64_t d = radix.size;
  if (codes.rows != keys.size || codes.cols != d) throw std::invalid_argument("codes must have shape (n_keys, d)");
  for (int64_t i = 0; i < keys.size; ++i) {
    uint64_t k = keys[i];
    int32_t* row = codes.row(i);
    for (int64_t j = 0; j < d; ++j) {
      const uint64_t m = mult[static_cast<size_t>(j)];
      const uint64_t c = k / m;
      if (c >= static_cast<uint64_t>(radix[j])) throw std::out_of_range("key out of the radix space");
      row[j] = static_cast<int32_t>(c);
      k -= c * m;
    }
  }
}

void is_member(Span<uint64_t> keys, Span<uint64_t> set, MutSpan<uint8_t> member) {
  if (member.size != keys.size) throw std::invalid_argument("member must have one entry per key");
  Items items;
  KeyTable table(set.size);
  for (int64_t i = 0; i < set.size; ++i) {
    if (set[i] == kEmpty) throw std::invalid_argument("a key must be below 2^64 - 1");
    table.find_or_add(set[i], mix(set[i]), 0, items);
  }
  for (int64_t i = 0; i < keys.size; ++i) member[i] = table.find(keys[i], mix(keys[i])) >= 0;
}

}  // namespace anoncore::itemsets

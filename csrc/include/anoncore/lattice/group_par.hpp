// The packed hash grouping on several threads (group_par.cpp): the same groups, numbered by first appearance,
// with the same keys and summed weights as the serial group_packed / group_rollup (freqset.hpp), so a search
// does the same work at any thread count. Used by the bottom grouping and by roll-ups of at least
// 2 * par_grain source classes (Engine::Impl::par_threads); internal to the lattice.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <memory>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/lattice/freqset.hpp"

namespace anoncore::lattice::detail {

/// A scratch buffer of at least n trivially constructible values whose old contents are dropped when it grows:
/// a RawVec (core/raw_vec.hpp), so its pages are first touched by the parallel passes that fill them, not by one
/// thread zeroing them.
template <class T>
struct RawBuf {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);
  RawVec<T> v;
  T* get(int64_t n) {
    if (static_cast<size_t>(n) > v.size()) {
      v.clear();  // (nothing to copy into the larger block)
      v.resize(static_cast<size_t>(n));
    }
    return v.data();
  }
};

/// An item scattered to its bucket: key and index (ItemW: and weight). In the bucket's grouping, the record at
/// position g of the bucket is reused for group g (key, index of its first item).
struct ItemU {
  uint64_t key;
  int64_t idx;
};
struct ItemW {
  uint64_t key;
  int64_t idx;
  int64_t w;
};

/// The buffers of the parallel groupings, kept by the caller's Scratch between calls (the roll-ups of one search reuse
/// them instead of faulting fresh pages in).
struct ParGroupBuffers {
  RawBuf<ItemU> items_u;     // the items scattered by bucket (unweighted / weighted)
  RawBuf<ItemW> items_w;
  RawBuf<int32_t> hs;        // per scattered item: its group in the bucket, then the group's global id
  RawBuf<uint8_t> first;     // per item: 1 where a group first appears
  RawBuf<uint64_t> bits;     // `first` packed 64 items a word
  RawBuf<int32_t> wpre;      // per word: first appearances before it in its chunk
  RawBuf<int64_t> gcount;    // unweighted: the groups' counts, at their bucket's offset
  std::vector<int64_t> off;  // per chunk and bucket: where the chunk's items of the bucket go
  std::vector<Scratch> sc;   // per thread: the bucket's or chunk's hash table (group_core)
  std::vector<uint64_t> lk;  // pre-aggregation: the chunks' groups' keys and weights, each chunk's first
  std::vector<int64_t> lw, lbase;
  RawBuf<uint64_t> masks;    // or_masks on several threads: the value masks of all chunks but the first
  RawBuf<int64_t> moff;      // the parallel histogram merges (freqset_par.cpp): per chunk and class, its offsets
  RawBuf<int64_t> mstart;    // per class: its run's first entry, then its merged entries' end
};

/// The sensitive histograms of the groups of rows, made by group_partitioned inside its buckets: vals[i] = row
/// i's value in [0, m); hoff / hval / hcnt as merge_row_histograms writes them (each group's values in the
/// order of their first rows), which they equal entry by entry.
struct RowHistograms {
  const int32_t* vals = nullptr;
  int64_t m = 0;
  RawVec<int64_t>* hoff = nullptr;
  RawVec<int32_t>* hval = nullptr;
  RawVec<int64_t>* hcnt = nullptr;
};

/// Group n packed keys keys[i] with weights w[i] (w == nullptr: weight 1) on T threads, partitioned by hash
/// (group_par.cpp): ids[i] = group (by first appearance), out_keys / out_count the groups' keys and summed
/// weights in that order; exactly the output of the serial grouping. Returns the number of groups.
/// dense_table as in group_core (the bottom's rows). hist (unweighted items only): the groups' histograms too.
int64_t group_partitioned(int T, int64_t n, const uint64_t* keys, const int64_t* w, bool dense_table,
                          ParGroupBuffers& buf, RawVec<int32_t>& ids, RawVec<uint64_t>& out_keys,
                          RawVec<int64_t>& out_count, const RowHistograms* hist = nullptr);

/// The second half of a pre-aggregated grouping (see preaggregate): the chunks' groups in buf.lk / lw / lbase
/// grouped (partitioned from 2 * grain on, else serially) and the items' ids (their groups in their chunks)
/// renumbered to the groups found. Returns the number of groups.
int64_t group_preaggregated(int T, int64_t n, int64_t chunk, int64_t grain, ParGroupBuffers& buf,
                            RawVec<int32_t>& ids, RawVec<uint64_t>& out_keys,
                            RawVec<int64_t>& out_count);

/// The caller's buffers for the parallel groupings (made on first use).
inline ParGroupBuffers& par_buffers(Scratch& s) {
  if (!s.par) s.par = std::make_shared<ParGroupBuffers>();
  return *s.par;
}

/// The chunks of a pre-aggregation: at least 32,768 items (larger chunks repeat more keys), at most 64.
inline int64_t preagg_chunk(int64_t n) {
  int64_t c = int64_t{1} << 15;
  while (c * 64 < n) c <<= 1;
  return c;
}

/// The items [lo, lo + nc) (keys key(lo + j), weights w[lo + j]) grouped on their own in the table of s:
/// ids[lo + j] = the item's group in the chunk, s.gkeys / s.gcount the chunk's groups in order of first
/// appearance, G their number. False (stopped) as soon as a group numbered cap or above appears.
template <class KeyFn, class WFn>
bool group_chunk(Scratch& s, KeyFn& key, WFn& w, int64_t lo, int64_t nc, int32_t* ids, int64_t cap, int32_t& G,
                 bool dense_table = false) {
  reserve_groups(s, nc);
  int64_t* oc = s.gcount.data();
  int32_t* ic = ids + lo;
  int64_t read = 0;
  return group_core(s, s.gtable, s.gen, nc, [&key, lo](int64_t j) { return key(lo + j); },
                    [&](int64_t j, int32_t g, bool is_new) {
    const int64_t wj = w(lo + j);
    if (is_new) {
      oc[g] = wj;
    } else {
      oc[g] += wj;
    }
    ic[j] = g;
    return g < cap;
  }, G, read, dense_table);
}

/// The pre-aggregation of a roll-up: each chunk of items grouped on its own with its keys computed on the fly
/// (ids[i] = its group in the chunk), unless a chunk finds more than half of its items distinct (then false:
/// the partitioned grouping pays off). The chunks' groups, concatenated in chunk order (each in its order of
/// first appearance), are the items of a second grouping whose order of first appearance is the items' own:
/// buf.lk / lw their keys and weights, buf.lbase each chunk's first.
template <class KeyFn>
bool preaggregate(int T, int64_t n, int64_t chunk, KeyFn key, const int64_t* w, ParGroupBuffers& buf,
                  RawVec<int32_t>& ids) {
  const int64_t NC = (n + chunk - 1) / chunk;
  if (buf.sc.size() < static_cast<size_t>(T)) buf.sc.resize(static_cast<size_t>(T));
  ids.resize(static_cast<size_t>(n));
  std::vector<std::vector<uint64_t>> ck(static_cast<size_t>(NC));
  std::vector<std::vector<int64_t>> cw(static_cast<size_t>(NC));
  std::atomic<bool> dense{false};
  auto wt = [w](int64_t i) { return w[i]; };
  parallel_chunks(n, chunk, T, [&](int64_t c, int64_t lo, int64_t hi) {
    if (dense.load(std::memory_order_relaxed)) return;
    Scratch& s = buf.sc[static_cast<size_t>(thread_index())];
    int32_t G = 0;
    if (!group_chunk(s, key, wt, lo, hi - lo, ids.data(), chunk / 2, G)) {  // (the last chunk may be short)
      dense.store(true, std::memory_order_relaxed);
      return;
    }
    ck[static_cast<size_t>(c)].assign(s.gkeys.data(), s.gkeys.data() + G);
    cw[static_cast<size_t>(c)].assign(s.gcount.data(), s.gcount.data() + G);
  });
  if (dense.load()) return false;
  buf.lbase.assign(static_cast<size_t>(NC + 1), 0);
  for (int64_t c = 0; c < NC; ++c)
    buf.lbase[static_cast<size_t>(c + 1)] = buf.lbase[static_cast<size_t>(c)] + static_cast<int64_t>(ck[static_cast<size_t>(c)].size());
  buf.lk.resize(static_cast<size_t>(buf.lbase[static_cast<size_t>(NC)]));
  buf.lw.resize(buf.lk.size());
  parallel_chunks(NC, 1, T, [&](int64_t c, int64_t, int64_t) {
    const auto b = static_cast<std::ptrdiff_t>(buf.lbase[static_cast<size_t>(c)]);
    std::copy(ck[static_cast<size_t>(c)].begin(), ck[static_cast<size_t>(c)].end(), buf.lk.begin() + b);
    std::copy(cw[static_cast<size_t>(c)].begin(), cw[static_cast<size_t>(c)].end(), buf.lw.begin() + b);
  });
  return true;
}

/// The fewest threads that group a roll-up by pre-aggregated chunks or a hash partition: these cost 1.1-2x the
/// serial grouping's CPU (the chunks' groups grouped again, or the partition's passes), and on a 2-core
/// machine they lost to one thread in sum (4M-row synthetic search: 355 vs 297 ms over its 45 large
/// roll-ups); two or three threads take group_halves (below), the bottom's rows group_partitioned.
inline constexpr int kRollupMinThreads = 4;

/// A roll-up's grouping on two threads: each half of the items grouped on its own (the second half's ids in
/// s.ids local to it); the second half's groups looked up, on both threads, in the first half's table (read
/// only); the groups found only in the second half numbered after the first half's, in their order; the
/// second half's ids renumbered. The first half's groups are numbered by their first appearance in it, which
/// is their first appearance in the items, and every other group first appears in the second half, so the
/// output is exactly group_rollup's. A roll-up that merges many classes into each group (its halves see
/// nearly the same groups) costs half the items on each thread and its groups' lookups, where pre-aggregating
/// by small chunks or partitioning the items by hash cost more than the serial grouping at two threads (the
/// 2M-row synthetic search on 2 cores: 693 -> 638-651 ms at two threads, 854 ms at one).
template <class KeyFn, class WFn>
int64_t group_halves(Scratch& s, int64_t n, KeyFn key, WFn w, RawVec<uint64_t>& out_keys,
                     RawVec<int64_t>& out_count, bool dense_table = false) {
  ParGroupBuffers& buf = par_buffers(s);
  if (buf.sc.size() < 2) buf.sc.resize(2);
  s.ids.resize(static_cast<size_t>(n));
  int32_t* ids = s.ids.data();
  const int64_t half = (n + 1) / 2;
  int32_t G[2] = {0, 0};
  parallel_chunks(n, half, 2, [&](int64_t c, int64_t lo, int64_t hi) {
    group_chunk(buf.sc[static_cast<size_t>(c)], key, w, lo, hi - lo, ids, int64_t{1} << 32, G[c], dense_table);
  });
  Scratch& s0 = buf.sc[0];
  Scratch& s1 = buf.sc[1];
  const int64_t G1 = G[1];
  // the second half's groups: their group in the first half (-1: none), counts added where found (distinct
  // groups of one half are distinct keys: no two add to one group); each of two chunks counts the groups the
  // first half lacks, which are then numbered after the first half's groups in their order (chunk 0's first),
  // their keys and counts written by their chunk, beside the first half's groups copied on both threads
  RawVec<int32_t>& map = buf.hs.v;
  map.resize(static_cast<size_t>(std::max<int64_t>(G1, 1)));
  int32_t* mp = map.data();
  const uint64_t* k1 = s1.gkeys.data();
  const int64_t* c1 = s1.gcount.data();
  int64_t* c0 = s0.gcount.data();
  const int64_t gchunk = std::max<int64_t>((G1 + 1) / 2, 1);
  int64_t miss[2] = {0, 0};
  parallel_chunks(G1, gchunk, 2, [&](int64_t c, int64_t lo, int64_t hi) {
    constexpr int64_t kPf = 16;
    const GSlot* tab = s0.gtable.data();
    const uint32_t sh = 64 - s0.last_lg;
    int64_t missing = 0;
    for (int64_t g = lo; g < hi; ++g) {
#if defined(__GNUC__) || defined(__clang__)
      if (g + kPf < hi) __builtin_prefetch(&tab[(k1[g + kPf] * kHashMul) >> sh]);
#endif
      const int32_t at = find_group(s0, k1[g]);
      mp[g] = at;
      if (at >= 0) c0[at] += c1[g];
      else ++missing;
    }
    miss[c] = missing;
  });
  const int64_t total = G[0] + miss[0] + miss[1];
  out_keys.resize(static_cast<size_t>(total));
  out_count.resize(static_cast<size_t>(total));
  uint64_t* ok = out_keys.data();
  int64_t* oc = out_count.data();
  const uint64_t* k0 = s0.gkeys.data();
  const int64_t g0chunk = std::max<int64_t>((G[0] + 1) / 2, 1);
  parallel_chunks(2, 1, 2, [&](int64_t c, int64_t, int64_t) {
    const int64_t a = std::min<int64_t>(G[0], c * g0chunk), b = std::min<int64_t>(G[0], (c + 1) * g0chunk);
    std::copy(k0 + a, k0 + b, ok + a);
    std::copy(c0 + a, c0 + b, oc + a);
    int64_t next = G[0] + (c == 0 ? 0 : miss[0]);
    for (int64_t g = c * gchunk, e = std::min(G1, (c + 1) * gchunk); g < e; ++g) {
      if (mp[g] >= 0) continue;
      ok[next] = k1[g];
      oc[next] = c1[g];
      mp[g] = static_cast<int32_t>(next++);
    }
  });
  int32_t* i1 = ids + half;
  parallel_chunks(n - half, (n - half + 1) / 2, 2, [&](int64_t, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) i1[i] = mp[i1[i]];
  });
  return total;
}

/// The rows of a table of at most kHalvesRowsMax rows on two threads (without histograms to make in the
/// buckets) are grouped by group_halves with dense tables rather than partitioned: census-income's 299,285
/// rows (90,565 classes), engine build 4.4-4.7 -> 3.9-4.2 ms; the partition's passes cost more than they save
/// below about 400,000 rows (synthetic rows of 100,000 / 300,000 / 520,000: 1.63 -> 1.30, 4.7-5.4 -> 4.4,
/// 8.4-9.3 -> 9.6-10.3 ms).
inline constexpr int64_t kHalvesRowsMax = 3 * (int64_t{1} << 17);
inline bool rows_in_halves(int T, int64_t n, bool hist) { return T == 2 && n <= kHalvesRowsMax && !hist; }

/// A roll-up's grouping (weights w): on one thread group_rollup, on two or three group_halves; else
/// pre-aggregated by chunks when they repeat keys (most roll-ups merge many classes), otherwise the keys
/// computed once on T threads and partitioned. Fills s.ids, out_keys and out_count alike, exactly as
/// group_rollup.
template <class KeyFn>
int64_t group_rollup_t(int T, int64_t grain, Scratch& s, int64_t n, KeyFn key, const int64_t* w,
                       RawVec<uint64_t>& out_keys, RawVec<int64_t>& out_count) {
  if (T < 2) return group_rollup(s, n, key, [w](int64_t i) { return w[i]; }, out_keys, out_count);
  if (T < kRollupMinThreads) return group_halves(s, n, key, [w](int64_t i) { return w[i]; }, out_keys, out_count);
  ParGroupBuffers& buf = par_buffers(s);
  const int64_t chunk = preagg_chunk(n);
  if (preaggregate(T, n, chunk, key, w, buf, s.ids))
    return group_preaggregated(T, n, chunk, grain, buf, s.ids, out_keys, out_count);
  s.keys.resize(static_cast<size_t>(n));
  uint64_t* k = s.keys.data();
  parallel_chunks(n, int64_t{1} << 15, T, [&](int64_t, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) k[i] = key(i);
  });
  return group_partitioned(T, n, k, w, false, buf, s.ids, out_keys, out_count);
}

}  // namespace anoncore::lattice::detail

// The packed hash grouping on several threads (group_par.cpp): the same groups, numbered by first appearance,
// with the same keys and summed weights as the serial group_packed / group_rollup (freqset.hpp), so a search
// does the same work at any thread count. Used by the bottom grouping and by roll-ups of at least
// 2 * par_grain source classes (Engine::Impl::par_threads); internal to the lattice.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <memory>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/lattice/freqset.hpp"

namespace anoncore::lattice::detail {

/// Raw memory for RawBuf: large blocks 2 MiB-aligned and, on Linux, marked for transparent huge pages (a
/// fresh buffer's first touch then faults a few 2 MiB pages instead of thousands of 4 KiB ones; a hint only).
void* raw_alloc(size_t bytes);
struct RawFree {
  void operator()(void* p) const { std::free(p); }
};

/// A buffer of trivially constructible values that grows without initialising (its pages are first touched
/// by the parallel passes that fill them, not by one thread zeroing them).
template <class T>
struct RawBuf {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);
  std::unique_ptr<T, RawFree> p;
  int64_t cap = 0;
  T* get(int64_t n) {
    if (n > cap) {
      p.reset();
      p.reset(static_cast<T*>(raw_alloc(static_cast<size_t>(n) * sizeof(T))));
      cap = n;
    }
    return p.get();
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

/// The buffers of group_keys_par, kept by the caller's Scratch between calls (the roll-ups of one search reuse
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
  std::vector<Scratch> sc;   // per thread: the bucket's hash table (group_core)
};

/// Group n packed keys keys[i] with weights w[i] (w == nullptr: weight 1) on T threads: ids[i] = group (by
/// first appearance), out_keys / out_count the groups' keys and summed weights in that order; exactly the
/// output of the serial grouping. Returns the number of groups. dense_table: the bottom's rows (as in
/// group_core; partitioned at once), else a roll-up (pre-aggregated by chunks first; grain: the chunks'
/// groups are partitioned from 2 * grain on).
int64_t group_keys_par(int T, int64_t n, const uint64_t* keys, const int64_t* w, bool dense_table, int64_t grain,
                       ParGroupBuffers& buf, std::vector<int32_t>& ids, std::vector<uint64_t>& out_keys,
                       std::vector<int64_t>& out_count);

/// The caller's buffers for group_keys_par (made on first use).
inline ParGroupBuffers& par_buffers(Scratch& s) {
  if (!s.par) s.par = std::make_shared<ParGroupBuffers>();
  return *s.par;
}

/// A roll-up's grouping: on one thread (T <= 1) group_rollup, else the keys key(i) computed once on T threads
/// (fixed chunks) and grouped by group_keys_par. Fills s.ids, out_keys and out_count alike.
template <class KeyFn>
int64_t group_rollup_t(int T, int64_t grain, Scratch& s, int64_t n, KeyFn key, const int64_t* w,
                       std::vector<uint64_t>& out_keys, std::vector<int64_t>& out_count) {
  if (T <= 1) return group_rollup(s, n, key, [w](int64_t i) { return w[i]; }, out_keys, out_count);
  ParGroupBuffers& buf = par_buffers(s);
  s.keys.resize(static_cast<size_t>(n));
  uint64_t* k = s.keys.data();
  parallel_chunks(n, int64_t{1} << 15, T, [&](int64_t, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) k[i] = key(i);
  });
  return group_keys_par(T, n, k, w, false, grain, buf, s.ids, out_keys, out_count);
}

}  // namespace anoncore::lattice::detail

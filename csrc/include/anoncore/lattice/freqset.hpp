// Frequency sets of the lattice engine: the classes of a node (packed 64-bit keys or generic code rows) with
// their sizes, sparse sensitive-value histograms (CSR) and value masks, the per-thread scratch buffers, and the
// grouping primitives every roll-up and the bottom grouping use (open-addressing hash groupings, mixed-radix
// keys, the run merge of sparse histograms). Internal to the lattice (namespace detail); see
// docs/lattice.md "How it works" for the roles of the rooms.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "anoncore/core/hash.hpp"
#include "anoncore/core/raw_vec.hpp"
#include "anoncore/criteria/class_criteria.hpp"

namespace anoncore::lattice::detail {

inline constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

using anoncore::mix64;

inline double round10(double x) { return std::floor(x * 1e10) / 1e10; }

using core::NoInitAlloc;
using core::raw_alloc;
using core::RawVec;

struct Qi {
  int32_t h = 0;
  int64_t n_leaves = 0;
  std::vector<int32_t> gen;                  // (n_leaves, h+1)
  std::vector<int64_t> card;                 // h+1
  std::vector<int64_t> lc_off;               // h+2 offsets into leaf_count
  std::vector<int64_t> leaf_count;           // concatenated by level
  std::vector<double> nu_base;               // h+1
  std::vector<std::vector<int32_t>> up;      // (h+1)^2 maps, level l1 code -> level l2 code (l2 >= l1)
  std::vector<int64_t> a_level;              // Σ_rows leaf_count(gen(v, l)) per level
  const std::vector<int32_t>& map(int32_t l1, int32_t l2) const { return up[static_cast<size_t>(l1 * (h + 1) + l2)]; }
  int64_t lc(int32_t l, int32_t code) const { return leaf_count[static_cast<size_t>(lc_off[static_cast<size_t>(l)] + code)]; }
};

struct FreqSet {
  std::vector<int32_t> levels;
  int64_t n_classes = 0;
  std::vector<int32_t> codes;  // n_classes * r (generic layout)
  RawVec<uint64_t> keys;  // n_classes packed codes, fixed bit field per QI (packed layout)
  RawVec<int64_t> count;
  // sparse sensitive-value histograms (CSR): class c holds (hval[i], hcnt[i]) for i in [hoff[c], hoff[c+1])
  RawVec<int64_t> hoff;
  RawVec<int32_t> hval;
  RawVec<int64_t> hcnt;
  // a merged set of a table whose counts fit 32 bits (Engine::Impl::narrow_runs) keeps its counts in hcnt32
  // instead (cnt32; hcnt empty): a merge reads each source entry's count and writes each merged one, so the
  // width is memory traffic (a standalone scatter of 1.07M items of 3 entries: 17 -> 13 ns an item)
  RawVec<uint32_t> hcnt32;
  bool cnt32 = false;
  // The set of sensitive values present in each class as a bit mask (value v: bit v), kept when the sensitive
  // attribute has at most 64 values and a criterion has a support part (Impl::use_mask): OR-ed along every
  // roll-up, so the monotone part is checked on every class without histograms (Impl::mask_violates).
  std::vector<uint64_t> vmask;
  // Deferred histograms: a roll-up judged early (by the optimal search) records its source (whose histograms
  // are present) and the class map instead of merging the histograms: a node failing on class size needs
  // none, and the other criteria merge the few classes they check on the fly (judge). They are merged
  // (exactly as an eager roll-up would) only when needed: when the set becomes the source of another roll-up
  // or is judged in full. hsrc == nullptr: the histograms are present.
  std::shared_ptr<FreqSet> hsrc;
  std::vector<int32_t> hids;
  int32_t mid_uses = 0;  // deferred: roll-ups that kept it deferred as their source (see Impl::rollup)
  int32_t pending = 0;  // cached: direct successors not yet evaluated (see Impl::remember)
  int64_t slot = 0;     // cached: position in the cache's flat index (+ cache_base)
};

struct HashSlot {
  uint64_t key;
  int32_t id;
};

struct NSlot {
  uint32_t gen;
  int32_t id;
};

struct GSlot {
  uint64_t key;
  int32_t id;
  uint32_t gen;
};

struct ParGroupBuffers;  // group_par.hpp

/// A histogram entry (value, count) in a merge's run. RunEntry32 (8 bytes) when every count fits 32 bits (a
/// table of fewer than 2^32 rows or total weight: Engine::Impl::narrow_runs), RunEntry (16 bytes) otherwise:
/// the run is written in random order and read back once, so its width is the merge's memory traffic (10M
/// synthetic rows, one thread: the search 4.14-4.19 -> 3.53-3.58 s with the narrow entries).
template <class C>
struct RunEntryOf {
  // (a user-provided default constructor: resizing a run buffer leaves the new entries unwritten, as every one is
  // written by the scatter before it is read; value-initialisation zeroed every entry first)
  RunEntryOf() {}  // NOLINT(modernize-use-equals-default)
  RunEntryOf(int64_t count, int32_t value) : c(static_cast<C>(count)), v(value) {}
  C c;
  int32_t v;
};
using RunEntry = RunEntryOf<int64_t>;
using RunEntry32 = RunEntryOf<uint32_t>;

/// A 4-byte run entry, a 24-bit count above an 8-bit value: when every count fits 24 bits and every value 8
/// (a table of fewer than 2^24 rows or total weight, at most 256 sensitive values: Engine::Impl::tiny_runs).
struct RunEntry24 {
  RunEntry24() {}  // NOLINT(modernize-use-equals-default) (as RunEntryOf: left unwritten)
  RunEntry24(int64_t count, int32_t value)
      : bits(static_cast<uint32_t>(count) << 8 | static_cast<uint32_t>(value)) {}
  uint32_t bits;
};
// The entries' fields, for every entry type.
template <class C>
inline int32_t entry_value(const RunEntryOf<C>& e) { return e.v; }
template <class C>
inline int64_t entry_count(const RunEntryOf<C>& e) { return static_cast<int64_t>(e.c); }
template <class C>
inline void set_entry_value(RunEntryOf<C>& e, int32_t v) { e.v = v; }
template <class C>
inline void set_entry_count(RunEntryOf<C>& e, int64_t c) { e.c = static_cast<C>(c); }
inline int32_t entry_value(const RunEntry24& e) { return static_cast<int32_t>(e.bits & 0xFFu); }
inline int64_t entry_count(const RunEntry24& e) { return static_cast<int64_t>(e.bits >> 8); }
inline void set_entry_value(RunEntry24& e, int32_t v) { e.bits = (e.bits & ~0xFFu) | static_cast<uint32_t>(v); }
inline void set_entry_count(RunEntry24& e, int64_t c) {
  e.bits = static_cast<uint32_t>(c) << 8 | (e.bits & 0xFFu);
}

/// The hash tables of the groupings outlive their Scratch on the thread that drops it (up to 4 MB of slots
/// a slot type): the next engine's groupings take them instead of zeroing new ones. A table is only valid with
/// its generation counter (its slots of the current generation are taken), so the two move together.
inline constexpr size_t kPooledTableBytes = size_t{1} << 22;
/// The memory of a grouping's hash table: raw_alloc's (transparent huge pages) from kHugeTableBytes on, the heap's
/// below. The bottom's table of 10M rows (64 MiB) on huge pages: its one-thread grouping 230-239 -> 203-211 ms;
/// tables of 4 MiB on huge pages (two threads' halves of 200,000 rows, fresh each build) made that build
/// 2.5-2.7 -> 3.5-3.6 ms, and 13 ms in some processes.
inline constexpr size_t kHugeTableBytes = size_t{1} << 25;
template <class T>
struct TableAlloc {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = TableAlloc<U>;
  };
  TableAlloc() = default;
  template <class U>
  TableAlloc(const TableAlloc<U>&) noexcept {}
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kHugeTableBytes) return static_cast<T*>(core::raw_alloc(bytes));
    return static_cast<T*>(::operator new(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) >= kHugeTableBytes) std::free(p);
    else ::operator delete(p);
  }
  template <class U>
  bool operator==(const TableAlloc<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const TableAlloc<U>&) const noexcept {
    return false;
  }
};
template <class Slot>
using SlotVec = std::vector<Slot, TableAlloc<Slot>>;
template <class Slot>
struct TablePool {
  SlotVec<Slot> table;
  uint32_t gen = 0;
  bool* gone;  // set when the thread's pool is destroyed (a Scratch dropped later on the thread keeps its table)
  explicit TablePool(bool* g) : gone(g) {}
  TablePool(const TablePool&) = delete;
  TablePool& operator=(const TablePool&) = delete;
  ~TablePool() { *gone = true; }
};
/// The thread's pool, or nullptr once it is destroyed (the thread exiting).
template <class Slot>
TablePool<Slot>* table_pool() {
  thread_local bool gone = false;  // (trivially destructible: readable through the thread's exit)
  if (gone) return nullptr;
  thread_local TablePool<Slot> pool(&gone);
  return &pool;
}
/// Swap in the thread's pooled table when it has at least cap slots (false: none such).
template <class Slot>
bool take_pooled_table(SlotVec<Slot>& table, uint32_t& gen, size_t cap) {
  TablePool<Slot>* pp = table_pool<Slot>();
  if (pp == nullptr) return false;
  TablePool<Slot>& p = *pp;
  if (p.table.size() < cap || p.gen >= std::numeric_limits<uint32_t>::max() - 1) return false;
  table.swap(p.table);
  std::swap(gen, p.gen);
  return true;
}
/// Keep a table (and its generation) in the thread's pool when it is the largest one not above the cap.
template <class Slot>
void donate_table(SlotVec<Slot>& table, uint32_t gen) {
  if (table.empty() || table.size() * sizeof(Slot) > kPooledTableBytes) return;
  TablePool<Slot>* pp = table_pool<Slot>();
  if (pp == nullptr || table.size() <= pp->table.size()) return;
  TablePool<Slot>& p = *pp;
  p.table.swap(table);
  p.gen = gen;
}

/// Reusable buffers of one thread.
struct Scratch {
  Scratch() = default;
  Scratch(const Scratch&) = default;
  Scratch(Scratch&&) noexcept = default;
  Scratch& operator=(const Scratch&) = default;
  Scratch& operator=(Scratch&&) noexcept = default;
  ~Scratch() {  // (a table moved out is empty: nothing donated)
    donate_table(gtable, gen);
    donate_table(ntable, ngen);
  }
  std::vector<HashSlot> table;
  SlotVec<GSlot> gtable;   // packed grouping, generation-stamped slots
  uint32_t gen = 0;
  SlotVec<NSlot> ntable;   // roll-up grouping, generation-stamped 8-byte slots
  uint32_t ngen = 0;
  RawVec<uint64_t> gkeys;  // (RawVec: room for n groups reserved without zeroing; a grouping writes each group
  RawVec<int64_t> gcount;  // it finds: the bottom's rows reserved 16 bytes a row, zeroed, for 4.3 rows a group)
  std::vector<uint64_t> keys;
  RawVec<int32_t> ids;  // (resized without zeroing: every grouping writes each row's id)
  std::vector<int32_t> slot;
  std::vector<uint8_t> viol;
  std::vector<uint8_t> viol_m;
  std::vector<int64_t> supp_codes;
  std::vector<int64_t> dense;    // m, all zero between uses (histogram merges)
  criteria::Workspace ws;        // the criteria core's buffers (judging one class)
  std::vector<int64_t> bucket;   // counting sort of source classes by destination
  std::vector<int64_t> order;
  std::vector<RunEntry> run;  // histogram entries grouped by destination class
  std::vector<RunEntry32> run32;  // the same with 32-bit counts
  std::vector<RunEntry24> run24;  // and with 24-bit counts, 8-bit values
  std::vector<int32_t> run_v;  // merge_row_histograms: the rows' values grouped by class
  // judging a deferred set: source classes per class (linked lists over the class map), one class's histogram
  std::vector<int64_t> lz_acc, lz_cnt;
  std::vector<int32_t> lz_val, lz_head;  // lz_head/lz_next: source classes per class (lists)
  std::vector<int32_t> lz_head2;         // two levels: the anchor's classes per source class
  RawVec<int32_t> lz_next, lz_next2;     // (every entry written by group_lists)
  std::vector<uint64_t> memo_key;  // mask_violates: verdicts by value mask (open addressing, 0 = empty)
  std::vector<uint8_t> memo_val;
  std::vector<int32_t> memo_hv;
  size_t memo_n = 0;
  std::shared_ptr<ParGroupBuffers> par;  // the parallel groupings' buffers (group_par.hpp), made on first use
  uint32_t last_lg = 0;  // log2 of the slots of the table of the last group_core (find_group reads it)
};

/// One class's run of entries x in [x0, x1) (value val(x), count cnt(x), in item order) merged through dense (all
/// zero before and after) from position out on: each value kept at its first entry (put_value(out, v)), then each
/// kept entry y given its summed count (put_count(y, c); value_at(y) reads its value back). Returns the end. The
/// write position never passes the read position, so the output may be the run itself (freqset_par.cpp).
template <class Val, class Cnt, class PutValue, class ValueAt, class PutCount>
inline int64_t merge_class_run(int64_t x0, int64_t x1, int64_t out, int64_t* dense, Val val, Cnt cnt,
                               PutValue put_value, ValueAt value_at, PutCount put_count) {
  const int64_t first = out;
  for (int64_t x = x0; x < x1; ++x) {
    // a value is kept at the first entry that finds its accumulator empty (no branch: the slot is written
    // every time and the end advances only then)
    const int32_t v = val(x);
    const int64_t d = dense[v];
    put_value(out, v);
    out += d == 0;
    dense[v] = d + cnt(x);
  }
  for (int64_t y = first; y < out; ++y) {
    const int32_t v = value_at(y);
    put_count(y, dense[v]);
    dense[v] = 0;
  }
  return out;
}

/// The second half of merge_histograms / merge_row_histograms: group g's entries x in [start[g], start[g+1])
/// (value val(x), count cnt(x), in item order) merged through a dense accumulator into CSR histograms, each
/// value at its first appearance in the run.
template <class Val, class Cnt, class CntVec>
void merge_runs(Scratch& s, int64_t G, int64_t m, int64_t total, const int64_t* start, Val val, Cnt cnt,
                RawVec<int64_t>& hoff, RawVec<int32_t>& hval, CntVec& hcnt) {
  using CT = typename CntVec::value_type;
  if (static_cast<int64_t>(s.dense.size()) < m) s.dense.assign(static_cast<size_t>(m), 0);
  int64_t* dense = s.dense.data();
  hoff.resize(static_cast<size_t>(G + 1));  // (hoff[g + 1] written for every g)
  hoff[0] = 0;
  hval.resize(static_cast<size_t>(total));  // an upper bound, trimmed below
  hcnt.resize(static_cast<size_t>(total));
  int32_t* hv = hval.data();
  CT* hc = hcnt.data();
  int64_t out = 0;
  for (int64_t g = 0; g < G; ++g) {
    out = merge_class_run(start[g], start[g + 1], out, dense, val, cnt, [hv](int64_t y, int32_t v) { hv[y] = v; },
                          [hv](int64_t y) { return hv[y]; }, [hc](int64_t y, int64_t c) { hc[y] = static_cast<CT>(c); });
    hoff[static_cast<size_t>(g + 1)] = out;
  }
  hval.resize(static_cast<size_t>(out));
  hcnt.resize(static_cast<size_t>(out));
}

/// The scratch's run buffer for entries E, with room for n entries (its old contents dropped when it grows).
template <class E>
E* run_buffer(Scratch& s, int64_t n) {
  std::vector<E>* r;
  if constexpr (std::is_same_v<E, RunEntry>) {
    r = &s.run;
  } else if constexpr (std::is_same_v<E, RunEntry32>) {
    r = &s.run32;
  } else {
    r = &s.run24;
  }
  if (r->size() < static_cast<size_t>(n)) {
    r->clear();  // (nothing to copy into the larger block; the entries are left unwritten)
    r->resize(static_cast<size_t>(n));
  }
  return r->data();
}

/// Sparse histograms of groups. The items' entries (value, count) are read in item order and scattered into
/// one contiguous run per group (counting sort by group id, upper bound = the items' entry counts), then each
/// run is merged through a dense accumulator. Reads are sequential; O(items + nnz + G).
/// item_nnz(i) gives the number of entries of item i, item_hist(i, add) calls add(value, count) for each.
/// E: the run's entries (RunEntry32 only when every count, merged ones included, fits 32 bits; RunEntry24 when
/// it fits 24 bits and every value 8); CntVec the output counts' vector (RawVec<uint32_t> when they fit 32 bits).
template <class E, class ItemNnz, class ItemHist, class CntVec>
void merge_histograms(Scratch& s, const int32_t* ids, int64_t n_items, int64_t G, int64_t m, ItemNnz item_nnz,
                      ItemHist item_hist, RawVec<int64_t>& hoff, RawVec<int32_t>& hval, CntVec& hcnt) {
  auto& start = s.bucket;
  start.assign(static_cast<size_t>(G + 1), 0);
  for (int64_t i = 0; i < n_items; ++i) start[static_cast<size_t>(ids[i]) + 1] += item_nnz(i);
  for (int64_t g = 0; g < G; ++g) start[static_cast<size_t>(g + 1)] += start[static_cast<size_t>(g)];
  const int64_t total = start[static_cast<size_t>(G)];
  E* run = run_buffer<E>(s, total);
  auto& pos = s.order;
  pos.assign(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < n_items; ++i) {
    int64_t& p = pos[static_cast<size_t>(ids[i])];
    item_hist(i, [&](int32_t v, int64_t c) {
      run[p] = E{c, v};  // value and count side by side: one cache line per scattered entry
      ++p;
    });
  }
  merge_runs(s, G, m, total, start.data(), [&](int64_t x) { return entry_value(run[x]); },
             [&](int64_t x) { return entry_count(run[x]); }, hoff, hval, hcnt);
}

/// merge_histograms for items of one value each with count 1 (the rows into the bottom classes), whose group
/// sizes are known: the runs hold the values alone (4 bytes per row instead of a 16-byte entry) and the
/// counting sort needs no counting pass. Same output, in the same order, as merge_histograms.
inline void merge_row_histograms(Scratch& s, const int32_t* ids, const int32_t* vals, int64_t n, int64_t G, int64_t m,
                          const int64_t* group_size, RawVec<int64_t>& hoff, RawVec<int32_t>& hval,
                          RawVec<int64_t>& hcnt) {
  auto& start = s.bucket;
  start.resize(static_cast<size_t>(G + 1));
  start[0] = 0;
  for (int64_t g = 0; g < G; ++g) start[static_cast<size_t>(g + 1)] = start[static_cast<size_t>(g)] + group_size[g];
  auto& pos = s.order;
  pos.assign(start.begin(), start.end() - 1);
  auto& run = s.run_v;
  run.resize(static_cast<size_t>(n));
  int32_t* rv = run.data();
  int64_t* ps = pos.data();
  for (int64_t i = 0; i < n; ++i) rv[ps[ids[i]]++] = vals[i];
  merge_runs(s, G, m, n, start.data(), [&](int64_t x) { return rv[x]; }, [](int64_t) { return int64_t{1}; }, hoff,
             hval, hcnt);
}

/// Dense ids (first appearance) of keys[0..n). Returns the number of groups.
inline int64_t densify(Scratch& s, int64_t n, uint64_t space) {
  s.ids.resize(static_cast<size_t>(n));
  int64_t next = 0;
  if (space <= static_cast<uint64_t>(2 * n + 4096)) {
    s.slot.assign(static_cast<size_t>(space), -1);
    for (int64_t i = 0; i < n; ++i) {
      int32_t& sl = s.slot[static_cast<size_t>(s.keys[static_cast<size_t>(i)])];
      if (sl < 0) sl = static_cast<int32_t>(next++);
      s.ids[static_cast<size_t>(i)] = sl;
    }
    return next;
  }
  uint64_t cap = 16;
  while (cap < static_cast<uint64_t>(2 * n)) cap <<= 1;
  s.table.assign(static_cast<size_t>(cap), HashSlot{0, -1});
  const uint64_t mask = cap - 1;
  HashSlot* tab = s.table.data();
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t k = s.keys[static_cast<size_t>(i)];
    uint64_t p = mix64(k) & mask;
    while (true) {
      HashSlot& sl = tab[p];
      if (sl.id < 0) {
        sl.key = k;
        sl.id = static_cast<int32_t>(next++);
        s.ids[static_cast<size_t>(i)] = sl.id;
        break;
      }
      if (sl.key == k) {
        s.ids[static_cast<size_t>(i)] = sl.id;
        break;
      }
      p = (p + 1) & mask;
    }
  }
  return next;
}

/// Group n items with r target codes code(i, j) in [0, card[j]). Mixed-radix 64-bit keys; when the key space
/// would overflow, the partial keys are re-densified (so any number of QIs works). Fills s.ids.
template <class CodeFn>
int64_t group_items(Scratch& s, int64_t n, int64_t r, const int64_t* card, CodeFn code) {
  {
    // Common case: the whole key space fits in 64 bits -> one row-major pass.
    unsigned __int128 sp = 1;
    bool fits = true;
    for (int64_t j = 0; j < r && fits; ++j) {
      sp *= static_cast<unsigned __int128>(std::max<int64_t>(1, card[j]));
      fits = sp <= static_cast<unsigned __int128>(kMaxU64);
    }
    if (fits && r > 0) {
      s.keys.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        uint64_t k = 0;
        for (int64_t j = 0; j < r; ++j) k = k * static_cast<uint64_t>(std::max<int64_t>(1, card[j])) + static_cast<uint64_t>(code(i, j));
        s.keys[static_cast<size_t>(i)] = k;
      }
      return densify(s, n, static_cast<uint64_t>(sp));
    }
  }
  s.keys.assign(static_cast<size_t>(n), 0);
  uint64_t space = 1;
  for (int64_t j = 0; j < r; ++j) {
    const auto c = static_cast<uint64_t>(std::max<int64_t>(1, card[j]));
    if (space > kMaxU64 / c) {
      const int64_t g = densify(s, n, space);
      for (int64_t i = 0; i < n; ++i) s.keys[static_cast<size_t>(i)] = static_cast<uint64_t>(s.ids[static_cast<size_t>(i)]);
      space = static_cast<uint64_t>(std::max<int64_t>(1, g));
    }
    for (int64_t i = 0; i < n; ++i) {
      uint64_t& k = s.keys[static_cast<size_t>(i)];
      k = k * c + static_cast<uint64_t>(code(i, j));
    }
    space *= c;
  }
  if (r == 0) return n > 0 ? (s.ids.assign(static_cast<size_t>(n), 0), 1) : 0;
  return densify(s, n, space);
}

/// Map key of a levels vector: one byte per level when every level is below 255 (r bytes: no allocation up to
/// 15 quasi-identifiers, the short-string buffer), else a 0xFF byte and the raw int32 levels (4r + 1 bytes).
/// The two lengths differ for any r, so the key is injective.
inline std::string node_key(const int32_t* lv, int64_t r) {
  bool small = true;
  for (int64_t j = 0; j < r && small; ++j) small = lv[j] >= 0 && lv[j] < 255;
  if (small) {
    std::string k(static_cast<size_t>(r), '\0');
    for (int64_t j = 0; j < r; ++j) k[static_cast<size_t>(j)] = static_cast<char>(static_cast<unsigned char>(lv[j]));
    return k;
  }
  std::string k(1, static_cast<char>(0xFF));
  k.append(reinterpret_cast<const char*>(lv), static_cast<size_t>(r) * sizeof(int32_t));
  return k;
}

inline constexpr uint64_t kHashMul = 0x9E3779B97F4A7C15ULL;

/// Room for n groups in s.gkeys / s.gcount (the keys and weights of the groups found, by first appearance).
inline void reserve_groups(Scratch& s, int64_t n) {
  if (s.gkeys.size() < static_cast<size_t>(n)) {
    s.gkeys.clear();  // (nothing to keep: the old contents are not copied into the larger block)
    s.gcount.clear();
    s.gkeys.resize(static_cast<size_t>(n));
    s.gcount.resize(static_cast<size_t>(n));
  }
}

/// The open-addressing grouping behind group_packed, group_narrow and group_bounded: n packed keys key(i)
/// into groups numbered by first appearance, their keys in s.gkeys (reserve_groups first). The table
/// starts at 2n slots up to 32,768 and grows x4 whenever it is half full (3/4 with
/// dense_table: the one-off bottom grouping of the rows, so a table of many groups is not four times larger
/// than it needs to be; that grouping starts at 2n slots up to 262,144 (4 MB), as the rows of a small table
/// are mostly distinct: Adult's engine build 0.67 -> 0.58 ms without the regrowths and the crowded probes, and
/// census-income's halves (group_halves) 4.4-4.7 -> 3.9-4.2 ms with a start above 65,536 slots). A roll-up of
/// fine classes keeps most of them apart (Adult row 8's search: 7,800 source classes a roll-up on average),
/// and a start at 8,192 slots regrew it once or twice (re-inserting up to half its groups each time): row 8
/// 283-286 -> 250-258 ms, row 2 43-44 -> 38 ms, the roll-ups that merge many classes no slower with the
/// larger table (generation-stamped slots: a start costs nothing). Slots are empty unless stamped with the
/// current generation (no clearing). The
/// slot of the key kPf items ahead is prefetched (a typical roll-up's table already outgrows L1; a hint
/// only: results do not depend on it), and those keys are computed once and kept in a ring until their
/// turn. Slot = GSlot (the key lives in the slot) or NSlot (8 bytes: the probe compares the group's key in
/// s.gkeys, which a small grouping keeps in L1). add(i, g, is_new) sees every item with its group and
/// returns false to stop: then read = items read and the result is false. G = groups found.
template <class Slot, class KeyFn, class AddFn>
bool group_core(Scratch& s, SlotVec<Slot>& table, uint32_t& table_gen, int64_t n, KeyFn key,
                       AddFn add, int32_t& G_out, int64_t& read, bool dense_table = false) {
  uint32_t lg = 4;
  while ((int64_t{1} << lg) < std::min<int64_t>(2 * n, dense_table ? (int64_t{1} << 18) : (int64_t{1} << 15))) ++lg;
  uint64_t* ok = s.gkeys.data();
  int32_t G = 0;
  Slot* tab = nullptr;
  uint64_t mask = 0;
  uint32_t sh = 0, gen = 0;
  int64_t grow_at = 0;
  auto put = [&](Slot& sl, uint64_t k, int32_t g) {
    if constexpr (std::is_same_v<Slot, GSlot>) {
      sl = GSlot{k, g, gen};
    } else {
      sl = NSlot{gen, g};
    }
  };
  auto setup = [&](uint32_t new_lg) {
    lg = new_lg;
    s.last_lg = lg;
    const uint64_t cap = uint64_t{1} << lg;
    if ((table.size() < cap || table_gen == std::numeric_limits<uint32_t>::max()) &&
        !take_pooled_table(table, table_gen, static_cast<size_t>(cap))) {
      table.assign(std::max<size_t>(static_cast<size_t>(cap), table.size()), Slot{});
      table_gen = 0;
    }
    gen = ++table_gen;
    tab = table.data();
    mask = cap - 1;
    sh = 64 - lg;
    grow_at = static_cast<int64_t>(dense_table ? cap / 4 * 3 : cap / 2);
    for (int32_t g = 0; g < G; ++g) {  // re-insert the groups found so far
      uint64_t p = (ok[g] * kHashMul) >> sh;
      while (tab[p].gen == gen) p = (p + 1) & mask;
      put(tab[p], ok[g], g);
    }
  };
  setup(lg);
  constexpr int64_t kPf = 16;
  uint64_t ring[kPf];
  for (int64_t i = 0; i < kPf && i < n; ++i) ring[i] = key(i);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t k = ring[i % kPf];
    if (i + kPf < n) {
      const uint64_t ka = key(i + kPf);
      ring[i % kPf] = ka;
#if defined(__GNUC__) || defined(__clang__)
      __builtin_prefetch(&tab[(ka * kHashMul) >> sh]);
#endif
    }
    uint64_t p = (k * kHashMul) >> sh;
    while (true) {
      Slot& sl = tab[p];
      if (sl.gen != gen) {
        put(sl, k, G);
        ok[G] = k;
        const int32_t g = G++;
        if (G >= grow_at) setup(lg + 2);
        if (!add(i, g, true)) {
          G_out = G;
          read = i + 1;
          return false;
        }
        break;
      }
      bool same;
      if constexpr (std::is_same_v<Slot, GSlot>) {
        same = sl.key == k;
      } else {
        same = ok[sl.id] == k;
      }
      if (same) {
        if (!add(i, sl.id, false)) {
          G_out = G;
          read = i + 1;
          return false;
        }
        break;
      }
      p = (p + 1) & mask;
    }
  }
  G_out = G;
  read = n;
  return true;
}

/// The group of key k in the table of s's last group_packed (16-byte slots, s.gtable), or -1. Read-only: several
/// threads may look up one table.
inline int32_t find_group(const Scratch& s, uint64_t k) {
  const GSlot* tab = s.gtable.data();
  const uint64_t mask = (uint64_t{1} << s.last_lg) - 1;
  for (uint64_t p = (k * kHashMul) >> (64 - s.last_lg);; p = (p + 1) & mask) {
    const GSlot& sl = tab[p];
    if (sl.gen != s.gen) return -1;
    if (sl.key == k) return sl.id;
  }
}

/// Group n packed keys key(i) with weights w(i) through the table of Slot: s.ids[i] = group (first
/// appearance), dst keys and counts.
template <class Slot, class KeyFn, class WFn>
int64_t group_weighted(Scratch& s, SlotVec<Slot>& table, uint32_t& table_gen, int64_t n, KeyFn key,
                              WFn w, RawVec<uint64_t>& out_keys, RawVec<int64_t>& out_count,
                              bool dense_table) {
  reserve_groups(s, n);
  s.ids.resize(static_cast<size_t>(n));
  int32_t* ids = s.ids.data();
  int64_t* oc = s.gcount.data();
  int32_t G = 0;
  int64_t read = 0;
  group_core(s, table, table_gen, n, key, [&](int64_t i, int32_t g, bool is_new) {
    if (is_new) {
      oc[g] = w(i);
    } else {
      oc[g] += w(i);
    }
    ids[i] = g;
    return true;
  }, G, read, dense_table);
  out_keys.assign(s.gkeys.data(), s.gkeys.data() + G);
  out_count.assign(oc, oc + G);
  return G;
}

/// Group n packed keys key(i) with weights w(i) (16-byte slots): s.ids[i] = group (first appearance), dst
/// keys and counts.
template <class KeyFn, class WFn>
int64_t group_packed(Scratch& s, int64_t n, KeyFn key, WFn w, RawVec<uint64_t>& out_keys,
                            RawVec<int64_t>& out_count, bool dense_table = false) {
  return group_weighted(s, s.gtable, s.gen, n, key, w, out_keys, out_count, dense_table);
}

/// group_packed with 8-byte slots (generation, group id; a probe compares the group's key in the group keys
/// found so far, which a small roll-up keeps in L1), so that the table of a roll-up of up to a few thousand
/// classes fits in L1 as well.
template <class KeyFn, class WFn>
int64_t group_narrow(Scratch& s, int64_t n, KeyFn key, WFn w, RawVec<uint64_t>& out_keys,
                            RawVec<int64_t>& out_count) {
  return group_weighted(s, s.ntable, s.ngen, n, key, w, out_keys, out_count, false);
}

/// The packed grouping of a roll-up: group_narrow for the small ones (a few thousand classes, most roll-ups
/// of Adult), group_packed otherwise (same groups, ids and order either way).
inline constexpr int64_t kNarrowMax = 16384;
template <class KeyFn, class WFn>
int64_t group_rollup(Scratch& s, int64_t n, KeyFn key, WFn w, RawVec<uint64_t>& out_keys,
                            RawVec<int64_t>& out_count) {
  if (n <= kNarrowMax) return group_narrow(s, n, key, w, out_keys, out_count);
  return group_packed(s, n, key, w, out_keys, out_count);
}

/// Hash grouping of n packed keys with weights w (group_core, without the class map) that maintains the
/// bound B of rollup_dm_bounded and stops as soon as (double) B > cut; read = items read.
template <class KeyFn>
bool group_bounded(Scratch& s, int64_t n, KeyFn key, const int64_t* w, double cut, int64_t& B,
                          int64_t& read, RawVec<uint64_t>& out_keys, RawVec<int64_t>& out_count) {
  reserve_groups(s, n);
  int64_t* oc = s.gcount.data();
  int32_t G = 0;
  const bool done = group_core(s, s.gtable, s.gen, n, key, [&](int64_t i, int32_t g, bool is_new) {
    if (is_new) {
      oc[g] = w[i];
      return true;
    }
    int64_t& c = oc[g];
    B += 2 * c * w[i];
    c += w[i];
    return !(static_cast<double>(B) > cut);
  }, G, read);
  if (!done) return false;
  out_keys.assign(s.gkeys.data(), s.gkeys.data() + G);
  out_count.assign(oc, oc + G);
  return true;
}

}  // namespace anoncore::lattice::detail

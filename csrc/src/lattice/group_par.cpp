// The packed hash grouping on several threads (issue 16): the bottom's rows and a large roll-up's source
// classes grouped with exactly the serial output (groups numbered by first appearance, their keys, their
// summed weights), so threads never change a search. Two ways, both with chunks and buckets fixed by n alone:
//  - partitioned (the bottom's rows; a roll-up whose chunks hardly repeat a key): the items are split by hash
//    into P buckets, each bucket is grouped on its own (keys never span buckets) in a table that stays in the
//    core's cache, and the groups are numbered by their first items:
//      1. per chunk of items, the count of its items per bucket (bucket-major prefix sums: a stable scatter);
//      2. per chunk, its items scattered as (key, index[, weight]) records into their buckets, in item order;
//      3. per bucket, group_core (the serial grouping) over its records: each record's group in the bucket,
//         each group's key, weight sum and first item (the group's first record: the scatter is stable),
//         and a flag on that item;
//      4. per chunk, the flags packed 64 to a word with the flags before each word (a rank structure): the
//         global id of a group is the number of first items before its own;
//      5. per bucket, each group's global id and its count written at that id, and each record's group
//         replaced by the global id;
//      6. per chunk, the items replayed through the scatter of pass 2 (same buckets, same cursors), each
//         reading its record's global id: ids in item order with sequential writes, and each group's key
//         written at its first item (in item order: sequential too).
//  - pre-aggregated (a roll-up, whose chunks repeat keys: most merge many classes): each chunk grouped on its
//    own, the chunks' groups (in chunk order, each chunk's in its order of first appearance: the items' order
//    of first appearance) grouped in turn, partitioned when they are many, and the items renumbered.
// Every pass is parallel; buckets are taken dynamically, chunks too (their outputs have fixed places).
#include "anoncore/lattice/group_par.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "anoncore/lattice/lattice.hpp"

namespace anoncore::lattice::detail {

namespace {

/// The partition of a call: chunks of a power-of-two multiple of 64 items (at most 64 chunks) and P buckets
/// of about 8,192 items (16 to 512), from n alone.
struct Plan {
  int64_t n = 0, chunk = 0, NC = 0, P = 0;
  uint32_t lg_chunk = 0, lg_p = 0;
  // (another multiplier than group_core's table, whose slots take the top bits of k * kHashMul)
  static constexpr uint64_t kBucketMul = 0xD6E8FEB86659FD93ULL;
  uint32_t bucket(uint64_t k) const { return static_cast<uint32_t>((k * kBucketMul) >> (64 - lg_p)); }
};

Plan plan_for(int64_t n) {
  Plan p;
  p.n = n;
  p.lg_chunk = 10;
  while ((int64_t{64} << p.lg_chunk) < n) ++p.lg_chunk;
  p.chunk = int64_t{1} << p.lg_chunk;
  p.NC = (n + p.chunk - 1) / p.chunk;
  p.lg_p = 4;
  while (p.lg_p < 9 && (int64_t{8192} << p.lg_p) < n) ++p.lg_p;
  p.P = int64_t{1} << p.lg_p;
  return p;
}

inline int64_t weight_of(const ItemU&) { return 1; }
inline int64_t weight_of(const ItemW& it) { return it.w; }
inline void set_item(ItemU& it, uint64_t k, int64_t i, const int64_t*) { it = ItemU{k, i}; }
inline void set_item(ItemW& it, uint64_t k, int64_t i, const int64_t* w) { it = ItemW{k, i, w[i]}; }

/// Passes 1 and 2: off[c * P + b] = where chunk c's first item of bucket b goes, bstart[b] = bucket b's
/// first position; the records scattered into `items`; `first` zeroed.
template <class Item>
void scatter(int T, const Plan& pl, const uint64_t* keys, const int64_t* w, ParGroupBuffers& buf, Item* items,
             uint8_t* first, std::vector<int64_t>& bstart, const int32_t* vals, int32_t* rv) {
  const int64_t P = pl.P;
  std::vector<int64_t>& off = buf.off;
  off.assign(static_cast<size_t>(pl.NC * P), 0);
  parallel_chunks(pl.n, pl.chunk, T, [&](int64_t c, int64_t lo, int64_t hi) {
    int64_t* o = off.data() + c * P;
    const uint32_t sh = 64 - pl.lg_p;
    const uint64_t* kk = keys;
    for (int64_t i = lo; i < hi; ++i) o[(kk[i] * Plan::kBucketMul) >> sh]++;
    std::memset(first + lo, 0, static_cast<size_t>(hi - lo));
  });
  bstart.assign(static_cast<size_t>(P + 1), 0);
  int64_t acc = 0;
  for (int64_t b = 0; b < P; ++b) {
    bstart[static_cast<size_t>(b)] = acc;
    for (int64_t c = 0; c < pl.NC; ++c) {
      int64_t& v = off[static_cast<size_t>(c * P + b)];
      const int64_t x = v;
      v = acc;
      acc += x;
    }
  }
  bstart[static_cast<size_t>(P)] = acc;
  parallel_chunks(pl.n, pl.chunk, T, [&](int64_t c, int64_t lo, int64_t hi) {
    std::vector<int64_t> cur(off.begin() + c * P, off.begin() + (c + 1) * P);
    int64_t* cu = cur.data();
    const uint32_t sh = 64 - pl.lg_p;
    const uint64_t* kk = keys;
    Item* its = items;
    if (rv != nullptr) {  // (each record's sensitive value beside it: RowHistograms)
      for (int64_t i = lo; i < hi; ++i) {
        const uint64_t k = kk[i];
        const int64_t at = cu[(k * Plan::kBucketMul) >> sh]++;
        set_item(its[at], k, i, w);
        rv[at] = vals[i];
      }
      return;
    }
    for (int64_t i = lo; i < hi; ++i) {
      const uint64_t k = kk[i];
      set_item(its[cu[(k * Plan::kBucketMul) >> sh]++], k, i, w);
    }
  });
}

/// Pass 3: each bucket grouped by group_core. hs[j] = the group in its bucket of record j; a group g of
/// bucket b keeps its key and first item in record bstart[b] + g and its weight in gcount[bstart[b] + g];
/// first[i] = 1 where a group first appears; ng[b] = bucket b's groups.
template <class Item>
void group_buckets(int T, const Plan& pl, const std::vector<int64_t>& bstart, bool dense_table, ParGroupBuffers& buf,
                   Item* items, int32_t* hs, uint8_t* first, int64_t* gcount, std::vector<int32_t>& ng) {
  parallel_chunks(pl.P, 1, T, [&](int64_t b, int64_t, int64_t) {
    const int64_t lo = bstart[static_cast<size_t>(b)];
    const int64_t nb = bstart[static_cast<size_t>(b + 1)] - lo;
    ng[static_cast<size_t>(b)] = 0;
    if (nb == 0) return;
    Scratch& s = buf.sc[static_cast<size_t>(thread_index())];
    Item* it = items + lo;
    int32_t* h = hs + lo;
    reserve_groups(s, nb);
    int64_t* oc = s.gcount.data();
    int32_t G = 0;
    int64_t read = 0;
    // (the records are read in order and group g <= record j: record g is free for the group once read)
    group_core(s, s.gtable, s.gen, nb, [it](int64_t j) { return it[j].key; }, [&](int64_t j, int32_t g, bool is_new) {
      const int64_t wj = weight_of(it[j]);
      if (is_new) {
        oc[g] = wj;
        first[it[j].idx] = 1;
        it[g].idx = it[j].idx;
      } else {
        oc[g] += wj;
      }
      h[j] = g;
      return true;
    }, G, read, dense_table);
    const uint64_t* gk = s.gkeys.data();
    for (int32_t g = 0; g < G; ++g) {
      it[g].key = gk[g];
      gcount[lo + g] = oc[g];
    }
    ng[static_cast<size_t>(b)] = G;
  });
}

/// Pass 4: bits / wpre (the rank structure of `first`), cbase[c] = first appearances before chunk c.
void rank_flags(int T, const Plan& pl, const uint8_t* first, uint64_t* bits, int32_t* wpre,
                std::vector<int64_t>& cbase) {
  cbase.assign(static_cast<size_t>(pl.NC + 1), 0);
  parallel_chunks(pl.n, pl.chunk, T, [&](int64_t c, int64_t lo, int64_t hi) {
    int32_t acc = 0;
    for (int64_t wd = lo >> 6; (wd << 6) < hi; ++wd) {
      const int64_t b0 = wd << 6, e = std::min(hi, b0 + 64);
      uint64_t m = 0;
      for (int64_t i = b0; i < e; ++i) m |= static_cast<uint64_t>(first[i]) << (i - b0);
      bits[wd] = m;
      wpre[wd] = acc;
      acc += __builtin_popcountll(m);
    }
    cbase[static_cast<size_t>(c + 1)] = acc;
  });
  for (int64_t c = 0; c < pl.NC; ++c) cbase[static_cast<size_t>(c + 1)] += cbase[static_cast<size_t>(c)];
}

/// The histograms of one bucket's G groups (unweighted records [lo, lo + nb): hs their groups, rv their values):
/// the records counting-sorted by group (stable: each group's rows stay in row order) and each group's run
/// merged by merge_class_run, as merge_row_histograms does; its entries go to tv / tc from lo on (a bucket has
/// no more entries than records), and group g's count and first entry to nnz / eoff at its global id gid[g].
struct BucketHist {
  const int32_t* rv;
  int32_t* tv;
  int64_t* tc;
  int32_t* nnz;
  int64_t* eoff;
  int64_t m;
};

void bucket_histograms(const BucketHist& bh, Scratch& s, int64_t lo, int64_t nb, int32_t G, const int32_t* h,
                       const int64_t* gcount, const int32_t* gid) {
  if (static_cast<int64_t>(s.dense.size()) < bh.m) s.dense.assign(static_cast<size_t>(bh.m), 0);
  std::vector<int64_t>& st = s.bucket;
  std::vector<int64_t>& pos = s.order;
  st.resize(static_cast<size_t>(G) + 1);
  pos.resize(static_cast<size_t>(G));
  st[0] = 0;
  for (int32_t g = 0; g < G; ++g) {
    pos[static_cast<size_t>(g)] = st[static_cast<size_t>(g)];
    st[static_cast<size_t>(g) + 1] = st[static_cast<size_t>(g)] + gcount[lo + g];
  }
  s.run_v.resize(static_cast<size_t>(nb));
  int32_t* sv = s.run_v.data();
  const int32_t* rv = bh.rv + lo;
  for (int64_t j = 0; j < nb; ++j) sv[pos[static_cast<size_t>(h[j])]++] = rv[j];
  int32_t* tv = bh.tv;
  int64_t* tc = bh.tc;
  int64_t out = lo;
  for (int32_t g = 0; g < G; ++g) {
    const int64_t b0 = out;
    out = merge_class_run(st[static_cast<size_t>(g)], st[static_cast<size_t>(g) + 1], out, s.dense.data(),
                          [sv](int64_t x) { return sv[x]; }, [](int64_t) { return int64_t{1}; },
                          [tv](int64_t y, int32_t v) { tv[y] = v; }, [tv](int64_t y) { return tv[y]; },
                          [tc](int64_t y, int64_t c) { tc[y] = c; });
    bh.nnz[gid[g]] = static_cast<int32_t>(out - b0);
    bh.eoff[gid[g]] = b0;
  }
}

/// Pass 5: the groups' global ids (first appearances before their first items), their counts at those ids,
/// and hs[j] = the global id of record j's group (bh: each bucket's histograms first, bucket_histograms).
template <class Item>
void number_groups(int T, const Plan& pl, const std::vector<int64_t>& bstart, const std::vector<int32_t>& ng,
                   const std::vector<int64_t>& cbase, const uint64_t* bits, const int32_t* wpre, ParGroupBuffers& buf,
                   const Item* items, const int64_t* gcount, int32_t* hs, int64_t* out_count,
                   const BucketHist* bh) {
  parallel_chunks(pl.P, 1, T, [&](int64_t b, int64_t, int64_t) {
    const int64_t lo = bstart[static_cast<size_t>(b)];
    const int64_t nb = bstart[static_cast<size_t>(b + 1)] - lo;
    const int32_t G = ng[static_cast<size_t>(b)];
    if (G == 0) return;
    std::vector<int32_t>& gid = buf.sc[static_cast<size_t>(thread_index())].slot;
    gid.resize(static_cast<size_t>(G));
    const Item* it = items + lo;
    for (int32_t g = 0; g < G; ++g) {
      const int64_t f = it[g].idx, wd = f >> 6;
      const int64_t id = cbase[static_cast<size_t>(f >> pl.lg_chunk)] + wpre[wd] +
                         __builtin_popcountll(bits[wd] & ((uint64_t{1} << (f & 63)) - 1));
      gid[static_cast<size_t>(g)] = static_cast<int32_t>(id);
      out_count[id] = gcount[lo + g];
    }
    int32_t* h = hs + lo;
    const int32_t* gi = gid.data();
    if (bh != nullptr) bucket_histograms(*bh, buf.sc[static_cast<size_t>(thread_index())], lo, nb, G, h, gcount, gi);
    for (int64_t j = 0; j < nb; ++j) h[j] = gi[h[j]];
  });
}

/// The groups' histograms in global order (RowHistograms) from the buckets' entries (tv / tc, group g's at
/// eoff[g], nnz[g] of them): hoff the prefix sums of nnz (by chunks of groups), then each group's entries copied.
void place_histograms(int T, int64_t G, const BucketHist& bh, const RowHistograms& out) {
  constexpr int64_t kChunk = int64_t{1} << 16;
  const int64_t NC = (G + kChunk - 1) / kChunk;
  std::vector<int64_t> base(static_cast<size_t>(NC) + 1, 0);
  parallel_chunks(G, kChunk, T, [&](int64_t c, int64_t lo, int64_t hi) {
    int64_t acc = 0;
    for (int64_t g = lo; g < hi; ++g) acc += bh.nnz[g];
    base[static_cast<size_t>(c) + 1] = acc;
  });
  for (int64_t c = 0; c < NC; ++c) base[static_cast<size_t>(c) + 1] += base[static_cast<size_t>(c)];
  RawVec<int64_t>& hoff = *out.hoff;
  hoff.resize(static_cast<size_t>(G) + 1);
  out.hval->resize(static_cast<size_t>(base[static_cast<size_t>(NC)]));
  out.hcnt->resize(static_cast<size_t>(base[static_cast<size_t>(NC)]));
  int64_t* ho = hoff.data();
  int32_t* hv = out.hval->data();
  int64_t* hc = out.hcnt->data();
  ho[G] = base[static_cast<size_t>(NC)];
  parallel_chunks(G, kChunk, T, [&](int64_t c, int64_t lo, int64_t hi) {
    int64_t at = base[static_cast<size_t>(c)];
    for (int64_t g = lo; g < hi; ++g) {
      ho[g] = at;
      const int64_t e = bh.eoff[g];
      for (int32_t x = 0; x < bh.nnz[g]; ++x, ++at) {
        hv[at] = bh.tv[e + x];
        hc[at] = bh.tc[e + x];
      }
    }
  });
}

template <class Item>
int64_t group_par_impl(int T, int64_t n, const uint64_t* keys, const int64_t* w, bool dense_table,
                       ParGroupBuffers& buf, Item* items, RawVec<int32_t>& ids, RawVec<uint64_t>& out_keys,
                       RawVec<int64_t>& out_count, const RowHistograms* hist) {
  const Plan pl = plan_for(n);
  uint8_t* first = buf.first.get(n);
  int32_t* hs = buf.hs.get(n);
  int64_t* gcount = buf.gcount.get(n);
  std::vector<int64_t> bstart, cbase;
  // (the histograms' buffers live for this call only: the bottom's build)
  RawVec<int32_t> rv, tv, nnz;
  RawVec<int64_t> tc, eoff;
  if (hist != nullptr) {
    rv.resize(static_cast<size_t>(n));
    tv.resize(static_cast<size_t>(n));
    tc.resize(static_cast<size_t>(n));
  }
  scatter(T, pl, keys, w, buf, items, first, bstart, hist != nullptr ? hist->vals : nullptr,
          hist != nullptr ? rv.data() : nullptr);
  std::vector<int32_t> ng(static_cast<size_t>(pl.P), 0);
  group_buckets(T, pl, bstart, dense_table, buf, items, hs, first, gcount, ng);
  const int64_t NW = (n + 63) / 64;
  uint64_t* bits = buf.bits.get(NW);
  int32_t* wpre = buf.wpre.get(NW);
  rank_flags(T, pl, first, bits, wpre, cbase);
  const int64_t G = cbase[static_cast<size_t>(pl.NC)];
  out_keys.resize(static_cast<size_t>(G));
  out_count.resize(static_cast<size_t>(G));
  BucketHist bh{rv.data(), tv.data(), tc.data(), nullptr, nullptr, hist != nullptr ? hist->m : 0};
  if (hist != nullptr) {
    nnz.resize(static_cast<size_t>(G));
    eoff.resize(static_cast<size_t>(G));
    bh.nnz = nnz.data();
    bh.eoff = eoff.data();
  }
  number_groups(T, pl, bstart, ng, cbase, bits, wpre, buf, items, gcount, hs, out_count.data(),
                hist != nullptr ? &bh : nullptr);
  if (hist != nullptr) place_histograms(T, G, bh, *hist);
  ids.resize(static_cast<size_t>(n));
  int32_t* out_ids = ids.data();
  const std::vector<int64_t>& off = buf.off;
  parallel_chunks(n, pl.chunk, T, [&](int64_t c, int64_t lo, int64_t hi) {  // pass 6: the scatter replayed
    std::vector<int64_t> cur(off.begin() + c * pl.P, off.begin() + (c + 1) * pl.P);
    int64_t* cu = cur.data();
    const uint32_t sh = 64 - pl.lg_p;
    const uint64_t* kk = keys;
    const int32_t* h = hs;
    const uint8_t* fi = first;
    int32_t* oi = out_ids;
    uint64_t* ok = out_keys.data();
    uint64_t sink = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const uint64_t k = kk[i];
      const int32_t g = h[cu[(k * Plan::kBucketMul) >> sh]++];
      oi[i] = g;
      // a group's key at its first item: in item order these stores are sequential (the others go to a sink,
      // no branch)
      *(fi[i] != 0 ? ok + g : &sink) = k;
    }
  });
  return G;
}

}  // namespace

int64_t group_partitioned(int T, int64_t n, const uint64_t* keys, const int64_t* w, bool dense_table,
                          ParGroupBuffers& buf, RawVec<int32_t>& ids, RawVec<uint64_t>& out_keys,
                          RawVec<int64_t>& out_count, const RowHistograms* hist) {
  if (hist != nullptr && w != nullptr) throw std::logic_error("group_partitioned: histograms of weighted items");
  if (n <= 0) {
    ids.clear();
    out_keys.clear();
    out_count.clear();
    if (hist != nullptr) {
      hist->hoff->assign(1, 0);
      hist->hval->clear();
      hist->hcnt->clear();
    }
    return 0;
  }
  T = std::max(1, T);
  if (buf.sc.size() < static_cast<size_t>(T)) buf.sc.resize(static_cast<size_t>(T));
  if (w == nullptr)
    return group_par_impl(T, n, keys, w, dense_table, buf, buf.items_u.get(n), ids, out_keys, out_count, hist);
  return group_par_impl(T, n, keys, w, dense_table, buf, buf.items_w.get(n), ids, out_keys, out_count, nullptr);
}

int64_t group_preaggregated(int T, int64_t n, int64_t chunk, int64_t grain, ParGroupBuffers& buf,
                            RawVec<int32_t>& ids, RawVec<uint64_t>& out_keys,
                            RawVec<int64_t>& out_count) {
  const std::vector<uint64_t>& lk = buf.lk;
  const std::vector<int64_t>& lw = buf.lw;
  const std::vector<int64_t>& lbase = buf.lbase;
  const auto L = static_cast<int64_t>(lk.size());
  RawVec<int32_t> lid;
  int64_t G;
  if (L >= 2 * grain) {
    G = group_partitioned(T, L, lk.data(), lw.data(), false, buf, lid, out_keys, out_count);
  } else {
    Scratch& s = buf.sc[0];
    const uint64_t* kp = lk.data();
    const int64_t* wp = lw.data();
    G = group_packed(s, L, [kp](int64_t i) { return kp[i]; }, [wp](int64_t i) { return wp[i]; }, out_keys, out_count);
    lid.assign(s.ids.begin(), s.ids.begin() + L);
  }
  int32_t* out_ids = ids.data();
  const int32_t* li = lid.data();
  parallel_chunks(n, chunk, T, [&](int64_t c, int64_t lo, int64_t hi) {
    const int32_t* m = li + lbase[static_cast<size_t>(c)];
    for (int64_t i = lo; i < hi; ++i) out_ids[i] = m[out_ids[i]];
  });
  return G;
}

}  // namespace anoncore::lattice::detail

namespace anoncore::lattice {

KeyGroups group_keys(Span<uint64_t> keys, Span<int64_t> weights, int n_threads, bool rows, int64_t grain) {
  if (weights.size != 0 && weights.size != keys.size)
    throw std::invalid_argument("weights has length " + std::to_string(weights.size) + ", expected 0 or " +
                                std::to_string(keys.size));
  if (keys.size >= (int64_t{1} << 31)) throw std::invalid_argument("at most 2**31 - 1 keys");
  const int64_t n = keys.size;
  const uint64_t* k = keys.data;
  const int64_t* w = weights.size != 0 ? weights.data : nullptr;
  KeyGroups out;
  detail::Scratch s;
  const int T = resolve_threads(n_threads);
  if (rows && detail::rows_in_halves(T, n, false)) {
    auto w1 = [w](int64_t i) { return w != nullptr ? w[i] : int64_t{1}; };
    detail::group_halves(s, n, [k](int64_t i) { return k[i]; }, w1, out.keys, out.counts, true);
  } else if (T > 1 && rows) {
    detail::group_partitioned(T, n, k, w, true, detail::par_buffers(s), s.ids, out.keys, out.counts);
  } else if (T >= 2) {
    std::vector<int64_t> ones;
    if (w == nullptr) ones.assign(static_cast<size_t>(n), 1);
    detail::group_rollup_t(T, grain, s, n, [k](int64_t i) { return k[i]; }, w != nullptr ? w : ones.data(), out.keys,
                           out.counts);
  } else if (w != nullptr) {
    detail::group_packed(s, n, [k](int64_t i) { return k[i]; }, [w](int64_t i) { return w[i]; }, out.keys,
                         out.counts, rows);
  } else {
    detail::group_packed(s, n, [k](int64_t i) { return k[i]; }, [](int64_t) { return int64_t{1}; }, out.keys,
                         out.counts, rows);
  }
  s.ids.resize(static_cast<size_t>(n));  // (every grouping wrote ids[0, n))
  out.ids = std::move(s.ids);
  return out;
}

}  // namespace anoncore::lattice

// Threads inside one node's evaluation (issue 16): the histogram merges of a large frequency set (a roll-up's
// and the bottom's) as a parallel counting sort over chunks of items, and the grouping of a large roll-up split by
// chunks of source classes. Each gives exactly the serial output (the same classes in the same order, the
// same histograms entry by entry), so a search does the same work in the same order at any thread count and
// threads can only make it faster. Used only for sets of at least 2 * par_grain items and never inside
// another parallel region (evaluate_many's chunks run the serial code).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/lattice/engine_impl.hpp"
#ifdef ANONCORE_HAVE_OPENMP
#include <omp.h>
#endif

namespace anoncore::lattice {
namespace {

/// One block of classes [g0, g1) of a counting-sorted run merged in place by merge_class_run (the serial merge's
/// per-class step): the block's merged entries (value, count) are written back from start[g0] on, class g's
/// ending at end[g].
template <class E>
void merge_block_in_place(E* rn, int64_t g0, int64_t g1, const int64_t* start, int64_t* end, int64_t* dense) {
  // (put_value keeps the entry's count: at out == x merge_class_run reads x's count after writing its value)
  int64_t out = start[g0];
  for (int64_t g = g0; g < g1; ++g) {
    out = merge_class_run(start[g], start[g + 1], out, dense, [rn](int64_t x) { return entry_value(rn[x]); },
                          [rn](int64_t x) { return entry_count(rn[x]); },
                          [rn](int64_t y, int32_t v) { set_entry_value(rn[y], v); },
                          [rn](int64_t y) { return entry_value(rn[y]); },
                          [rn](int64_t y, int64_t c) { set_entry_count(rn[y], c); });
    end[g] = out;
  }
}

/// merge_histograms with T threads as a parallel counting sort, output identical to the serial merge: the
/// items are cut into T chunks in item order; pass 1 counts each chunk's entries per destination class; the
/// offsets follow in (class, chunk) order, so that a class's run holds its entries chunk after chunk, i.e. in
/// item order, as the serial scatter puts them; pass 2 scatters each chunk's entries; pass 3 merges each block
/// of classes in place (merge_block_in_place); pass 4 copies the blocks' merged entries into the output. The
/// run and the offsets are the scratch's buffers, reused by the next merge: fresh ones were faulted in (and
/// zeroed by the kernel) on every merge, where the serial merge reuses its run (10M synthetic rows, two threads:
/// a quarter of the samples were the kernel clearing pages). About 1.2x the serial work (partitioning by ranges
/// of classes reads the items twice more, about 2x, and gains nothing at two threads).
template <class E, class ItemNnz, class ItemHist, class CntVec>
void merge_histograms_chunks(int T, Scratch& s, const int32_t* ids, int64_t n_items, int64_t G, int64_t m,
                             ItemNnz item_nnz, ItemHist item_hist, RawVec<int64_t>& hoff, RawVec<int32_t>& hval,
                             CntVec& hcnt) {
  using CT = typename CntVec::value_type;
  if (G <= 0 || n_items <= 0) {
    hoff.assign(static_cast<size_t>(std::max<int64_t>(G, 0) + 1), 0);
    hval.clear();
    hcnt.clear();
    return;
  }
  ParGroupBuffers& buf = par_buffers(s);
  const int64_t chunk = (n_items + std::max(1, T) - 1) / std::max(1, T);
  const int64_t P = (n_items + chunk - 1) / chunk;  // (chunks, not threads: each chunk zeroes its own counts)
  // off[p * G + g]: pass 1 the entries of chunk p in class g, then where they go; pass 3 class g's merged end
  int64_t* off = buf.moff.get(P * G);
  parallel_chunks(n_items, chunk, T, [&](int64_t p, int64_t lo, int64_t hi) {
    int64_t* c = off + p * G;
    std::fill(c, c + G, int64_t{0});
    for (int64_t i = lo; i < hi; ++i) c[ids[i]] += item_nnz(i);
  });
  // the offsets in (class, chunk) order: blocks of classes summed in parallel, then each block filled from its
  // prefix (start[g]: the first entry of class g's run)
  const int64_t NB = std::min<int64_t>(G, int64_t{16} * T);
  const int64_t bsz = (G + NB - 1) / NB;
  std::vector<int64_t> bsum(static_cast<size_t>(NB + 1), 0);
  int64_t* start = buf.mstart.get(G + 1);  // (every entry written below)
  parallel_chunks(G, bsz, T, [&](int64_t b, int64_t g0, int64_t g1) {
    int64_t t = 0;
    for (int64_t g = g0; g < g1; ++g)
      for (int64_t p = 0; p < P; ++p) t += off[p * G + g];
    bsum[static_cast<size_t>(b + 1)] = t;
  });
  for (int64_t b = 0; b < NB; ++b) bsum[static_cast<size_t>(b + 1)] += bsum[static_cast<size_t>(b)];
  const int64_t total = bsum[static_cast<size_t>(NB)];
  parallel_chunks(G, bsz, T, [&](int64_t b, int64_t g0, int64_t g1) {
    int64_t acc = bsum[static_cast<size_t>(b)];
    for (int64_t g = g0; g < g1; ++g) {
      start[g] = acc;
      for (int64_t p = 0; p < P; ++p) {
        const int64_t v = off[p * G + g];
        off[p * G + g] = acc;
        acc += v;
      }
    }
  });
  start[G] = total;
  E* rn = run_buffer<E>(s, total);
  parallel_chunks(n_items, chunk, T, [&](int64_t p, int64_t lo, int64_t hi) {
    int64_t* o = off + p * G;
    for (int64_t i = lo; i < hi; ++i) {
      int64_t at = o[ids[i]];
      item_hist(i, [&](int32_t v, int64_t c) { rn[at++] = E{c, v}; });
      o[ids[i]] = at;
    }
  });
  // pass 3: each block of classes merged in place; class g's merged entries end at end[g] (off's first chunk)
  int64_t* end = off;
  parallel_chunks(G, bsz, T, [&](int64_t, int64_t g0, int64_t g1) {
    std::vector<int64_t> dense(static_cast<size_t>(m), 0);
    merge_block_in_place(rn, g0, g1, start, end, dense.data());
  });
  // pass 4: the blocks' merged entries copied in class order
  std::vector<int64_t> base(static_cast<size_t>(NB + 1), 0);
  for (int64_t b = 0; b < NB; ++b) {
    const int64_t g0 = b * bsz;
    const int64_t g1 = std::min(G, g0 + bsz);
    base[static_cast<size_t>(b + 1)] = base[static_cast<size_t>(b)] + (g1 > g0 ? end[g1 - 1] - start[g0] : 0);
  }
  hoff.resize(static_cast<size_t>(G + 1));
  hoff[0] = 0;
  hval.resize(static_cast<size_t>(base[static_cast<size_t>(NB)]));
  hcnt.resize(hval.size());
  int64_t* ho = hoff.data();
  int32_t* hv = hval.data();
  CT* hc = hcnt.data();
  parallel_chunks(G, bsz, T, [&](int64_t b, int64_t g0, int64_t g1) {
    const int64_t shift = base[static_cast<size_t>(b)] - start[g0];
    for (int64_t g = g0; g < g1; ++g) ho[g + 1] = end[g] + shift;
    for (int64_t y = start[g0]; y < end[g1 - 1]; ++y) {
      hv[y + shift] = entry_value(rn[y]);
      hc[y + shift] = static_cast<CT>(entry_count(rn[y]));
    }
  });
}

}  // namespace

// The threads are also held to the cores the other processes leave idle (idle_cores: available cores minus
// the threads of other processes runnable now): on an oversubscribed machine a parallel region
// waits at its join for a thread that gets a fraction of a core, and the merge's extra passes are pure cost
// (measured on a 2-core machine at load 5-10: 2 threads 10-20 % slower than 1). Only a cost matter: the
// output is the serial one at any count.
int Engine::Impl::par_threads(int64_t items) const {
  if (n_threads <= 1 || items < 2 * par_grain) return 1;
#ifdef ANONCORE_HAVE_OPENMP
  if (omp_in_parallel()) return 1;
#endif
  int64_t t = std::min<int64_t>(n_threads, items / par_grain);
  if (load_aware) t = std::min<int64_t>(t, idle_cores());
  return static_cast<int>(t);
}

void Engine::Impl::merge_from_par(int T, const FreqSet& src, const int32_t* ids, int64_t C, int64_t G,
                                  FreqSet& dst, Scratch& s) const {
  const detail::PhaseScope timed(phases, detail::Phase::kMergePar);
  merge_dispatch(src, dst, [&](auto tag, const auto& nnz, const auto& hist, auto& counts) {
    merge_histograms_chunks<typename decltype(tag)::type>(T, s, ids, C, G, m, nnz, hist, dst.hoff, dst.hval,
                                                          counts);
  });
}

void Engine::Impl::merge_rows_par(int T, const int32_t* ids, const int32_t* vals, int64_t n_rows, int64_t G,
                                  FreqSet& dst, Scratch& s) {
  // (a count of rows: below 2^32, as the row classes are int32)
  merge_histograms_chunks<RunEntry32>(T, s, ids, n_rows, G, m, [](int64_t) { return int64_t{1}; },
                                      [&](int64_t i, auto&& add) { add(vals[i], int64_t{1}); }, dst.hoff,
                                      dst.hval, dst.hcnt);
}

}  // namespace anoncore::lattice

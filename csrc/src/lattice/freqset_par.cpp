// Threads inside one node's evaluation (issue 16): the histogram merges of a large frequency set (a roll-up's
// and the bottom's) split by ranges of destination classes, and the grouping of a large roll-up split by
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

/// merge_histograms with T threads, output identical to the serial merge. The destination classes are cut into
/// R ranges; pass 1 counts each chunk's items per range, pass 2 scatters the item indices into one list per
/// range (chunk by chunk, so each list is in item order), pass 3 merges each range like the serial merge (its
/// items' entries grouped per class in item order, then merge_runs) into its own CSR piece, and the pieces are
/// concatenated in range order. Chunks and ranges are several per thread and taken dynamically, so a thread
/// that the machine starves delays only its last piece.
template <class ItemNnz, class ItemHist>
void merge_histograms_ranges(int T, const int32_t* ids, int64_t n_items, int64_t G, int64_t m, ItemNnz item_nnz,
                             ItemHist item_hist, std::vector<int64_t>& hoff, std::vector<int32_t>& hval,
                             std::vector<int64_t>& hcnt) {
  if (G <= 0 || n_items <= 0) {
    hoff.assign(static_cast<size_t>(std::max<int64_t>(G, 0) + 1), 0);
    hval.clear();
    hcnt.clear();
    return;
  }
  const int64_t R = std::min<int64_t>(G, int64_t{4} * T);
  const int64_t chunk = std::max<int64_t>(4096, (n_items + 4 * T - 1) / (4 * T));
  const int64_t P = (n_items + chunk - 1) / chunk;
  auto range_of = [&](int32_t g) { return static_cast<int64_t>(g) * R / G; };
  std::vector<int64_t> gb(static_cast<size_t>(R + 1));  // range r holds classes [gb[r], gb[r+1])
  for (int64_t x = 0; x <= R; ++x) gb[static_cast<size_t>(x)] = (x * G + R - 1) / R;
  std::vector<int64_t> cnt(static_cast<size_t>(P * R), 0);  // pass 1: items of chunk p in range x
  parallel_chunks(n_items, chunk, T, [&](int64_t p, int64_t lo, int64_t hi) {
    int64_t* c = cnt.data() + p * R;
    for (int64_t i = lo; i < hi; ++i) c[range_of(ids[i])]++;
  });
  std::vector<int64_t> rstart(static_cast<size_t>(R + 1), 0);  // offsets: range-major, then chunk
  int64_t acc = 0;
  for (int64_t x = 0; x < R; ++x) {
    rstart[static_cast<size_t>(x)] = acc;
    for (int64_t p = 0; p < P; ++p) {
      const int64_t v = cnt[static_cast<size_t>(p * R + x)];
      cnt[static_cast<size_t>(p * R + x)] = acc;
      acc += v;
    }
  }
  rstart[static_cast<size_t>(R)] = acc;
  std::vector<int32_t> idx(static_cast<size_t>(n_items));  // pass 2: item indices per range, in item order
  parallel_chunks(n_items, chunk, T, [&](int64_t p, int64_t lo, int64_t hi) {
    int64_t* c = cnt.data() + p * R;
    for (int64_t i = lo; i < hi; ++i) idx[static_cast<size_t>(c[range_of(ids[i])]++)] = static_cast<int32_t>(i);
  });
  struct Piece {
    std::vector<int64_t> hoff, hcnt;
    std::vector<int32_t> hval;
  };
  std::vector<Piece> piece(static_cast<size_t>(R));
  parallel_chunks(R, 1, T, [&](int64_t x, int64_t, int64_t) {  // pass 3: each range as the serial merge
    const int64_t g0 = gb[static_cast<size_t>(x)], Gr = gb[static_cast<size_t>(x + 1)] - g0;
    const int32_t* it = idx.data() + rstart[static_cast<size_t>(x)];
    const int64_t ni = rstart[static_cast<size_t>(x + 1)] - rstart[static_cast<size_t>(x)];
    Scratch s;
    std::vector<int64_t>& start = s.bucket;
    start.assign(static_cast<size_t>(Gr + 1), 0);
    for (int64_t q = 0; q < ni; ++q) start[static_cast<size_t>(ids[it[q]] - g0 + 1)] += item_nnz(it[q]);
    for (int64_t g = 0; g < Gr; ++g) start[static_cast<size_t>(g + 1)] += start[static_cast<size_t>(g)];
    const int64_t total = start[static_cast<size_t>(Gr)];
    s.run.resize(static_cast<size_t>(total));
    RunEntry* run = s.run.data();
    std::vector<int64_t> pos(start.begin(), start.end() - 1);
    for (int64_t q = 0; q < ni; ++q) {
      int64_t& ps = pos[static_cast<size_t>(ids[it[q]] - g0)];
      item_hist(it[q], [&](int32_t v, int64_t c) {
        run[ps] = RunEntry{c, v};
        ++ps;
      });
    }
    Piece& pc = piece[static_cast<size_t>(x)];
    merge_runs(s, Gr, m, total, start.data(), [&](int64_t e) { return run[e].v; },
               [&](int64_t e) { return run[e].c; }, pc.hoff, pc.hval, pc.hcnt);
  });
  std::vector<int64_t> base(static_cast<size_t>(R + 1), 0);
  for (int64_t x = 0; x < R; ++x)
    base[static_cast<size_t>(x + 1)] = base[static_cast<size_t>(x)] + static_cast<int64_t>(piece[static_cast<size_t>(x)].hval.size());
  hoff.assign(static_cast<size_t>(G + 1), 0);
  hval.resize(static_cast<size_t>(base[static_cast<size_t>(R)]));
  hcnt.resize(static_cast<size_t>(base[static_cast<size_t>(R)]));
  parallel_chunks(R, 1, T, [&](int64_t x, int64_t, int64_t) {  // pass 4: the pieces in range order
    const Piece& pc = piece[static_cast<size_t>(x)];
    const int64_t g0 = gb[static_cast<size_t>(x)], Gr = gb[static_cast<size_t>(x + 1)] - g0;
    const int64_t b = base[static_cast<size_t>(x)];
    for (int64_t g = 0; g < Gr; ++g) hoff[static_cast<size_t>(g0 + g + 1)] = b + pc.hoff[static_cast<size_t>(g + 1)];
    std::copy(pc.hval.begin(), pc.hval.end(), hval.begin() + b);
    std::copy(pc.hcnt.begin(), pc.hcnt.end(), hcnt.begin() + b);
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
                                  FreqSet& dst) const {
  const int64_t* ho = src.hoff.data();
  const int32_t* hv = src.hval.data();
  const int64_t* hc = src.hcnt.data();
  merge_histograms_ranges(T, ids, C, G, m, [&](int64_t i) { return ho[i + 1] - ho[i]; },
                          [&](int64_t i, auto&& add) {
                            for (int64_t x = ho[i]; x < ho[i + 1]; ++x) add(hv[x], hc[x]);
                          }, dst.hoff, dst.hval, dst.hcnt);
}

void Engine::Impl::merge_rows_par(int T, const int32_t* ids, const int32_t* vals, int64_t n_rows, int64_t G,
                                  FreqSet& dst) {
  merge_histograms_ranges(T, ids, n_rows, G, m, [](int64_t) { return int64_t{1}; },
                          [&](int64_t i, auto&& add) { add(vals[i], int64_t{1}); }, dst.hoff, dst.hval, dst.hcnt);
}

}  // namespace anoncore::lattice

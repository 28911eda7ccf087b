// Frequency sets of the lattice engine: roll-ups from the nearest cached finer set (packed or generic
// layout), histogram merges (eager, deferred, composed), value masks, the cache of sets and its retirement, the
// DM / DM* bounded roll-up, and the evaluation of one node (roll-up, then judge).
#include "anoncore/lattice/engine_impl.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "anoncore/core/parallel.hpp"

namespace anoncore::lattice {

/// classes_only: the classes and counts alone (no masks, no histograms; classify's clean path).
void Engine::Impl::rollup_packed(const FreqSet& src, const int32_t* target, FreqSet& dst, Scratch& s,
                   const std::shared_ptr<FreqSet>& defer_src, bool classes_only) const {
  std::vector<int32_t> dj;
  std::vector<const int32_t*> dmap;
  uint64_t keep = ~uint64_t{0};
  for (int64_t j = 0; j < r; ++j) {
    if (target[j] == src.levels[static_cast<size_t>(j)] || fmask[static_cast<size_t>(j)] == 0) continue;
    if (qi[static_cast<size_t>(j)].card[static_cast<size_t>(target[j])] == 1) {
      // one value at the target level (code 0, e.g. the hierarchy's top): the field is cleared, no lookup
      keep &= ~(fmask[static_cast<size_t>(j)] << shift[static_cast<size_t>(j)]);
      continue;
    }
    dj.push_back(static_cast<int32_t>(j));
    dmap.push_back(qi[static_cast<size_t>(j)].map(src.levels[static_cast<size_t>(j)], target[j]).data());
    keep &= ~(fmask[static_cast<size_t>(j)] << shift[static_cast<size_t>(j)]);
  }
  const uint64_t* sk = src.keys.data();
  const int64_t* scnt = src.count.data();
  const int64_t C = src.n_classes;
  const int T = par_threads(C);  // (several threads: group_par.cpp, the same classes in the same order)
  int64_t G;
  std::optional<detail::PhaseScope> grouping(std::in_place, phases, detail::on_threads(detail::Phase::kGroup, T > 1));
  if (dj.size() == 1) {
    const uint32_t sh = shift[static_cast<size_t>(dj[0])];
    const uint64_t fm = fmask[static_cast<size_t>(dj[0])];
    const int32_t* mp = dmap[0];
    G = group_rollup_t(T, par_grain, s, C, [&](int64_t i) {
      const uint64_t k = sk[i];
      return (k & keep) | (static_cast<uint64_t>(mp[(k >> sh) & fm]) << sh);
    }, scnt, dst.keys, dst.count);
  } else if (dj.size() >= 2 && dj.size() <= 8) {
    switch (dj.size()) {
      case 2: G = rollup_fields<2>(T, sk, keep, dj, dmap, C, scnt, dst, s); break;
      case 3: G = rollup_fields<3>(T, sk, keep, dj, dmap, C, scnt, dst, s); break;
      case 4: G = rollup_fields<4>(T, sk, keep, dj, dmap, C, scnt, dst, s); break;
      case 5: G = rollup_fields<5>(T, sk, keep, dj, dmap, C, scnt, dst, s); break;
      case 6: G = rollup_fields<6>(T, sk, keep, dj, dmap, C, scnt, dst, s); break;
      case 7: G = rollup_fields<7>(T, sk, keep, dj, dmap, C, scnt, dst, s); break;
      default: G = rollup_fields<8>(T, sk, keep, dj, dmap, C, scnt, dst, s); break;  // 8
    }
  } else {
    const size_t D = dj.size();
    std::vector<uint32_t> dsh(D);
    std::vector<uint64_t> dfm(D);
    for (size_t d = 0; d < D; ++d) {
      dsh[d] = shift[static_cast<size_t>(dj[d])];
      dfm[d] = fmask[static_cast<size_t>(dj[d])];
    }
    G = group_rollup_t(T, par_grain, s, C, [&](int64_t i) {
      const uint64_t k = sk[i];
      uint64_t nk = k & keep;
      for (size_t d = 0; d < D; ++d) nk |= static_cast<uint64_t>(dmap[d][(k >> dsh[d]) & dfm[d]]) << dsh[d];
      return nk;
    }, scnt, dst.keys, dst.count);
  }
  grouping.reset();
  dst.levels.assign(target, target + r);
  dst.n_classes = G;
  if (classes_only) return;
  or_masks(src, s.ids.data(), C, G, dst, s);
  if (m > 0 && hist_sets) {
    if (defer_src) {
      // judged early: the histograms are merged only when needed (see judge). The class map (one entry per
      // class of the anchor or of src) is the roll-up's too: timed as grouping, written in chunks on the threads
      const bool compose = src.hsrc && composes(src);
      const int64_t Ca = compose ? src.hsrc->n_classes : C;
      const int Tm = par_threads(Ca);
      const detail::PhaseScope mapping(phases, detail::on_threads(detail::Phase::kGroup, Tm > 1));
      dst.hids.resize(static_cast<size_t>(Ca));
      int32_t* out = dst.hids.data();
      const int32_t* ids = s.ids.data();
      if (compose) {
        // src is deferred too (see rollup): compose the class maps through src's anchor
        const int32_t* via = src.hids.data();
        parallel_chunks(Ca, par_grain, Tm, [&](int64_t, int64_t lo, int64_t hi) {
          for (int64_t a = lo; a < hi; ++a) out[a] = ids[via[a]];
        });
        dst.hsrc = src.hsrc;
      } else {
        // src materialized, or deferred to a materialized anchor without composing (see rollup)
        parallel_chunks(Ca, par_grain, Tm, [&](int64_t, int64_t lo, int64_t hi) {
          std::copy(ids + lo, ids + hi, out + lo);
        });
        dst.hsrc = defer_src;
      }
      return;
    }
    merge_from(src, s.ids.data(), C, G, dst, s);
  }
}

/// dst's histograms from src's through the class map ids (src's histograms must be present). The merged
/// counts are 32-bit (dst.hcnt32) when every count of the table fits (narrow_runs), whatever src's width.
void Engine::Impl::merge_from(const FreqSet& src, const int32_t* ids, int64_t C, int64_t G, FreqSet& dst, Scratch& s) const {
  const detail::PhaseScope timed(phases, detail::Phase::kMerge);
  if (const int T = par_threads(C); T > 1) {
    merge_from_par(T, src, ids, C, G, dst, s);
    return;
  }
  merge_dispatch(src, dst, [&](auto tag, const auto& nnz, const auto& hist, auto& counts) {
    merge_histograms<typename decltype(tag)::type>(s, ids, C, G, m, nnz, hist, dst.hoff, dst.hval, counts);
  });
}

/// Merge the deferred histograms of f (and, first, of its deferred sources). Not thread-safe on shared
/// sets: the parallel paths call it serially on their sources before the parallel region.
void Engine::Impl::ensure_hist(const FreqSet& cf, Scratch& s) const {
  auto& f = const_cast<FreqSet&>(cf);
  if (!f.hsrc) return;
  ensure_hist(*f.hsrc, s);
  merge_from(*f.hsrc, f.hids.data(), f.hsrc->n_classes, f.n_classes, f, s);
  f.hsrc.reset();
  std::vector<int32_t>().swap(f.hids);
}

// ------------------------------------------------------------------ frequency sets
/// defer_src (the shared pointer of src, or null): allow deferring dst's histograms when dst fails on
/// class size alone.
void Engine::Impl::rollup(const FreqSet& src, const int32_t* target, FreqSet& dst, Scratch& s,
            const std::shared_ptr<FreqSet>& defer_src) const {
  // A deferred source need not be merged when the roll-up is deferred too: the new set's class map is
  // composed through the source's anchor (the materialized set its map points to), as long as the anchor
  // is at most compose_k times larger (bounds the maps' memory and the on-the-fly merges of judge).
  const bool compose = defer_src && composes(src);
  const bool keep = defer_src && packed && src.hsrc && !src.hsrc->hsrc && src.mid_uses < max_mid_uses;
  if (keep) const_cast<FreqSet&>(src).mid_uses++;
  if (m > 0 && hist_sets && !compose && !keep) ensure_hist(src, s);
  if (packed) {
    rollup_packed(src, target, dst, s, defer_src);
    return;
  }
  std::vector<int64_t> card(static_cast<size_t>(r));
  std::vector<const int32_t*> maps(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j) {
    const Qi& q = qi[static_cast<size_t>(j)];
    card[static_cast<size_t>(j)] = q.card[static_cast<size_t>(target[j])];
    maps[static_cast<size_t>(j)] = q.map(src.levels[static_cast<size_t>(j)], target[j]).data();
  }
  const int32_t* sc = src.codes.data();
  const int64_t C = src.n_classes;
  std::optional<detail::PhaseScope> grouping(std::in_place, phases, detail::Phase::kGroup);
  const int64_t G = group_items(s, C, r, card.data(), [&](int64_t i, int64_t j) {
    return maps[static_cast<size_t>(j)][sc[i * r + j]];
  });
  dst.levels.assign(target, target + r);
  dst.n_classes = G;
  dst.codes.assign(static_cast<size_t>(G * r), -1);
  dst.count.assign(static_cast<size_t>(G), 0);
  for (int64_t i = 0; i < C; ++i) {
    const int64_t g = s.ids[static_cast<size_t>(i)];
    if (dst.codes[static_cast<size_t>(g * r)] < 0 || r == 0) {
      for (int64_t j = 0; j < r; ++j) dst.codes[static_cast<size_t>(g * r + j)] = maps[static_cast<size_t>(j)][sc[i * r + j]];
    }
    dst.count[static_cast<size_t>(g)] += src.count[static_cast<size_t>(i)];
  }
  grouping.reset();
  or_masks(src, s.ids.data(), C, G, dst, s);
  if (m > 0 && hist_sets) merge_from(src, s.ids.data(), C, G, dst, s);
}

/// The bottom's value masks from its histograms (each class's on its own: chunks of classes on the threads).
void Engine::Impl::bottom_masks(FreqSet& f) const {
  const int64_t C = f.n_classes;
  f.vmask.resize(static_cast<size_t>(C));
  uint64_t* vm = f.vmask.data();
  const int64_t* ho = f.hoff.data();
  const int32_t* hv = f.hval.data();
  parallel_chunks(C, par_grain, par_threads(C), [&](int64_t, int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      uint64_t mk = 0;
      for (int64_t x = ho[c]; x < ho[c + 1]; ++x) mk |= uint64_t{1} << hv[x];
      vm[c] = mk;
    }
  });
}

/// dst's value masks from src's through the class map ids (when the sets carry masks).
void Engine::Impl::or_masks(const FreqSet& src, const int32_t* ids, int64_t C, int64_t G, FreqSet& dst,
                            Scratch& s) const {
  if (!use_mask) return;
  const detail::PhaseScope timed(phases, detail::Phase::kMasks);
  dst.vmask.assign(static_cast<size_t>(G), 0);
  const uint64_t* sm = src.vmask.data();
  uint64_t* dm = dst.vmask.data();
  if (const int T = par_threads(C); T > 1) {
    const detail::PhaseScope timed_par(phases, detail::Phase::kMasksPar);
    // each chunk of source classes ORs into its own masks (the first into dm), then dm ORs the others in: an
    // OR does not depend on the order, so the masks are the serial ones
    const int64_t chunk = (C + T - 1) / T;
    uint64_t* priv = par_buffers(s).masks.get(static_cast<int64_t>(T - 1) * G);
    parallel_chunks(C, chunk, T, [&](int64_t c, int64_t lo, int64_t hi) {
      uint64_t* out = c == 0 ? dm : priv + (c - 1) * G;
      if (c > 0) std::fill(out, out + G, uint64_t{0});
      for (int64_t i = lo; i < hi; ++i) out[ids[i]] |= sm[i];
    });
    const int64_t parts = (C + chunk - 1) / chunk;
    parallel_chunks(G, std::max<int64_t>(par_grain, (G + T - 1) / T), T, [&](int64_t, int64_t lo, int64_t hi) {
      for (int64_t p = 1; p < parts; ++p) {
        const uint64_t* q = priv + (p - 1) * G;
        for (int64_t g = lo; g < hi; ++g) dm[g] |= q[g];
      }
    });
    return;
  }
  for (int64_t i = 0; i < C; ++i) dm[ids[i]] |= sm[i];
}

void Engine::Impl::init_cache_keys() {
  uint32_t bits = 0;
  ck_shift.assign(static_cast<size_t>(r), 0);
  for (int64_t j = 0; j < r; ++j) {
    uint32_t b = 1;
    while ((int64_t{1} << b) <= qi[static_cast<size_t>(j)].h) ++b;
    ck_shift[static_cast<size_t>(j)] = bits;
    bits += b;
  }
  ck_packed = r > 0 && bits <= 64;
}

std::shared_ptr<FreqSet> Engine::Impl::source_for(const int32_t* target) const {
  std::shared_ptr<FreqSet> best = bottom;
  std::vector<int32_t> lv(target, target + r);
  // the node itself or a direct predecessor (the usual roll-up along the search)
  if (const auto* self = cache_get(lv.data())) return *self;
  for (int64_t j = 0; j < r; ++j) {
    if (lv[static_cast<size_t>(j)] == 0) continue;
    lv[static_cast<size_t>(j)]--;
    const auto* it = cache_get(lv.data());
    if (it != nullptr && (*it)->n_classes < best->n_classes) best = *it;
    lv[static_cast<size_t>(j)]++;
  }
  if (best != bottom) return best;
  // otherwise the smallest cached ancestor (scan of the flat index: n_classes first, then levels)
  const int64_t E = static_cast<int64_t>(cache_nc.size());
  const int32_t* L = cache_lv.data();
  int64_t best_i = -1, best_n = best->n_classes;
  for (int64_t e = 0; e < E; ++e) {
    const int64_t nc = cache_nc[static_cast<size_t>(e)];
    if (nc >= best_n) continue;
    const int32_t* le = L + e * r;
    bool ok = true;
    for (int64_t j = 0; j < r && ok; ++j) ok = le[j] <= target[j];
    if (ok) {
      best_i = e;
      best_n = nc;
    }
  }
  if (best_i >= 0) return cache_fs[static_cast<size_t>(best_i)];
  return best;
}

// A cached set serves as the roll-up source of its direct successors (source_for prefers the smallest
// cached direct predecessor). It counts its successors not yet evaluated and leaves the cache when the last
// one has been (its memory is then reused by the next sets instead of fresh pages: page faults were about
// a sixth of the search's time). Only a cost matter: results never depend on what is cached.
void Engine::Impl::retire_predecessors(std::vector<int32_t> lv) {
  for (int64_t j = 0; j < r; ++j) {
    if (lv[static_cast<size_t>(j)] == 0) continue;
    lv[static_cast<size_t>(j)]--;
    const auto* it = cache_get(lv.data());
    if (it != nullptr && --(*it)->pending == 0) {
      const auto e = static_cast<size_t>((*it)->slot - cache_base);
      cache_classes -= (*it)->n_classes;
      cache_nc[e] = std::numeric_limits<int64_t>::max();  // never chosen by the ancestor scan
      cache_fs[e].reset();
      cache_drop(lv.data());
    }
    lv[static_cast<size_t>(j)]++;
  }
}

void Engine::Impl::remember(const std::shared_ptr<FreqSet>& f) {
  if (cache_get(f->levels.data()) != nullptr) return;
  retire_predecessors(f->levels);
  if (f->n_classes > cache_budget / 4) return;
  f->pending = 0;
  for (int64_t j = 0; j < r; ++j) f->pending += f->levels[static_cast<size_t>(j)] < qi[static_cast<size_t>(j)].h;
  if (f->pending == 0) return;  // the top: no successor
  f->slot = cache_base + static_cast<int64_t>(cache_fs.size());
  cache_classes += f->n_classes;
  cache_add(f->levels.data(), f);
  cache_fs.push_back(f);
  cache_nc.push_back(f->n_classes);
  cache_lv.insert(cache_lv.end(), f->levels.begin(), f->levels.end());
  if (cache_classes <= cache_budget) return;
  // evict the oldest entries until within budget (compact the flat index once)
  size_t drop = 0;
  while (cache_classes > cache_budget && drop < cache_fs.size()) {
    const auto& old = cache_fs[drop];
    if (old) {  // (retired entries are already out)
      cache_classes -= old->n_classes;
      cache_drop(old->levels.data());
    }
    ++drop;
  }
  cache_base += static_cast<int64_t>(drop);
  cache_fs.erase(cache_fs.begin(), cache_fs.begin() + static_cast<std::ptrdiff_t>(drop));
  cache_nc.erase(cache_nc.begin(), cache_nc.begin() + static_cast<std::ptrdiff_t>(drop));
  cache_lv.erase(cache_lv.begin(), cache_lv.begin() + static_cast<std::ptrdiff_t>(drop) * r);
}

/// early: the caller judges with early = true, so the set may defer its histograms (see judge).
std::shared_ptr<FreqSet> Engine::Impl::freq(const int32_t* lv, Scratch& s, bool early) const {
  auto src = source_for(lv);
  bool same = true;
  for (int64_t j = 0; j < r && same; ++j) same = src->levels[static_cast<size_t>(j)] == lv[j];
  if (same) return src;
  auto dst = std::make_shared<FreqSet>();
  const_cast<Impl*>(this)->work.fetch_add(src->n_classes, std::memory_order_relaxed);
  const bool defer = defers(early);
  rollup(*src, lv, *dst, s, defer ? src : nullptr);
  return dst;
}

/// Roll src up to target, stopping once the bound B above exceeds cut. Returns false when stopped (bound =
/// B at that point); otherwise dst holds the full set (keys, counts; no class map) and bound its Σ n_E².
bool Engine::Impl::rollup_dm_bounded(const FreqSet& src, const int32_t* target, FreqSet& dst, Scratch& s, double cut,
                       int64_t& bound) const {
  uint64_t keep = ~uint64_t{0};
  uint32_t dsh[64];
  uint64_t dfm[64];
  const int32_t* dmap[64];
  size_t D = 0;
  for (int64_t j = 0; j < r; ++j) {
    if (target[j] == src.levels[static_cast<size_t>(j)] || fmask[static_cast<size_t>(j)] == 0) continue;
    dsh[D] = shift[static_cast<size_t>(j)];
    dfm[D] = fmask[static_cast<size_t>(j)];
    dmap[D] = qi[static_cast<size_t>(j)].map(src.levels[static_cast<size_t>(j)], target[j]).data();
    keep &= ~(dfm[D] << dsh[D]);
    ++D;
  }
  const uint64_t* sk = src.keys.data();
  const int64_t* sc = src.count.data();
  const int64_t C = src.n_classes;
  const detail::PhaseScope timed(phases, detail::Phase::kGroup);
  int64_t B = 0;
  for (int64_t i = 0; i < C; ++i) B += sc[i] * sc[i];
  bool done;
  int64_t read = C;
  if (D == 1) {
    const uint32_t sh0 = dsh[0];
    const uint64_t fm0 = dfm[0];
    const int32_t* mp0 = dmap[0];
    done = group_bounded(s, C, [&](int64_t i) {
      const uint64_t k = sk[i];
      return (k & keep) | (static_cast<uint64_t>(mp0[(k >> sh0) & fm0]) << sh0);
    }, sc, cut, B, read, dst.keys, dst.count);
  } else {
    done = group_bounded(s, C, [&](int64_t i) {
      const uint64_t k = sk[i];
      uint64_t nk = k & keep;
      for (size_t d = 0; d < D; ++d) nk |= static_cast<uint64_t>(dmap[d][(k >> dsh[d]) & dfm[d]]) << dsh[d];
      return nk;
    }, sc, cut, B, read, dst.keys, dst.count);
  }
  const_cast<Impl*>(this)->work.fetch_add(read, std::memory_order_relaxed);
  bound = B;
  if (!done) return false;
  dst.levels.assign(target, target + r);
  dst.n_classes = static_cast<int64_t>(dst.keys.size());
  return true;
}

/// The search's evaluation with the DM / DM* cut (see above): a full evaluation unless the grouping stops.
NodeResult Engine::Impl::evaluate_dm_bounded(const int32_t* lv) {
  Scratch& s = scratch[0];
  auto src = source_for(lv);
  bool same = true;
  for (int64_t j = 0; j < r && same; ++j) same = src->levels[static_cast<size_t>(j)] == lv[j];
  if (same) return evaluate(lv, true);
  auto dst = std::make_shared<FreqSet>();
  int64_t bound = 0;
  ++n_eval;
  if (!rollup_dm_bounded(*src, lv, *dst, s, dm_cut_value, bound)) {
    NodeResult res;
    res.partial = true;
    res.lower_bound = res.metric = static_cast<double>(bound);
    return res;
  }
  NodeResult res = judge(*dst, s, true);
  remember(dst);
  return res;
}

void Engine::Impl::prime_source(const int32_t* lv) {
  if (r == 0) return;
  // Not with histograms under a zero limit: a judge there stops at the first violating class,
  // so the meet's full merge from the bottom costs more than the roll-ups it saves (Adult 7a: kernel
  // 1.02 -> 0.91 ms); with a positive limit the meets pay off (Adult 5, 6, 7b: 30-50 % slower without).
  if (needs_hist && limit == 0) return;
  if (source_for(lv) != bottom) return;
  if (last_from_bottom.empty()) {
    last_from_bottom.assign(lv, lv + r);
    return;
  }
  std::vector<int32_t> meet(static_cast<size_t>(r));
  bool any = false, same = true;
  for (int64_t j = 0; j < r; ++j) {
    meet[static_cast<size_t>(j)] = std::min(lv[j], last_from_bottom[static_cast<size_t>(j)]);
    any = any || meet[static_cast<size_t>(j)] > 0;
    same = same && meet[static_cast<size_t>(j)] == lv[j];
  }
  last_from_bottom.assign(lv, lv + r);
  if (!any || same) return;
  auto f = freq(meet.data(), scratch[0], false);  // (early = false: histograms merged, never deferred)
  if (f != bottom) {
    remember(f);
    ++n_primed;
  }
}

NodeResult Engine::Impl::evaluate(const int32_t* lv, bool early) {
  if (early) prime_source(lv);
  auto f = freq(lv, scratch[0], early);
  NodeResult res = judge(*f, scratch[0], early);
  ++n_eval;
  if (adapt_compose) {
    const int64_t d = n_judged_deferred.load(std::memory_order_relaxed);
    compose_k = d >= 32 && 2 * n_judged_lazy.load(std::memory_order_relaxed) >= d ? 4 : 8;
  }
  if (f != bottom) remember(f);
  return res;
}

}  // namespace anoncore::lattice

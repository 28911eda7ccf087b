// Table-level criteria of the lattice engine: risk-based models judged on a node's published classes (the
// classes no other criterion suppresses) from their sizes alone, as anoncore.models defines them
// (AverageReidentificationRisk, SampleUniqueness, estimated KMap). They never suppress: a node fails them as
// a whole. The ratios are computed with the audit's operations (a count over a count, as doubles), so the
// engine's verdict is the audit's.
#include <algorithm>
#include <mutex>
#include <vector>
#include <stdexcept>

#include "anoncore/lattice/engine_impl.hpp"

namespace anoncore::lattice {

void Engine::set_table_criteria(TableCriteria t) {
  Impl& I = *impl_;
  if (!t.min_kept_size.empty() && static_cast<int64_t>(t.min_kept_size.size()) != I.limit + 1)
    throw std::invalid_argument("min_kept_size needs one entry per suppressed-row count 0..limit");
  I.tcrit = std::move(t);
  I.has_tcrit = I.tcrit.avg_risk >= 0.0 || I.tcrit.sample_uniqueness >= 0.0 || !I.tcrit.min_kept_size.empty();
  // Without suppression the published classes are all the classes, and merging classes lowers the number of
  // classes and of one-row classes and raises the smallest class: upward closed. With suppression the
  // published rows depend on the other criteria, so a node above a feasible one may fail.
  if (I.has_tcrit && I.limit > 0) I.p_monotone = false;
}

void Engine::set_population(Engine& population, int64_t kmap_k, double delta_min, double delta_max) {
  Impl& I = *impl_;
  Impl& P = *population.impl_;
  bool same = I.packed && P.packed && I.r == P.r;
  for (int64_t j = 0; j < I.r && same; ++j)
    same = I.shift[static_cast<size_t>(j)] == P.shift[static_cast<size_t>(j)] &&
           I.fmask[static_cast<size_t>(j)] == P.fmask[static_cast<size_t>(j)] &&
           I.qi[static_cast<size_t>(j)].h == P.qi[static_cast<size_t>(j)].h;
  if (!same) throw std::invalid_argument("set_population needs two packed engines of the same key layout");
  I.pop = &P;
  I.pop_k = kmap_k;
  I.pop_dmin = delta_min;
  I.pop_dmax = delta_max;
  I.has_tcrit = true;
  // k-map alone without suppression: merging classes only raises F (upward closed); delta-presence is not
  // monotone (a merged class's share is a weighted mean of its parts')
  if (I.limit > 0 || delta_min >= 0.0) I.p_monotone = false;
}

/// The population-based criteria at f's node: every population class (F rows) against the published subset
/// rows f of the same key (0 when the subset class is suppressed or absent).
bool Engine::Impl::population_holds(const FreqSet& f, const uint8_t* viol) const {
  RawVec<uint64_t> pkeys;
  RawVec<int64_t> pcount;
  {
    std::lock_guard<std::mutex> lock(pop_mu);  // (the population engine's cache and scratch are not shared)
    auto pf = pop->freq(f.levels.data(), pop->scratch[0], false);
    if (pf != pop->bottom) pop->remember(pf);
    pkeys = pf->keys;
    pcount = pf->count;
  }
  // published subset rows by key (open addressing over f's published classes)
  uint64_t cap = 16;
  while (cap < static_cast<uint64_t>(2 * f.n_classes)) cap <<= 1;
  std::vector<int64_t> slot(static_cast<size_t>(cap), -1);
  const uint64_t mask = cap - 1;
  for (int64_t c = 0; c < f.n_classes; ++c) {
    if (viol[c]) continue;
    uint64_t p = mix64(f.keys[static_cast<size_t>(c)]) & mask;
    while (slot[static_cast<size_t>(p)] >= 0) p = (p + 1) & mask;
    slot[static_cast<size_t>(p)] = c;
  }
  for (size_t g = 0; g < pkeys.size(); ++g) {
    const uint64_t k = pkeys[g];
    int64_t fE = 0;
    for (uint64_t p = mix64(k) & mask; slot[static_cast<size_t>(p)] >= 0; p = (p + 1) & mask) {
      const int64_t c = slot[static_cast<size_t>(p)];
      if (f.keys[static_cast<size_t>(c)] == k) {
        fE = f.count[static_cast<size_t>(c)];
        break;
      }
    }
    const int64_t F = pcount[g];
    if (pop_k > 0 && fE > 0 && F < pop_k) return false;
    if (pop_dmin >= 0.0) {
      const double share = static_cast<double>(fE) / static_cast<double>(F);  // (the audit's f / F)
      if (!(share >= pop_dmin && share <= pop_dmax)) return false;
    }
  }
  return true;
}

/// The table-level criteria on the classes of f not flagged in viol (S rows flagged). No published row:
/// nothing to judge (the audit's verdict on an empty publication).
bool Engine::Impl::table_holds(const FreqSet& f, const uint8_t* viol, int64_t S) const {
  const int64_t kept_rows = n - S;
  if (kept_rows <= 0) return pop == nullptr || population_holds(f, viol);
  int64_t classes = 0, singles = 0, smallest = n;
  for (int64_t c = 0; c < f.n_classes; ++c) {
    if (viol[c]) continue;
    const int64_t cnt = f.count[static_cast<size_t>(c)];
    ++classes;
    singles += cnt == 1;
    smallest = std::min(smallest, cnt);
  }
  const auto rows = static_cast<double>(kept_rows);
  if (tcrit.avg_risk >= 0.0 && !(static_cast<double>(classes) / rows <= tcrit.avg_risk)) return false;
  if (tcrit.sample_uniqueness >= 0.0 && !(static_cast<double>(singles) / rows <= tcrit.sample_uniqueness))
    return false;
  if (!tcrit.min_kept_size.empty() && S <= limit && smallest < tcrit.min_kept_size[static_cast<size_t>(S)])
    return false;
  return pop == nullptr || population_holds(f, viol);
}

}  // namespace anoncore::lattice

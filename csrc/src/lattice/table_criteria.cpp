// Table-level criteria of the lattice engine: risk-based models judged on a node's published classes (the
// classes no other criterion suppresses) from their sizes alone, as anoncore.models defines them
// (AverageReidentificationRisk, SampleUniqueness, estimated KMap). They never suppress: a node fails them as
// a whole. The ratios are computed with the audit's operations (a count over a count, as doubles), so the
// engine's verdict is the audit's.
#include <algorithm>
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

/// The table-level criteria on the classes of f not flagged in viol (S rows flagged). No published row:
/// nothing to judge (the audit's verdict on an empty publication).
bool Engine::Impl::table_holds(const FreqSet& f, const uint8_t* viol, int64_t S) const {
  const int64_t kept_rows = n - S;
  if (kept_rows <= 0) return true;
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
  return true;
}

}  // namespace anoncore::lattice

// INTERIM local implementation of twophase/distance_adapter.hpp (see the header). Integer-exact numerators,
// one division at the end.
#include "anoncore/twophase/distance_adapter.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace anoncore::twophase {
namespace {
using wide = __int128;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
int64_t sum_of(const int64_t* v, int64_t n) {
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += v[i];
  return s;
}
wide absw(wide x) { return x < 0 ? -x : x; }

/// sum over internal nodes of height * min(pos, neg) given leaf extras at node ids (post-order pass).
template <class Extra>
wide hier_cost(const HierarchyView& h, std::vector<wide>& pos, std::vector<wide>& neg, Extra&& extra) {
  const int64_t nn = h.n_nodes();
  std::fill(pos.begin(), pos.end(), wide(0));
  std::fill(neg.begin(), neg.end(), wide(0));
  wide cost = 0;
  for (int64_t v = 0; v < nn; ++v) {
    const auto vi = static_cast<size_t>(v);
    wide e;
    bool is_slot = false;
    e = extra(v, is_slot);
    if (!is_slot && v >= h.n_leaves) {
      cost += static_cast<wide>(h.height[v]) * std::min(pos[vi], neg[vi]);
      e = pos[vi] - neg[vi];
    }
    const int32_t par = h.parent[v];
    if (par >= 0) {
      if (e > 0)
        pos[static_cast<size_t>(par)] += e;
      else
        neg[static_cast<size_t>(par)] -= e;
    }
  }
  return cost;
}
}  // namespace

void emd_ordered_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                         int) {
  const int64_t m = hist.cols, P = sum_of(reference.data, reference.size);
  int64_t present = 0;
  for (int64_t v = 0; v < m; ++v) present += reference[v] > 0;
  for (int64_t c = 0; c < hist.rows; ++c) {
    const int64_t Q = sizes[c];
    if (Q <= 0) { out[c] = kNaN; continue; }
    if (present <= 1) { out[c] = 0.0; continue; }
    const int64_t* row = hist.row(c);
    wide r = 0, s = 0;
    for (int64_t v = 0; v < m; ++v) {
      if (reference[v] == 0) continue;
      r += static_cast<wide>(row[v]) * P - static_cast<wide>(reference[v]) * Q;
      s += absw(r);
    }
    out[c] = static_cast<double>(s) / (static_cast<double>(present - 1) * static_cast<double>(P) * static_cast<double>(Q));
  }
}

void emd_hierarchical_classes(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference,
                              const HierarchyView& h, MutSpan<double> out, int) {
  const int64_t P = sum_of(reference.data, reference.size), nn = h.n_nodes();
  const int32_t H = h.height[nn - 1];
  std::vector<wide> pos(static_cast<size_t>(nn)), neg(static_cast<size_t>(nn));
  for (int64_t c = 0; c < hist.rows; ++c) {
    const int64_t Q = sizes[c];
    if (Q <= 0) { out[c] = kNaN; continue; }
    if (H <= 0) { out[c] = 0.0; continue; }
    const int64_t* row = hist.row(c);
    wide cost = hier_cost(h, pos, neg, [&](int64_t v, bool& slot) -> wide {
      slot = false;
      return v < h.n_leaves ? static_cast<wide>(reference[v]) * Q - static_cast<wide>(row[v]) * P : wide(0);
    });
    out[c] = static_cast<double>(cost) / (static_cast<double>(H) * static_cast<double>(P) * static_cast<double>(Q));
  }
}

void bucket_emd_ordered(Matrix<int64_t> counts, Span<int64_t> totals, Span<int32_t> lo, Span<int32_t> hi,
                        int64_t n_present, MutSpan<double> out, int) {
  const int64_t nb = counts.cols, B = sum_of(totals.data, totals.size);
  for (int64_t c = 0; c < counts.rows; ++c) {
    const int64_t* a = counts.row(c);
    const int64_t A = sum_of(a, nb);
    if (A <= 0) { out[c] = kNaN; continue; }
    if (n_present <= 1) { out[c] = 0.0; continue; }
    wide s = 0, prefix = 0;
    for (int64_t i = 0; i < nb; ++i) {
      const wide d = static_cast<wide>(a[i]) * B - static_cast<wide>(totals[i]) * A;
      s += static_cast<wide>(hi[i] - lo[i]) * absw(d);
      prefix += d;
      if (i + 1 < nb) s += static_cast<wide>(lo[i + 1] + hi[i + 1] - lo[i] - hi[i]) * absw(prefix);
    }
    out[c] = static_cast<double>(s) /
             (2.0 * static_cast<double>(n_present - 1) * static_cast<double>(A) * static_cast<double>(B));
  }
}

void bucket_emd_hierarchical(Matrix<int64_t> counts, Span<int64_t> totals, Span<int32_t> bucket_node,
                             const HierarchyView& h, MutSpan<double> out, int) {
  const int64_t nb = counts.cols, B = sum_of(totals.data, totals.size), nn = h.n_nodes();
  const int32_t H = h.height[nn - 1];
  std::vector<int64_t> slot(static_cast<size_t>(nn), -1);
  for (int64_t i = 0; i < nb; ++i) slot[static_cast<size_t>(bucket_node[i])] = i;
  std::vector<wide> pos(static_cast<size_t>(nn)), neg(static_cast<size_t>(nn));
  for (int64_t c = 0; c < counts.rows; ++c) {
    const int64_t* a = counts.row(c);
    const int64_t A = sum_of(a, nb);
    if (A <= 0) { out[c] = kNaN; continue; }
    if (H <= 0) { out[c] = 0.0; continue; }
    wide cost = hier_cost(h, pos, neg, [&](int64_t v, bool& is_slot) -> wide {
      const int64_t i = slot[static_cast<size_t>(v)];
      is_slot = i >= 0;
      return is_slot ? static_cast<wide>(totals[i]) * A - static_cast<wide>(a[i]) * B : wide(0);
    });
    out[c] = static_cast<double>(cost) / (static_cast<double>(H) * static_cast<double>(A) * static_cast<double>(B));
  }
}

}  // namespace anoncore::twophase

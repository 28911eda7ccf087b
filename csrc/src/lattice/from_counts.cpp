// The lattice engine built from a frequency set (weighted items) instead of rows: anoncore.distributed merges
// the partitions of a table larger than memory into its distinct (quasi-identifier leaf codes, sensitive code)
// items with their row counts, and the optimal search runs on those. An item of weight w is w identical rows:
// the per-QI value counts, the bottom classes (grouped with the items' weights), their sensitive-value
// histograms (entries weighted) and the reference distribution are what the row constructor computes on the
// rows the items stand for; with the items in order of first appearance over the rows, the bottom classes and
// every histogram come out in the same order, so every later sum is the same double.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/lattice/engine_impl.hpp"

namespace anoncore::lattice {

/// The shared part of both constructors' setup (tables, weights of Loss, layout, criteria).
void Engine::Impl::init_engine(Matrix<int32_t> codes, const std::vector<QiInput>& qis, std::vector<Criterion> criteria,
                               MetricSpec ms, int64_t lim, int threads, bool allow_packed, int64_t sa_m) {
  r = codes.cols;
  limit = lim;
  n_threads = resolve_threads(threads);
  crit = std::move(criteria);
  metric = ms;
  const double g = ms.gs_factor;
  sF = g < 0.5 ? 2.0 * g : 1.0;
  gF = g <= 0.5 ? 1.0 : 1.0 - 2.0 * (g - 0.5);
  if (static_cast<int64_t>(qis.size()) != r) throw std::invalid_argument("one QiInput per quasi-identifier expected");
  init_qis(qis);
  weight.assign(static_cast<size_t>(r), 1.0);
  if (!ms.weights.empty()) {
    if (static_cast<int64_t>(ms.weights.size()) != r) throw std::invalid_argument("one weight per QI expected");
    const double wmax = *std::max_element(ms.weights.begin(), ms.weights.end());
    if (!(wmax > 0.0)) throw std::invalid_argument("the largest weight must be positive");
    for (int64_t j = 0; j < r; ++j) weight[static_cast<size_t>(j)] = ms.weights[static_cast<size_t>(j)] / wmax;
  }
  init_layout(allow_packed);
  init_criteria(sa_m);
}

/// Value counts, reference distribution and bottom frequency set from items of weight w.
void Engine::Impl::build_from_items(Matrix<int32_t> codes, const int64_t* w, const SensitiveInput& sa) {
  const int64_t ni = codes.rows;
  std::vector<std::vector<int64_t>> cnts(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j) cnts[static_cast<size_t>(j)].assign(static_cast<size_t>(qi[static_cast<size_t>(j)].n_leaves), 0);
  for (int64_t i = 0; i < ni; ++i)
    for (int64_t j = 0; j < r; ++j) {
      const int32_t v = codes(i, j);
      if (v < 0 || v >= qi[static_cast<size_t>(j)].n_leaves) throw std::invalid_argument("item code out of range");
      cnts[static_cast<size_t>(j)][static_cast<size_t>(v)] += w[i];
    }
  init_levels(cnts);
  if (needs_hist) {
    if (sa.codes.size != ni) throw std::invalid_argument("sensitive codes must have one entry per item");
    ref.assign(static_cast<size_t>(m), 0);
    for (int64_t i = 0; i < ni; ++i) {
      if (sa.codes[i] < 0 || sa.codes[i] >= m) throw std::invalid_argument("sensitive code out of range");
      ref[static_cast<size_t>(sa.codes[i])] += w[i];
    }
    sa_ref.build(ref.data(), m, n, sa.parent.data, sa.node_height.data, sa.parent.size);
    reference = sa_ref.view();
  }
  init_scratch();
  value_counts = std::move(cnts);
  Scratch& s = scratch[0];
  auto f = std::make_shared<FreqSet>();
  f->levels.assign(static_cast<size_t>(r), 0);
  int64_t G = 0;
  if (packed) {
    std::vector<uint64_t> rk(static_cast<size_t>(ni), 0);
    for (int64_t i = 0; i < ni; ++i) {
      uint64_t k = 0;
      for (int64_t j = 0; j < r; ++j) {
        const Qi& q = qi[static_cast<size_t>(j)];
        k |= static_cast<uint64_t>(q.gen[static_cast<size_t>(codes(i, j) * (q.h + 1))]) << shift[static_cast<size_t>(j)];
      }
      rk[static_cast<size_t>(i)] = k;
    }
    if (const int T = par_threads(ni); T > 1) {  // (group_par.cpp: the same classes in the same order)
      G = group_partitioned(T, ni, rk.data(), w, true, par_buffers(s), s.ids, f->keys, f->count);
      s.par.reset();  // (its buffers, about 40 bytes a row, are not kept for the roll-ups)
    } else {
      G = group_packed(s, ni, [&](int64_t i) { return rk[static_cast<size_t>(i)]; }, [&](int64_t i) { return w[i]; },
                       f->keys, f->count, true);
    }
    f->n_classes = G;
  } else {
    std::vector<int64_t> card0(static_cast<size_t>(r));
    for (int64_t j = 0; j < r; ++j) card0[static_cast<size_t>(j)] = qi[static_cast<size_t>(j)].card[0];
    G = group_items(s, ni, r, card0.data(), [&](int64_t i, int64_t j) {
      const Qi& q = qi[static_cast<size_t>(j)];
      return q.gen[static_cast<size_t>(codes(i, j) * (q.h + 1))];
    });
    f->n_classes = G;
    f->codes.assign(static_cast<size_t>(G * r), -1);
    f->count.assign(static_cast<size_t>(G), 0);
    for (int64_t i = 0; i < ni; ++i) {
      const int64_t g2 = s.ids[static_cast<size_t>(i)];
      if (f->codes[static_cast<size_t>(g2 * r)] < 0 || r == 0)
        for (int64_t j = 0; j < r; ++j) {
          const Qi& q = qi[static_cast<size_t>(j)];
          f->codes[static_cast<size_t>(g2 * r + j)] = q.gen[static_cast<size_t>(codes(i, j) * (q.h + 1))];
        }
      f->count[static_cast<size_t>(g2)] += w[i];
    }
  }
  row_class = std::make_shared<const RawVec<int32_t>>(s.ids.begin(), s.ids.begin() + ni);
  if (m > 0) {
    // the items' (value, weight) entries grouped by class in item order, merged as the rows' would be
    std::vector<int64_t> start(static_cast<size_t>(G + 1), 0);
    for (int64_t i = 0; i < ni; ++i) start[static_cast<size_t>(s.ids[static_cast<size_t>(i)] + 1)] += 1;
    for (int64_t g = 0; g < G; ++g) start[static_cast<size_t>(g + 1)] += start[static_cast<size_t>(g)];
    std::vector<int64_t> pos(start.begin(), start.end() - 1);
    std::vector<int64_t> run(static_cast<size_t>(ni));
    for (int64_t i = 0; i < ni; ++i) run[static_cast<size_t>(pos[static_cast<size_t>(s.ids[static_cast<size_t>(i)])]++)] = i;
    merge_runs(s, G, m, ni, start.data(), [&](int64_t x) { return sa.codes[run[static_cast<size_t>(x)]]; },
               [&](int64_t x) { return w[run[static_cast<size_t>(x)]]; }, f->hoff, f->hval, f->hcnt);
  }
  if (use_mask) bottom_masks(*f);
  bottom = f;
  note_bottom();
}

Engine::Engine(Matrix<int32_t> qi_codes, Span<int64_t> weights, std::vector<QiInput> qis, SensitiveInput sa,
               std::vector<Criterion> criteria, MetricSpec metric, int64_t limit, int n_threads, bool allow_packed)
    : impl_(std::make_unique<Impl>()) {
  Impl& I = *impl_;
  if (weights.size != qi_codes.rows) throw std::invalid_argument("one weight per item expected");
  I.n = 0;
  for (int64_t i = 0; i < weights.size; ++i) {
    if (weights[i] <= 0) throw std::invalid_argument("item weights must be > 0");
    I.n += weights[i];
  }
  // The models compared with the table's distribution (t-closeness, beta-likeness, delta-disclosure) are judged
  // with integer numerators such as P_v n - n_v P (criteria/class_criteria.hpp), exact for fewer than 2^31 rows,
  // the audit's limit too: a larger total weight is refused here rather than judged with overflowing sums (from
  // about 3 * 10^10 rows equal-distance t-closeness chose other levels than the same items scaled down).
  if (I.n >= (int64_t{1} << 31))
    for (const Criterion& c : criteria)
      if (static_cast<int>(c.kind) >= static_cast<int>(criteria::Model::kEqualT))
        throw std::invalid_argument(std::string(criteria::kModels[static_cast<int>(c.kind)].name) + " over " +
                                    std::to_string(I.n) +
                                    " rows (the items' total weight): the models compared with the table's "
                                    "distribution support fewer than 2^31 rows, as the audit does");
  I.init_engine(qi_codes, qis, std::move(criteria), metric, limit, n_threads, allow_packed, sa.m);
  I.build_from_items(qi_codes, weights.data, sa);
}

}  // namespace anoncore::lattice

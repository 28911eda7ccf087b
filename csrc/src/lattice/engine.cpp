// The lattice engine's construction (the per-QI tables, the packed layout, the criteria's flags, the
// reference distribution, the bottom frequency set from the rows or a reused BottomState) and its public calls.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "anoncore/core/groupby.hpp"
#include "anoncore/core/parallel.hpp"
#include "anoncore/lattice/engine_impl.hpp"

namespace anoncore::lattice {

/// The per-QI tables: generalization maps, cardinalities, leaf counts, entropy terms, the level-to-level maps.
void Engine::Impl::init_qis(const std::vector<QiInput>& qis) {
  qi.resize(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j) {
    const QiInput& in = qis[static_cast<size_t>(j)];
    Qi& q = qi[static_cast<size_t>(j)];
    q.h = in.height;
    const int64_t L = q.h + 1;
    q.n_leaves = in.gen.size / L;
    q.gen.assign(in.gen.begin(), in.gen.end());
    q.card.assign(static_cast<size_t>(L), 0);
    for (int64_t v = 0; v < q.n_leaves; ++v)
      for (int64_t l = 0; l < L; ++l)
        q.card[static_cast<size_t>(l)] = std::max<int64_t>(q.card[static_cast<size_t>(l)], q.gen[static_cast<size_t>(v * L + l)] + 1);
    q.lc_off.assign(static_cast<size_t>(L + 1), 0);
    for (int64_t l = 0; l < L; ++l) q.lc_off[static_cast<size_t>(l + 1)] = q.lc_off[static_cast<size_t>(l)] + q.card[static_cast<size_t>(l)];
    if (in.leaf_count.size != q.lc_off[static_cast<size_t>(L)]) throw std::invalid_argument("leaf_count has the wrong length");
    q.leaf_count.assign(in.leaf_count.begin(), in.leaf_count.end());
    q.nu_base.assign(in.nu_base.begin(), in.nu_base.end());
    if (static_cast<int64_t>(q.nu_base.size()) != L) q.nu_base.assign(static_cast<size_t>(L), 0.0);
    q.up.assign(static_cast<size_t>(L * L), {});
    for (int64_t l1 = 0; l1 < L; ++l1)
      for (int64_t l2 = l1; l2 < L; ++l2) {
        auto& mp = q.up[static_cast<size_t>(l1 * L + l2)];
        mp.assign(static_cast<size_t>(q.card[static_cast<size_t>(l1)]), 0);
        for (int64_t v = 0; v < q.n_leaves; ++v)
          mp[static_cast<size_t>(q.gen[static_cast<size_t>(v * L + l1)])] = q.gen[static_cast<size_t>(v * L + l2)];
      }
    q.a_level.assign(static_cast<size_t>(L), 0);
  }
}

/// The packed layout of the bottom keys (needs only the level-0 cardinalities).
void Engine::Impl::init_layout(bool allow_packed) {
  uint32_t bits = 0;
  shift.assign(static_cast<size_t>(r), 0);
  fmask.assign(static_cast<size_t>(r), 0);
  for (int64_t j = 0; j < r; ++j) {
    uint32_t b = 0;
    while (b < 63 && (int64_t{1} << b) < qi[static_cast<size_t>(j)].card[0]) ++b;
    shift[static_cast<size_t>(j)] = std::min<uint32_t>(bits, 63);
    fmask[static_cast<size_t>(j)] = b == 0 ? 0 : (uint64_t{1} << b) - 1;
    bits += b;
  }
  packed = allow_packed && bits <= 64 && r > 0;
}

/// What the criteria ask of the engine: the minimal class size, distinct-l, histograms, masks, monotonicity.
void Engine::Impl::init_criteria(int64_t sa_m) {
  for (const Criterion& c : crit) {
    switch (c.kind) {
      case CriterionKind::kKAnonymity:
        min_size = std::max<int64_t>(min_size, static_cast<int64_t>(c.a));
        break;
      case CriterionKind::kDistinctL:
        min_size = std::max<int64_t>(min_size, static_cast<int64_t>(std::ceil(c.a)));
        distinct_l = std::max<int64_t>(distinct_l, static_cast<int64_t>(std::ceil(c.a)));
        needs_hist = true;
        break;
      case CriterionKind::kEntropyL:
      case CriterionKind::kRecursiveCL:
        min_size = std::max<int64_t>(min_size, static_cast<int64_t>(std::ceil(c.a)));
        needs_hist = true;
        break;
      default:
        needs_hist = true;
    }
  }
  adapt_compose = true;
  for (const Criterion& c : crit)
    adapt_compose = adapt_compose && c.kind != CriterionKind::kEntropyL && c.kind != CriterionKind::kHellingerT;
  bool all_supp_monotone = true;
  for (const Criterion& c : crit)
    all_supp_monotone = all_supp_monotone && (c.kind == CriterionKind::kKAnonymity || c.kind == CriterionKind::kDistinctL);
  // Grassberger's entropy estimate can fall when classes merge (two classes {1, 1} pass entropy 2-diversity,
  // their union {2, 2} does not), and so can delta-disclosure that ignores absent values (ARX's reading: a class
  // without value v merged with one whose share of v is just above p_v e^-delta has a share below it):
  // feasibility is then not upward closed even without suppression.
  bool gen_monotone = true;
  for (const Criterion& c : crit)
    gen_monotone = gen_monotone && !(c.kind == CriterionKind::kEntropyL && c.b == 1.0) &&
                   !(c.kind == CriterionKind::kDeltaDisclosure && c.b == 1.0);
  p_monotone = (all_supp_monotone || limit == 0) && gen_monotone;
  support_mono = !all_supp_monotone;  // some criterion beyond k-anonymity / distinct-l: a support part
  // (ARX's KL divergence can fall upward even without suppression: docs/lattice.md)
  m_monotone = (limit == 0 && metric.kind != MetricKind::kKLArx) || metric.kind == MetricKind::kDMStar ||
               metric.kind == MetricKind::kEntropy || metric.kind == MetricKind::kPrecision ||
               metric.kind == MetricKind::kHeight;
  m = needs_hist ? sa_m : 0;
  use_mask = needs_hist && m > 0 && m <= 64 && (support_mono || distinct_l > 0);
  // the support parts' verdicts by mask are memoised (mask_violates) where the masks repeat (at most 16
  // sensitive values: 65,536 masks at most) or where a verdict walks the hierarchy (the hierarchical EMD)
  support_memo = m <= 16;
  for (const Criterion& c : crit) support_memo = support_memo || c.kind == CriterionKind::kHierarchicalT;
  // With masks, k-anonymity and distinct-l are judged from the counts and masks alone (judge_monotone): the
  // roll-ups then merge no histograms and the judge has no second pass (the same verdicts, classes and order).
  hist_sets = needs_hist && !(use_mask && all_supp_monotone);
}

/// One pass over the (row-major) codes: the per-QI value counts and, when packed, the rows' bottom keys
/// (the grouping reads each key twice when it prefetches). Threads from 2 x par_grain rows on (fixed chunks,
/// per-thread counts summed: exact, and each row's key is its own).
void Engine::Impl::count_rows(const QiRows& codes, std::vector<std::vector<int64_t>>& cnts,
                                  detail::RawBuf<uint64_t>& rk) {
  std::vector<int64_t> off(static_cast<size_t>(r) + 1, 0);  // each QI's counts in one flat array
  for (int64_t j = 0; j < r; ++j)
    off[static_cast<size_t>(j) + 1] = off[static_cast<size_t>(j)] + qi[static_cast<size_t>(j)].n_leaves;
  const int64_t width = off[static_cast<size_t>(r)];
  // four count arrays per thread, for the rows' positions mod 4: a run of rows with one value (common: "Not in
  // universe") would otherwise chain every increment of its counter to the previous one through memory
  // (census-income's engine build on one thread: 7.5 -> 5.6 ms with two arrays); one when the leaves are many
  constexpr int kCopies = 4;
  const int copies = width <= (int64_t{1} << 18) ? kCopies : 1;
  int T = par_threads(n);
  if (copies * static_cast<int64_t>(T) * width > (int64_t{1} << 24)) T = 1;  // (huge hierarchies: one thread)
  std::vector<std::vector<int64_t>> part(static_cast<size_t>(copies * T),
                                         std::vector<int64_t>(static_cast<size_t>(width), 0));
  // each leaf's level-0 code already shifted into its field (one load and an OR per value)
  std::vector<uint64_t> k0;
  // the rows' keys: not zeroed first (every key is written by the loop, whose threads first-touch their pages)
  uint64_t* const row_keys = packed ? rk.get(std::max<int64_t>(n, 1)) : nullptr;
  if (packed) {
    k0.assign(static_cast<size_t>(width), 0);
    for (int64_t j = 0; j < r; ++j) {
      const Qi& q = qi[static_cast<size_t>(j)];
      for (int64_t v = 0; v < q.n_leaves; ++v)
        k0[static_cast<size_t>(off[static_cast<size_t>(j)] + v)] =
            static_cast<uint64_t>(q.gen[static_cast<size_t>(v * (q.h + 1))]) << shift[static_cast<size_t>(j)];
    }
  }
  parallel_chunks(n, int64_t{1} << 16, T, [&](int64_t, int64_t lo, int64_t hi) {
    // everything the loop reads as locals (its int64 stores could alias anything reached by reference)
    const int64_t R = r, w = codes.width;
    const int64_t* const o = off.data();
    const int64_t* const cj = codes.cols.data();
    const uint64_t* const kp = k0.data();
    const int32_t* const base = codes.data;
    uint64_t* const keys = row_keys;
    int64_t* c[kCopies];
    for (int x = 0; x < kCopies; ++x)
      c[x] = part[static_cast<size_t>(copies * thread_index() + (copies == 1 ? 0 : x))].data();
    int64_t* const c0 = c[0];
    int64_t* const c1 = c[1];
    int64_t* const c2 = c[2];
    int64_t* const c3 = c[3];
    int64_t i = lo;
    for (; i + 3 < hi; i += 4) {
      const int32_t* ra = base + i * w;
      uint64_t ka = 0, kb = 0, kc = 0, kd = 0;
      for (int64_t j = 0; j < R; ++j) {
        const int64_t col = cj[j], oj = o[j];
        const int64_t at_a = oj + ra[col], at_b = oj + ra[w + col], at_c = oj + ra[2 * w + col],
                      at_d = oj + ra[3 * w + col];
        c0[at_a]++;
        c1[at_b]++;
        c2[at_c]++;
        c3[at_d]++;
        if (keys != nullptr) {
          ka |= kp[at_a];
          kb |= kp[at_b];
          kc |= kp[at_c];
          kd |= kp[at_d];
        }
      }
      if (keys != nullptr) {
        keys[i] = ka;
        keys[i + 1] = kb;
        keys[i + 2] = kc;
        keys[i + 3] = kd;
      }
    }
    for (; i < hi; ++i) {
      const int32_t* ra = base + i * w;
      uint64_t ka = 0;
      for (int64_t j = 0; j < R; ++j) {
        const int64_t at = o[j] + ra[cj[j]];
        c0[at]++;
        if (keys != nullptr) ka |= kp[at];
      }
      if (keys != nullptr) keys[i] = ka;
    }
  });
  cnts.assign(static_cast<size_t>(r), {});
  for (int64_t j = 0; j < r; ++j) {
    std::vector<int64_t>& cj = cnts[static_cast<size_t>(j)];
    cj.assign(static_cast<size_t>(qi[static_cast<size_t>(j)].n_leaves), 0);
    for (int t = 0; t < copies * T; ++t)
      for (size_t v = 0; v < cj.size(); ++v) cj[v] += part[static_cast<size_t>(t)][static_cast<size_t>(off[static_cast<size_t>(j)]) + v];
  }
}

/// a_level[l] = Σ_rows leaf_count(gen(v, l)) from the per-QI value counts (O(n r + Σ n_leaves h)), the Loss
/// bound's tables, the cache keys and the DM / DM* probe paths.
void Engine::Impl::init_levels(const std::vector<std::vector<int64_t>>& cnts) {
  for (int64_t j = 0; j < r; ++j) {
    Qi& q = qi[static_cast<size_t>(j)];
    const std::vector<int64_t>& cnt = cnts[static_cast<size_t>(j)];
    for (int64_t v = 0; v < q.n_leaves; ++v)
      for (int32_t l = 0; l <= q.h; ++l)
        q.a_level[static_cast<size_t>(l)] += cnt[static_cast<size_t>(v)] * q.lc(l, q.gen[static_cast<size_t>(v * (q.h + 1) + l)]);
  }
  precompute_loss_lb();
  init_cache_keys();
  // DM / DM* probe paths: ln Σ_v n_v² of each QI's own partition per level (see Impl::dm_step)
  dm_log.assign(static_cast<size_t>(r), {});
  const bool dm_kind = metric.kind == MetricKind::kDM || metric.kind == MetricKind::kDMStar;
  for (int64_t j = 0; j < r && dm_kind; ++j) {
    const Qi& q = qi[static_cast<size_t>(j)];
    const std::vector<int64_t>& cnt = cnts[static_cast<size_t>(j)];
    for (int32_t l = 0; l <= q.h; ++l) {
      std::vector<int64_t> agg(static_cast<size_t>(q.card[static_cast<size_t>(l)]), 0);
      for (int64_t v = 0; v < q.n_leaves; ++v)
        agg[static_cast<size_t>(q.gen[static_cast<size_t>(v * (q.h + 1) + l)])] += cnt[static_cast<size_t>(v)];
      double sq = 0.0;
      for (int64_t a : agg) sq += static_cast<double>(a) * static_cast<double>(a);
      dm_log[static_cast<size_t>(j)].push_back(std::log(std::max(1.0, sq)));
    }
  }
}

/// The reference distribution of the sensitive column (counts over the rows, then the criteria core's tables).
void Engine::Impl::init_sensitive(const SensitiveInput& sa, const BottomState* reuse) {
  if (!needs_hist) return;
  if (sa.codes.size != n) throw std::invalid_argument("sensitive codes must have one entry per row");
  if (reuse != nullptr && static_cast<int64_t>(reuse->ref.size()) == m) {
    ref = reuse->ref;  // (the same rows and sensitive column: the caller's contract, as for the bottom)
  } else {
    // (per-thread partial counts over the rows; a value outside [0, m) is refused)
    ref.assign(static_cast<size_t>(m), 0);
    core::value_counts(sa.codes, MutSpan<int64_t>{ref.data(), m}, par_threads(n));
  }
  sa_ref.build(ref.data(), m, n, sa.parent.data, sa.node_height.data, sa.parent.size);
  reference = sa_ref.view();
}

/// One scratch per thread.
void Engine::Impl::init_scratch() {
  scratch.resize(static_cast<size_t>(std::max(1, n_threads)));
  for (Scratch& sc : scratch) sc.ws.prepare(m, static_cast<int64_t>(sa_ref.parent.size()));
}

/// The bottom frequency set, straight from the rows (rk: the rows' packed keys when packed).
void Engine::Impl::build_bottom(const QiRows& codes, const uint64_t* rk, const SensitiveInput& sa) {
  Scratch& s = scratch[0];
  std::vector<int64_t> card0(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j) card0[static_cast<size_t>(j)] = qi[static_cast<size_t>(j)].card[0];
  auto f = std::make_shared<FreqSet>();
  f->levels.assign(static_cast<size_t>(r), 0);
  int64_t G = 0;
  bool hist_done = false;
  if (packed) {
    // the rows' keys were computed with the value counts above (several threads: group_par.cpp, the same
    // classes in the same order; the sensitive histograms made in the grouping's buckets, where each class's
    // rows already sit together in row order, instead of scattering every row again)
    const int T = par_threads(n);
    if (rows_in_halves(T, n, m > 0)) {
      G = group_halves(s, n, [rk](int64_t i) { return rk[i]; }, [](int64_t) { return int64_t{1}; }, f->keys,
                       f->count, true);
    } else if (T > 1) {
      const RowHistograms rh{sa.codes.data, m, &f->hoff, &f->hval, &f->hcnt};
      G = group_partitioned(T, n, rk, nullptr, true, par_buffers(s), s.ids, f->keys, f->count,
                            m > 0 ? &rh : nullptr);
      hist_done = m > 0;
      s.par.reset();  // (its buffers, about 40 bytes a row, are not kept for the roll-ups)
    } else {
      G = group_packed(s, n, [rk](int64_t i) { return rk[i]; },
                       [](int64_t) { return int64_t{1}; }, f->keys, f->count, true);
    }
    f->n_classes = G;
    // the rows' classes move into row_class (no copy: 40 MB and a serial pass at 10M rows); the roll-ups'
    // groupings grow their own ids again
    row_class = std::make_shared<const RawVec<int32_t>>(std::move(s.ids));
    s.ids = RawVec<int32_t>();
  } else {
    G = group_items(s, n, r, card0.data(), [&](int64_t i, int64_t j) {
      const Qi& q = qi[static_cast<size_t>(j)];
      return q.gen[static_cast<size_t>(codes(i, j) * (q.h + 1))];
    });
    f->n_classes = G;
    f->codes.assign(static_cast<size_t>(G * r), -1);
    f->count.assign(static_cast<size_t>(G), 0);
    auto rcl = std::make_shared<RawVec<int32_t>>(static_cast<size_t>(n));  // (each row written below)
    row_class = rcl;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t g2 = s.ids[static_cast<size_t>(i)];
      (*rcl)[static_cast<size_t>(i)] = static_cast<int32_t>(g2);
      if (f->codes[static_cast<size_t>(g2 * r)] < 0 || r == 0)
        for (int64_t j = 0; j < r; ++j) {
          const Qi& q = qi[static_cast<size_t>(j)];
          f->codes[static_cast<size_t>(g2 * r + j)] = q.gen[static_cast<size_t>(codes(i, j) * (q.h + 1))];
        }
      f->count[static_cast<size_t>(g2)] += 1;
    }
  }
  if (m > 0 && !hist_done) {
    // (one thread, or the rows not packed; a row is one 4-byte value read in sequence, about an eighth of a
    // source class's work in a roll-up's merge: threads from 8 x 65,536 rows on)
    const int32_t* ids = row_class->data();
    if (const int T = par_threads(n / 8); T > 1) merge_rows_par(T, ids, sa.codes.data, n, G, *f, s);
    else merge_row_histograms(s, ids, sa.codes.data, n, G, m, f->count.data(), f->hoff, f->hval, f->hcnt);
  }
  if (use_mask) bottom_masks(*f);
  bottom = f;
  note_bottom();
}

Engine::Engine(const QiRows& qi_codes, std::vector<QiInput> qis, SensitiveInput sa, std::vector<Criterion> criteria,
               MetricSpec metric, int64_t limit, int n_threads, bool allow_packed,
               std::shared_ptr<const BottomState> reuse)
    : impl_(std::make_unique<Impl>()) {
  Impl& I = *impl_;
  const detail::PhaseScope timed(I.phases, detail::Phase::kBuild);
  I.n = qi_codes.rows;
  I.r = qi_codes.r();
  I.limit = limit;
  I.n_threads = resolve_threads(n_threads);
  I.crit = std::move(criteria);
  I.metric = metric;
  const double g = metric.gs_factor;
  I.sF = g < 0.5 ? 2.0 * g : 1.0;
  I.gF = g <= 0.5 ? 1.0 : 1.0 - 2.0 * (g - 0.5);
  if (static_cast<int64_t>(qis.size()) != I.r) throw std::invalid_argument("one QiInput per quasi-identifier expected");
  I.init_qis(qis);
  I.weight.assign(static_cast<size_t>(I.r), 1.0);
  if (!metric.weights.empty()) {
    if (static_cast<int64_t>(metric.weights.size()) != I.r) throw std::invalid_argument("one weight per QI expected");
    const double wmax = *std::max_element(metric.weights.begin(), metric.weights.end());
    if (!(wmax > 0.0)) throw std::invalid_argument("the largest weight must be positive");
    for (int64_t j = 0; j < I.r; ++j) I.weight[static_cast<size_t>(j)] = metric.weights[static_cast<size_t>(j)] / wmax;
  }
  I.init_layout(allow_packed);
  I.init_criteria(sa.m);
  // a reused BottomState (same rows, hierarchies and sensitive column: the caller's contract) with this
  // Engine's layout and histograms (none, or of the same number of sensitive values) replaces the pass over
  // the rows and their grouping
  const bool reuse_shape = reuse && reuse->n == I.n && reuse->r == I.r && reuse->packed == I.packed &&
                           reuse->m == I.m;
  std::vector<std::vector<int64_t>> cnts;
  detail::RawBuf<uint64_t> rk;
  if (reuse_shape) {
    cnts = reuse->cnts;
  } else {
    I.count_rows(qi_codes, cnts, rk);
  }
  I.init_levels(cnts);
  I.init_sensitive(sa, reuse_shape ? reuse.get() : nullptr);
  I.init_scratch();
  I.value_counts = std::move(cnts);
  if (reuse_shape) {
    // the reused bottom set is shared read-only (the bottom is never cached, retired or merged into)
    I.reused = true;
    I.row_class = reuse->row_class;  // (shared, not copied)
    I.bottom = reuse->bottom;
    I.note_bottom();
    // masks go with histograms of at most 64 values, and the reused bottom has this Engine's histograms
    if (I.use_mask && I.bottom->vmask.empty()) throw std::logic_error("reused bottom state without value masks");
    return;
  }
  I.build_bottom(qi_codes, rk.v.data(), sa);
}

Engine::~Engine() = default;

int64_t Engine::n_qi() const { return impl_->r; }
int64_t Engine::n_rows() const { return impl_->n; }
int64_t Engine::n_items() const { return static_cast<int64_t>(impl_->row_class->size()); }
int64_t Engine::bottom_classes() const { return impl_->bottom->n_classes; }
int64_t Engine::evaluations() const { return impl_->n_eval; }
std::shared_ptr<const BottomState> Engine::bottom_state() const {
  const Impl& I = *impl_;
  auto st = std::make_shared<BottomState>();
  st->n = I.n;
  st->r = I.r;
  st->m = I.m;
  st->packed = I.packed;
  st->cnts = I.value_counts;
  st->bottom = I.bottom;
  st->row_class = I.row_class;
  st->ref = I.ref;
  return st;
}
bool Engine::reused_bottom() const { return impl_->reused; }
int64_t Engine::rollup_work() const { return impl_->work.load(); }
void Engine::bottom_histograms(std::vector<int64_t>& hoff, std::vector<int32_t>& hval,
                               std::vector<int64_t>& hcnt) const {
  const FreqSet& b = *impl_->bottom;
  hoff.assign(b.hoff.begin(), b.hoff.end());
  hval.assign(b.hval.begin(), b.hval.end());
  hcnt.assign(b.hcnt.begin(), b.hcnt.end());
}
std::vector<std::pair<std::string, double>> Engine::phase_seconds() const {
  std::vector<std::pair<std::string, double>> out;
  for (int p = 0; p < static_cast<int>(detail::Phase::kCount); ++p)
    out.emplace_back(detail::kPhaseNames[p], impl_->phases.seconds(static_cast<detail::Phase>(p)));
  return out;
}
int64_t Engine::primed_sources() const { return impl_->n_primed; }
int64_t Engine::parallel_grain() const { return impl_->par_grain; }
bool Engine::load_aware() const { return impl_->load_aware; }
void Engine::set_load_aware(bool on) { impl_->load_aware = on; }
void Engine::set_parallel_grain(int64_t grain) {
  if (grain < 1) throw std::invalid_argument("parallel_grain must be at least 1");
  impl_->par_grain = grain;
}
bool Engine::predicate_monotone() const { return impl_->p_monotone; }
bool Engine::metric_monotone() const { return impl_->m_monotone; }
std::vector<int32_t> Engine::heights() const {
  std::vector<int32_t> h;
  for (const auto& q : impl_->qi) h.push_back(q.h);
  return h;
}
double Engine::cheap_lower_bound(const int32_t* levels) const { return impl_->cheap_lb(levels); }

double Engine::suppression_loss_bound(Span<int32_t> levels) {
  Impl& I = *impl_;
  auto f = I.freq(levels.data, I.scratch[0], false);
  if (f != I.bottom) I.remember(f);
  int64_t small = 0;
  return I.size_loss(*f, I.scratch[0], small);
}

NodeResult Engine::evaluate(Span<int32_t> levels, bool early) { return impl_->evaluate(levels.data, early); }

NodeResult Engine::evaluate_dm_cut(Span<int32_t> levels, double cut) {
  Impl& I = *impl_;
  if (!(I.packed && !I.needs_hist && (I.metric.kind == MetricKind::kDM || I.metric.kind == MetricKind::kDMStar)))
    throw std::invalid_argument("evaluate_dm_cut needs metric DM or DM*, k-anonymity only and packed keys");
  I.dm_cut_value = cut;
  return I.evaluate_dm_bounded(levels.data);
}

std::vector<NodeResult> Engine::evaluate_many(Matrix<int32_t> levels) {
  Impl& I = *impl_;
  std::vector<NodeResult> out(static_cast<size_t>(levels.rows));
  const int threads = static_cast<int>(std::min<int64_t>(I.n_threads, std::max<int64_t>(1, levels.rows)));
  if (threads <= 1) {
    for (int64_t i = 0; i < levels.rows; ++i) out[static_cast<size_t>(i)] = I.evaluate(levels.row(i));
    return out;
  }
  // Parallel: each chunk rolls up from the (read-only) cache with its own scratch; results in input order.
  // Deferred histograms of the shared sources (and of cached nodes judged in full) are merged first, serially.
  if (I.m > 0 && I.needs_hist)
    for (int64_t i = 0; i < levels.rows; ++i) I.ensure_hist(*I.source_for(levels.row(i)), I.scratch[0]);
  const int64_t chunk = (levels.rows + threads - 1) / threads;
  parallel_chunks(levels.rows, chunk, threads, [&](int64_t ci, int64_t b, int64_t e) {
    Scratch& s = I.scratch[static_cast<size_t>(ci)];
    for (int64_t i = b; i < e; ++i) {
      auto f = I.freq(levels.row(i), s);
      out[static_cast<size_t>(i)] = I.judge(*f, s);
    }
  });
  I.n_eval += levels.rows;
  return out;
}

NodeResult Engine::classify(Span<int32_t> levels, MutSpan<int64_t> labels, MutSpan<uint8_t> suppressed,
                            std::vector<int64_t>* first, bool clean) {
  Impl& I = *impl_;
  Scratch& s = I.scratch[0];
  FreqSet f;
  NodeResult res;
  RawVec<int32_t> map;  // bottom class -> node class
  if (clean) {
    // nothing is suppressed (the caller's knowledge, checked by the audit of the published partition): the
    // classes only (no masks, no histograms; the generic layout merges them)
    if (I.packed) I.rollup_packed(*I.bottom, levels.data, f, s, nullptr, true);
    else I.rollup(*I.bottom, levels.data, f, s);
    res.feasible = true;
    res.n_classes = f.n_classes;
    map.swap(s.ids);  // (given back below)
  } else {
    I.rollup(*I.bottom, levels.data, f, s);
    map = s.ids;
    res = I.judge(f, s);
  }
  // dense labels in order of first appearance over the rows: the groupings number their groups by first
  // appearance (the bottom's over the rows, a roll-up's over the source classes), so the node's class ids
  // are that order already; the pass checks it (each new class is the next id) and records first rows.
  const int32_t* mp = map.data();
  const int32_t* rc = I.row_class->data();
  const uint8_t* viol = clean ? nullptr : s.viol.data();
  const auto n_items = static_cast<int64_t>(I.row_class->size());  // rows, or weighted items (from_counts.cpp)
  if (first != nullptr) first->clear();
  int64_t next = 0;
  auto see = [&](int64_t i, int64_t c) {  // row i of class c, c >= next: a class's first row
    if (c != next) throw std::logic_error("classify: class ids not in order of first appearance");
    next = c + 1;
    if (first != nullptr) first->push_back(i);
  };
  const int T = I.par_threads(n_items);
  if (T <= 1) {
    for (int64_t i = 0; i < n_items; ++i) {
      const int32_t c = mp[rc[i]];
      labels[i] = c;
      suppressed[i] = viol != nullptr ? viol[c] : uint8_t{0};
      if (c >= next) see(i, c);
    }
  } else {
    // in chunks of rows on the threads: each chunk keeps the rows where its own running maximum grows, which
    // include every row where a class first appears (its id exceeds every earlier row's); walking those
    // candidates in row order finds the first rows, and the first out-of-order id, as the serial pass does
    const int64_t chunk = std::max<int64_t>(I.par_grain, (n_items + 8 * T - 1) / (8 * T));
    std::vector<std::vector<int64_t>> cand(static_cast<size_t>((n_items + chunk - 1) / chunk));
    parallel_chunks(n_items, chunk, T, [&](int64_t p, int64_t lo, int64_t hi) {
      auto& cd = cand[static_cast<size_t>(p)];
      int64_t mx = -1;
      for (int64_t i = lo; i < hi; ++i) {
        const int32_t c = mp[rc[i]];
        labels[i] = c;
        suppressed[i] = viol != nullptr ? viol[c] : uint8_t{0};
        if (c > mx) {
          mx = c;
          cd.push_back(i);
        }
      }
    });
    for (const auto& cd : cand)
      for (const int64_t i : cd)
        if (labels[i] >= next) see(i, labels[i]);
  }
  if (clean) map.swap(s.ids);
  return res;
}

std::vector<double> level_sizes(Span<int32_t> heights) {
  std::vector<double> c{1.0};
  for (int64_t i = 0; i < heights.size; ++i) {
    std::vector<double> d(c.size() + static_cast<size_t>(heights[i]), 0.0);
    for (size_t a = 0; a < c.size(); ++a)
      for (int32_t b = 0; b <= heights[i]; ++b) d[a + static_cast<size_t>(b)] += c[a];
    c.swap(d);
  }
  return c;
}

}  // namespace anoncore::lattice

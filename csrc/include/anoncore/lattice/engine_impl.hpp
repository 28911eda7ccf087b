// The lattice engine's state (Engine::Impl), shared by its rooms (internal to the lattice):
//  - frequency sets (freqset.hpp: the set layout and the grouping primitives; freqset.cpp: roll-ups,
//    histogram merges, the cache of sets, the evaluation of one node),
//  - judging (judge.cpp: the classes of a set against the criteria, with the criteria core of
//    anoncore/criteria),
//  - objectives and bounds (objective.cpp: the metrics and their monotone lower bounds),
//  - the engine's construction and public calls (engine.cpp),
//  - the optimal search (search.hpp / search.cpp, on the node index of node_index.hpp).
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/lattice/freqset.hpp"
#include "anoncore/lattice/group_par.hpp"
#include "anoncore/lattice/lattice.hpp"
#include "anoncore/lattice/phase_clock.hpp"

namespace anoncore::lattice {
using namespace detail;  // NOLINT(google-build-using-namespace): the rooms share these internal types

struct BottomState {
  int64_t n = 0, r = 0, m = 0;
  bool packed = false;
  std::vector<std::vector<int64_t>> cnts;  // per-QI value counts
  std::shared_ptr<FreqSet> bottom;         // never modified once built (histograms present, never cached)
  std::shared_ptr<const RawVec<int32_t>> row_class;
  std::vector<int64_t> ref;  // sensitive-value counts over the rows (when the bottom has histograms)
};


struct Engine::Impl {
  int64_t n = 0, r = 0, m = 0, limit = 0;
  std::vector<std::vector<int64_t>> value_counts;  // per-QI value counts (kept for bottom_state)
  bool reused = false;
  int n_threads = 1;
  std::vector<Qi> qi;
  std::vector<int64_t> ref;            // reference counts P_v over all rows
  criteria::ReferenceTables sa_ref;    // the reference distribution's tables (criteria core)
  criteria::Reference reference;       // their view, as the criteria core takes it
  std::vector<Criterion> crit;
  MetricSpec metric;
  double gF = 1.0, sF = 1.0;
  int64_t min_size = 1;
  int64_t distinct_l = 0;
  bool needs_hist = false;
  bool support_mono = false;  // some criterion has a support part (support_violates)
  bool support_memo = false;  // mask_violates memoises the support part's verdicts (<= 16 values, hierarchical EMD)
  // every count of the table fits 32 bits (its rows or total weight below 2^32): histogram merges run on
  // 8-byte entries (RunEntry32, freqset.hpp); set with the bottom (note_bottom)
  bool narrow_runs = false;
  // and every count fits 24 bits and every sensitive value 8 (at most 256): 4-byte entries (RunEntry24)
  bool tiny_runs = false;
  void note_bottom() {
    int64_t total = 0;
    for (const int64_t c : bottom->count) total += c;
    narrow_runs = total < (int64_t{1} << 32);
    tiny_runs = total < (int64_t{1} << 24) && m <= 256;
  }
  bool hist_sets = false;     // the rolled-up sets carry histograms: needs_hist, unless the value masks decide every
                              // criterion (k-anonymity and distinct-l only, with masks): then only the bottom has them
  bool use_mask = false;      // the sets carry value masks (FreqSet::vmask): needs_hist, m <= 64 and a
                              // support part or distinct-l
  bool p_monotone = false;
  bool m_monotone = false;
  std::shared_ptr<const RawVec<int32_t>> row_class;  // row -> bottom class (shared with bottom_state)
  std::shared_ptr<FreqSet> bottom;
  // cache of frequency sets: by node key, with insertion order for eviction under a class budget
  std::unordered_map<std::string, std::shared_ptr<FreqSet>> cache;
  std::vector<std::shared_ptr<FreqSet>> cache_fs;  // insertion order (oldest first), flat index below
  std::vector<int64_t> cache_nc;                    // classes per entry
  std::vector<int32_t> cache_lv;                    // levels per entry, r each
  int64_t cache_base = 0;                           // entries dropped from the front of the flat index
  int64_t cache_classes = 0;
  int64_t cache_budget = int64_t{1} << 23;  // total cached classes (about 1 GB on census-income with histograms)
  std::vector<Scratch> scratch;
  int64_t n_eval = 0;
  std::atomic<int64_t> work{0};  // source classes rolled up (diagnostic)
  mutable detail::PhaseClock phases;  // seconds per phase (diagnostic: phase_clock.hpp)

  // packed layout: when the level-0 cardinalities fit in 64 bits, a class is one uint64 with a fixed bit
  // field per QI (the same at every level, since codes only shrink upward), so a roll-up rewrites only the
  // fields of the QIs whose level changes and groups the keys in one hash pass.
  bool packed = false;
  std::vector<uint32_t> shift;
  std::vector<uint64_t> fmask;

  int32_t code(const FreqSet& f, int64_t c, int64_t j) const {
    if (packed)
      return static_cast<int32_t>((f.keys[static_cast<size_t>(c)] >> shift[static_cast<size_t>(j)]) &
                                  fmask[static_cast<size_t>(j)]);
    return f.codes[static_cast<size_t>(c * r + j)];
  }

  /// The packed grouping of a roll-up that rewrites D fields (D known at compile time: the loop unrolls), on
  /// T threads (group_rollup_t).
  template <size_t D>
  int64_t rollup_fields(int T, const uint64_t* sk, uint64_t keep, const std::vector<int32_t>& dj,
                        const std::vector<const int32_t*>& dmap, int64_t C, const int64_t* w, FreqSet& dst,
                        Scratch& s) const {
    uint32_t dsh[D];
    uint64_t dfm[D];
    const int32_t* mp[D];
    for (size_t d = 0; d < D; ++d) {
      dsh[d] = shift[static_cast<size_t>(dj[d])];
      dfm[d] = fmask[static_cast<size_t>(dj[d])];
      mp[d] = dmap[d];
    }
    return group_rollup_t(T, par_grain, s, C, [&](int64_t i) {
      const uint64_t k = sk[i];
      uint64_t nk = k & keep;
      for (size_t d = 0; d < D; ++d) nk |= static_cast<uint64_t>(mp[d][(k >> dsh[d]) & dfm[d]]) << dsh[d];
      return nk;
    }, w, dst.keys, dst.count);
  }

  // ---- frequency sets (freqset.cpp): roll-ups, histogram merges, the cache of sets ----------------------
  void rollup_packed(const FreqSet& src, const int32_t* target, FreqSet& dst, Scratch& s,
                     const std::shared_ptr<FreqSet>& defer_src = nullptr, bool classes_only = false) const;

  void merge_from(const FreqSet& src, const int32_t* ids, int64_t C, int64_t G, FreqSet& dst, Scratch& s) const;

  template <class E>
  struct EntryTag {
    using type = E;
  };
  /// The merge of src's histograms into dst, for merge_from and merge_from_par: run(tag, nnz, hist, counts)
  /// with the run entries' type as EntryTag<E> (RunEntry24, RunEntry32 or RunEntry by the table's counts:
  /// tiny_runs, narrow_runs), src's items (nnz(i) entries, hist(i, add) calling add(value, count) for each,
  /// whatever src's count width) and dst's counts (hcnt32 when narrow_runs, which dst.cnt32 records).
  template <class Run>
  void merge_dispatch(const FreqSet& src, FreqSet& dst, Run&& run) const {
    const int64_t* ho = src.hoff.data();
    const int32_t* hv = src.hval.data();
    auto nnz = [ho](int64_t i) { return ho[i + 1] - ho[i]; };
    auto with = [&](const auto* hc) {
      auto hist = [ho, hv, hc](int64_t i, auto&& add) {
        for (int64_t x = ho[i]; x < ho[i + 1]; ++x) add(hv[x], static_cast<int64_t>(hc[x]));
      };
      if (tiny_runs) run(EntryTag<RunEntry24>{}, nnz, hist, dst.hcnt32);
      else if (narrow_runs) run(EntryTag<RunEntry32>{}, nnz, hist, dst.hcnt32);
      else run(EntryTag<RunEntry>{}, nnz, hist, dst.hcnt);
    };
    dst.cnt32 = narrow_runs;
    if (src.cnt32) with(src.hcnt32.data());
    else with(src.hcnt.data());
  }

  // ---- threads inside one evaluation (freqset_par.cpp) ---------------------------------------------------
  // A set of at least 2 * par_grain items (source classes of a roll-up, rows of the bottom) is merged and
  // grouped by up to n_threads threads, at least par_grain items each, with exactly the serial output. The
  // default, 32,768 (65,536 items), puts census-income's first roll-ups (90,565 classes) on two threads: its
  // row b's search 15.2 -> 13.3 ms on 2 cores, the 2M-row synthetic search 649 -> 622 ms.
  // (ANONCORE_LATTICE_PARALLEL_GRAIN in the environment: the grain of the Engines built afterwards, their
  // bottom grouping included; tests set it small so that small tables take the parallel paths)
  int64_t par_grain = par_grain_default();
  static int64_t par_grain_default() {
    const char* v = std::getenv("ANONCORE_LATTICE_PARALLEL_GRAIN");
    const long long g = v == nullptr ? 0 : std::atoll(v);
    return g >= 1 ? static_cast<int64_t>(g) : int64_t{1} << 15;
  }
  // hold the threads to the cores other processes leave idle (see par_threads); ANONCORE_LATTICE_LOAD_AWARE=0
  // (or ANONCORE_LOAD_AWARE=0) in the environment turns it off for the Engines built afterwards (tests)
  bool load_aware = load_aware_default();
  static bool load_aware_default() {
    const char* v = std::getenv("ANONCORE_LATTICE_LOAD_AWARE");
    return load_aware_enabled() && (v == nullptr || std::string(v) != "0");
  }
  /// Threads for a pass over `items` items: 1 below the grain, with one thread, or inside a parallel region.
  int par_threads(int64_t items) const;
  /// A class judged counts as kJudgeWork items of a grouping for par_threads (judge.cpp): the monotone part by
  /// value masks costs 20-30 ns a class (10M synthetic rows, equal-distance t on 50 values), several times a
  /// grouped item, so sets of 8,192 classes or more (a deferred set: source classes read) are judged in chunks.
  static constexpr int64_t kJudgeWork = 8;
  void merge_from_par(int T, const FreqSet& src, const int32_t* ids, int64_t C, int64_t G, FreqSet& dst,
                      Scratch& s) const;
  void merge_rows_par(int T, const int32_t* ids, const int32_t* vals, int64_t n_rows, int64_t G, FreqSet& dst,
                      Scratch& s);

  // A deferred source composes while its anchor has at most compose_k times its classes (otherwise it is
  // merged in full first). Composing costs a pass over the anchor's classes per roll-up from the source, and
  // the judge of the new set another (its lists) when it is not cut on class size; merging costs one pass
  // over the anchor's classes and histograms, once. So the limit is lower when most deferred sets end up
  // judged on the fly (measured: Adult 5, 6, 7b faster with 4; Adult 3, 4, where most judges are
  // cut on class size, faster with 8). It is updated by the serial evaluation only (the parallel batches read
  // it, so their serial preparation and the region agree). Only a cost matter: with order-insensitive
  // criteria the verdicts do not depend on it; with entropy-l or Hellinger it stays 8.
  int64_t compose_k = 8;
  mutable std::atomic<int64_t> n_judged_deferred{0}, n_judged_lazy{0};  // (counted by judge, any thread)
  bool adapt_compose = false;
  /// A deferred roll-up from src composes the class maps (reads src only) instead of merging src first.
  /// Never through the bottom: a set deferred to the bottom is merged in full when it first
  /// becomes a source, so that the sets rolled up from it compose through it (a few thousand classes on
  /// Adult) instead of through the bottom (12,458): composed maps, the judge's lists and the later full
  /// merges all scale with the anchor (Adult 5, with the meets below: full merges read 3.71M -> 1.55M
  /// source classes).
  // A deferred source that cannot compose stays deferred for its first roll-up: that set is judged
  // through two levels of class maps (see judge) and the source is merged in full only when that judge needs
  // every class, or at its second use as a source (then it serves several roll-ups and one merge is cheaper
  // than walking it again: measured, limits 0, 2 and unlimited slower than 1 on Adult 5, 6, 7b). About half
  // of the full merges on Adult 5 were of sets that served one roll-up. Only a cost matter. Serial only: the
  // parallel batches merge their non-composing sources before the region, so they never see such a source.
  static constexpr int32_t max_mid_uses = 1;
  bool composes(const FreqSet& src) const {
    return packed && src.hsrc && !src.hsrc->hsrc && src.hsrc != bottom &&
           src.hsrc->n_classes <= compose_k * src.n_classes;
  }
  /// Whether freq(target, early) from src may defer (and so compose).
  bool defers(bool early) const { return early && !crit.empty(); }

  void ensure_hist(const FreqSet& cf, Scratch& s) const;

  void rollup(const FreqSet& src, const int32_t* target, FreqSet& dst, Scratch& s,
              const std::shared_ptr<FreqSet>& defer_src = nullptr) const;

  void bottom_masks(FreqSet& f) const;

  void or_masks(const FreqSet& src, const int32_t* ids, int64_t C, int64_t G, FreqSet& dst, Scratch& s) const;

  // The cache's index: keyed by the levels packed into one integer (a bit field per QI, wide
  // enough for its height) when they fit in 64 bits, else by node_key (a string). source_for, remember and
  // the retirement make about 2r + 2 lookups per evaluation.
  bool ck_packed = false;
  std::vector<uint32_t> ck_shift;
  std::unordered_map<uint64_t, std::shared_ptr<FreqSet>> pcache;
  void init_cache_keys();
  uint64_t ck(const int32_t* lv) const {
    uint64_t c = 0;
    for (int64_t j = 0; j < r; ++j) c |= static_cast<uint64_t>(lv[j]) << ck_shift[static_cast<size_t>(j)];
    return c;
  }
  const std::shared_ptr<FreqSet>* cache_get(const int32_t* lv) const {
    if (ck_packed) {
      auto it = pcache.find(ck(lv));
      return it == pcache.end() ? nullptr : &it->second;
    }
    auto it = cache.find(node_key(lv, r));
    return it == cache.end() ? nullptr : &it->second;
  }
  void cache_drop(const int32_t* lv) {
    if (ck_packed) pcache.erase(ck(lv));
    else cache.erase(node_key(lv, r));
  }
  void cache_add(const int32_t* lv, const std::shared_ptr<FreqSet>& f) {
    if (ck_packed) pcache.emplace(ck(lv), f);
    else cache.emplace(node_key(lv, r), f);
  }

  std::shared_ptr<FreqSet> source_for(const int32_t* target) const;

  void retire_predecessors(std::vector<int32_t> lv);

  void remember(const std::shared_ptr<FreqSet>& f);

  // ---- table-level criteria (table_criteria.cpp) ----------------------------------------------------------
  TableCriteria tcrit;
  bool has_tcrit = false;
  bool table_holds(const FreqSet& f, const uint8_t* viol, int64_t S) const;
  Impl* pop = nullptr;          // set_population: the population's engine (its cache is used under pop_mu)
  int64_t pop_k = 0;
  double pop_dmin = -1.0, pop_dmax = 2.0;
  mutable std::mutex pop_mu;
  bool population_holds(const FreqSet& f, const uint8_t* viol) const;

  // ---- judging (judge.cpp): the classes of a set against the criteria ----------------------------------
  void check_class(int64_t nE, const int32_t* hv, const int64_t* hc, int64_t nnz, Scratch& s, uint8_t& viol,
                   uint8_t& viol_m) const;

  /// The support part (monotone) of the classes whose values are {hv[0..nnz)} (criteria::support_violates).
  bool support_violates(const int32_t* hv, int64_t nnz, Scratch& s) const;

  bool mask_violates(uint64_t mask, Scratch& s) const;
  bool mask_support_violates(uint64_t mask, Scratch& s) const;

  // ---- objectives and bounds (objective.cpp) ------------------------------------------------------------
  double aggregate(const std::vector<double>& x) const;

  double loss_value(const int32_t* lv, const std::vector<int64_t>* kept_num, const std::vector<int64_t>* supp_num,
                    int64_t S) const;

  double precision_value(const int32_t* lv, int64_t S) const;

  double entropy_mono(const int32_t* lv) const;
  double aecs_lb(int64_t n_classes) const;

  // KL divergence and ambiguity (objective_info.cpp): tables over the bottom classes (the QI tuples), built
  // once on first use (thread-safe), and the per-node value and bounds.
  struct InfoTables {
    double log2_max_area = 0.0;              // Σ_j log2 |dom_j| (the suppressed rows' area)
    double max_area = 1.0;                   // Π_j |dom_j|
    double kl_const = 0.0;                   // Σ_t w_t log2 p_t
    double slack = 0.0;                      // absolute margin of the KL cheap bound
    std::vector<std::vector<double>> level;  // per QI and level: KL Σ_t w_t log2 leaves, ambiguity mean ln leaves
    std::vector<double> w;                   // ARX KL: per bottom class w_t = c_t² / N
  };
  mutable std::once_flag info_once;
  mutable InfoTables info;
  bool info_kind() const {
    return metric.kind == MetricKind::kKLArx || metric.kind == MetricKind::kAmbiguity ||
           metric.kind == MetricKind::kKL;
  }
  const InfoTables& info_tables() const;
  double info_cheap_lb(const int32_t* lv) const;
  double info_lower_bound(const FreqSet& f) const;
  void info_score(const FreqSet& f, const uint8_t* viol, int64_t S, NodeResult& res) const;
  double kl_value(const FreqSet& f, const uint8_t* viol, int64_t S) const;
  void kl_class_weights(const FreqSet& f, std::vector<double>& W) const;
  double class_area(const FreqSet& f, int64_t c) const;

  // DM / DM* probe paths (a heuristic only: any path is exact). ln of Σ_v n_v² over the values of QI j at
  // level l (the one-QI partition's DM*). Under independent QIs, a node's Σ n_E² / N² (the chance that two
  // random rows share a class) is the product of the one-QI ratios, so raising QI j multiplies it by about
  // exp(dm_log[j][l+1] - dm_log[j][l]): the probe's path raises the QI with the smallest such step.
  std::vector<std::vector<double>> dm_log;
  double dm_step(const int32_t* lv, int64_t j) const {
    const auto& d = dm_log[static_cast<size_t>(j)];
    return d[static_cast<size_t>(lv[j] + 1)] - d[static_cast<size_t>(lv[j])];
  }

  // Loss without suppression depends on each QI's level only: per (QI, level) the aggregate's term (w x, or
  // x / D w for the arithmetic mean) and, for the geometric mean, pow(w x + 1, 1/D), precomputed so that the
  // bound costs r operations (the same operations in the same order as aggregate, so the same double).
  std::vector<std::vector<double>> lb_x, lb_pow;
  std::vector<double> weight;  // attribute weights of Loss (MetricSpec::weights normalised; all 1 by default)

  void precompute_loss_lb();

  double loss_lb(const int32_t* lv) const;

  double cheap_lb(const int32_t* lv) const;

  double loss_flagged(const FreqSet& f, const uint8_t* viol, int64_t S) const;

  // ---- suppression-aware cut (Loss with record suppression) ------------------------------------------
  // Claim: if every class of a node flagged here is also suppressed in the node's true output, then
  // Loss(flagged suppression) <= Loss(true suppression). Proof: per QI j, ARX's A_j charges a kept class
  // gF·s_E and a suppressed one n_E (sF = 1) or s_E + sF·(n_E − s_E) (otherwise), with 0 <= s_E <= n_E and
  // gF <= 1, sF >= 0 (gs-factor in [0, 1]); so moving a class from kept to suppressed never lowers A_j, and
  // x_j = round10(max(0, (A_j − min_j)/(N − min_j))) and every aggregate (geometric / arithmetic mean, sum,
  // max) are non-decreasing in each A_j. Classes below the minimal class size (k, ceil(l)) are suppressed
  // in every output, so the Loss with only those suppressed bounds the node's Loss from below, and it needs
  // neither the sensitive-value histograms nor the other criteria. Floating point: the kept/suppressed sums
  // are exact integers, but A_j's few roundings (and round10's floor) may move the value by about 1e-10,
  // so a node is cut only when the bound exceeds the incumbent by more than kCutEps (relative): it is then
  // strictly worse than the incumbent and can neither be the optimum nor win its tie-break.
  // The cut never tags anything: it is used only when feasibility is not upward closed (then tagging uses
  // only the exact class-size part, which the cut keeps exact). tests/test_lattice.py checks the bound
  // against the true Loss on random nodes and the optimal search against exhaustive search.
  static constexpr double kCutEps = 1e-9;
  bool cut_on = false;     // set by the search (serial code only; parallel regions only read it)
  double cut_value = 0.0;  // the incumbent's objective

  bool beats_cut(double bound) const {
    return cut_on && bound - kCutEps * std::max(1.0, std::fabs(cut_value)) > cut_value;
  }

  double size_loss(const FreqSet& f, Scratch& s, int64_t& small) const;

  double lower_bound_of(const FreqSet& f) const;

  NodeResult judge(const FreqSet& f, Scratch& s, bool early = false) const;
  int64_t judge_monotone(const FreqSet& f, Scratch& s, bool early, bool distinct_now) const;
  void lazy_lists(const FreqSet& f, Scratch& s, bool two) const;
  int list_threads(int64_t n, int64_t G) const;
  void lazy_hist(const FreqSet& f, const Scratch& lists, Scratch& s, int64_t c, bool two) const;
  void check_one(const FreqSet& f, const Scratch& lists, Scratch& ts, int64_t c, bool lazy, bool two, uint8_t& v,
                 uint8_t& vm) const;
  bool judge_rest(const FreqSet& f, Scratch& s, bool early, bool lazy, bool two, int64_t& S, int64_t& SM) const;
  // the passes on several threads (judge_par.cpp): the serial flags, sums and early stop
  int64_t judge_monotone_par(int T, const FreqSet& f, Scratch& s, bool stop) const;
  bool judge_rest_par(int T, const FreqSet& f, Scratch& s, bool early, bool lazy, bool two, int64_t& S,
                      int64_t& SM) const;
  void score(const FreqSet& f, Scratch& s, int64_t S, NodeResult& res) const;

  // ---- evaluation of a node (freqset.cpp) -----------------------------------------------------------------
  std::shared_ptr<FreqSet> freq(const int32_t* lv, Scratch& s, bool early = false) const;

  // ---- DM / DM* cut (the optimal search's incumbent) --------------------------------------------------
  // Claim: while the classes of a node are grouped from a source set (a finer partition), the value
  //   B = Σ_groups a_G² + Σ_{source classes not yet read} n_s²
  // (a_G: rows of the source classes read so far that fall into group G) never exceeds the node's final
  // Σ n_E². Proof: every final class E is the disjoint union of its read part a_E and its unread source
  // classes s, so n_E² = (a_E + Σ_s n_s)² >= a_E² + Σ_s n_s² (all terms are >= 0). B starts at the source's
  // Σ n_s² and grows by (g + c)² - g² - c² = 2 g c whenever a source class of c rows joins a group that
  // already holds g rows. Σ n_E² is DM*, and it bounds DM from below (a suppressed class costs N·n_E >= n_E²),
  // so once (double) B > incumbent the node's objective (a double rounded from an integer >= B, and rounding
  // is monotone) is strictly above the incumbent: it cannot be the optimum nor win a tie, and its successors
  // (Σ n_E² is monotone upward) cannot either. The grouping stops there; the node is reported `partial` with
  // lower_bound B: neither feasible nor known infeasible (the search never tags from it), its set is not
  // cached. Used only by the serial search on k-anonymity-only problems with packed keys (no histograms).
  bool dm_cut_on = false;   // set by the search (serial code only)
  double dm_cut_value = 0.0;

  bool rollup_dm_bounded(const FreqSet& src, const int32_t* target, FreqSet& dst, Scratch& s, double cut,
                         int64_t& bound) const;

  NodeResult evaluate_dm_bounded(const int32_t* lv);

  // Shared intermediate sources. Early in a search nothing is cached, so the high nodes of the first probe
  // paths are rolled up from the bottom set one by one (Adult 1: 7 of 164 evaluations, 70 % of the roll-up
  // work); with a sensitive attribute, the successors of nodes decided without grouping too (Adult 5: 237
  // roll-ups from the bottom, half of all source classes read). When a node's source would be the bottom
  // again, the meet (level-wise minimum) of it and the previous such node is rolled up first and cached (not
  // judged, not an evaluation), so that it and the later nodes above that meet roll up from the (much
  // smaller) meet. With histograms the meet is merged in full (never deferred): it is about to be
  // a source, and its successors then compose through it rather than through the bottom (Adult 5: roll-ups
  // from the bottom 237 -> 20, 17 meets cached; source classes rolled up 5.67M -> 4.29M). Only a cost
  // matter: results never depend on what is cached.
  std::vector<int32_t> last_from_bottom;
  int64_t n_primed = 0;  // meets rolled up and cached (diagnostic)
  void prime_source(const int32_t* lv);

  NodeResult evaluate(const int32_t* lv, bool early = false);
  // ---- construction (engine.cpp) ----------------------------------------------------------------------------
  void init_qis(const std::vector<QiInput>& qis);
  void init_layout(bool allow_packed);
  void init_criteria(int64_t sa_m);
  void count_rows(const QiRows& codes, std::vector<std::vector<int64_t>>& cnts, detail::RawBuf<uint64_t>& rk);
  void init_levels(const std::vector<std::vector<int64_t>>& cnts);
  void init_sensitive(const SensitiveInput& sa, const BottomState* reuse);
  void init_scratch();
  void build_bottom(const QiRows& codes, const uint64_t* rk, const SensitiveInput& sa);
  // ---- construction from weighted items (from_counts.cpp) -----------------------------------------------
  void init_engine(Matrix<int32_t> codes, const std::vector<QiInput>& qis, std::vector<Criterion> criteria,
                   MetricSpec metric, int64_t lim, int threads, bool allow_packed, int64_t sa_m);
  void build_from_items(Matrix<int32_t> codes, const int64_t* w, const SensitiveInput& sa);
};


}  // namespace anoncore::lattice

// Judging the classes of a frequency set: the monotone part (class size, distinct values, the support of the
// sensitive values) on every class, then the other criteria class by class, with histograms merged on the fly
// for a set whose histograms are deferred.
#include "anoncore/lattice/engine_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace anoncore::lattice {

/// The class of size nE whose sensitive-value histogram is (hv[x], hc[x]) for x in [0, nnz): viol = violates
/// some criterion, viol_m = violates the monotone part (class size, distinct values, support). The criteria
/// are judged by the criteria core (anoncore/criteria/class_criteria.hpp), inlined here.
void Engine::Impl::check_class(int64_t nE, const int32_t* hv, const int64_t* hc, int64_t nnz, Scratch& s,
                               uint8_t& viol, uint8_t& viol_m) const {
  if (nE < min_size) {
    viol = viol_m = 1;
    return;
  }
  viol = viol_m = 0;
  if (crit.empty() || (!needs_hist)) return;
  if (nnz < distinct_l) {
    viol = viol_m = 1;
    return;
  }
  const criteria::ClassHist h{hv, hc, nnz, nE};
  for (const Criterion& cr : crit) {
    if (!criteria::class_holds(cr, h, reference, s.ws)) {
      viol = 1;
      viol_m = !use_mask && support_violates(hv, nnz, s) ? 1 : 0;  // (with masks: found in pass 1)
      return;
    }
  }
}

bool Engine::Impl::support_violates(const int32_t* hv, int64_t nnz, Scratch& s) const {
  if (!support_mono) return false;
  return criteria::support_violates(crit.data(), static_cast<int64_t>(crit.size()), hv, nnz, reference, s.ws);
}

/// The monotone part of a class from its value mask alone: fewer than distinct-l values, or a support that
/// no distribution can satisfy. The support part is a sum over the mask's values (the equal-distance EMD,
/// Hellinger, beta-likeness, the value counts; the ordered EMD gap by gap from prefix sums); with more than 16
/// sensitive values it is computed at once (support_memo false): a memo of the verdicts by mask missed on half
/// the classes of a 2M-row table with 50 values (495,000 of 937,000 lookups) and cost more than the sums
/// (the demo's ordered EMD on 50 values: 116-124 ms with the memo, 106-110 without). With at most 16 values,
/// or for the hierarchical EMD (which walks the hierarchy), the verdicts are memoised per scratch by mask
/// (open addressing, 0 = empty): Adult's enhanced beta-likeness (14 values) took 10 % longer without it.
bool Engine::Impl::mask_violates(uint64_t mask, Scratch& s) const {
  if (distinct_l > 0 && __builtin_popcountll(mask) < distinct_l) return true;
  if (!support_mono) return false;
  if (!support_memo) return mask_support_violates(mask, s);
  if (s.memo_key.empty()) {
    s.memo_key.assign(1024, 0);
    s.memo_val.assign(1024, 0);
    s.memo_n = 0;
  }
  auto slot_of = [&](uint64_t key) {
    const size_t mask_cap = s.memo_key.size() - 1;
    size_t i = static_cast<size_t>((key * kHashMul) >> 40) & mask_cap;
    while (s.memo_key[i] != 0 && s.memo_key[i] != key) i = (i + 1) & mask_cap;
    return i;
  };
  size_t i = slot_of(mask);
  if (s.memo_key[i] == mask) return s.memo_val[i] != 0;
  const bool v = mask_support_violates(mask, s);
  s.memo_key[i] = mask;
  s.memo_val[i] = v ? 1 : 0;
  if (2 * ++s.memo_n >= s.memo_key.size()) {  // grow x4 past half full
    std::vector<uint64_t> ok;
    std::vector<uint8_t> ov;
    ok.swap(s.memo_key);
    ov.swap(s.memo_val);
    s.memo_key.assign(ok.size() * 4, 0);
    s.memo_val.assign(ok.size() * 4, 0);
    for (size_t x = 0; x < ok.size(); ++x)
      if (ok[x] != 0) {
        const size_t y = slot_of(ok[x]);
        s.memo_key[y] = ok[x];
        s.memo_val[y] = ov[x];
      }
  }
  return v;
}

/// The support part of the set of values of a mask (support_violates, its values in ascending order).
bool Engine::Impl::mask_support_violates(uint64_t mask, Scratch& s) const {
  auto each = [mask](auto&& f) {
    for (uint64_t b = mask; b; b &= b - 1) f(static_cast<int32_t>(__builtin_ctzll(b)));
  };
  auto hv = [&s, &each] {
    auto& h = s.memo_hv;
    h.clear();
    each([&h](int32_t v) { h.push_back(v); });
    return static_cast<const int32_t*>(h.data());
  };
  return criteria::support_violates_on<true>(crit.data(), static_cast<int64_t>(crit.size()),
                                             __builtin_popcountll(mask), each, hv, reference, s.ws);
}

/// Pass 1 of judge: the monotone part (class size, distinct values, support), exact for every class (with an
/// upward-closed predicate an early judge stops at the limit: there the search tags by feasibility alone). With
/// value masks the whole monotone part is checked here on every class without histograms; without them,
/// distinct-l needs the histograms (not on a deferred set) and the support part is found only on the classes
/// pass 2 checks (check_class). Flags in s.viol / s.viol_m; returns the rows flagged.
int64_t Engine::Impl::judge_monotone(const FreqSet& f, Scratch& s, bool early, bool distinct_now) const {
  const int64_t C = f.n_classes;
  const int64_t* cnt = f.count.data();
  int64_t SM = 0;
  if (!f.vmask.empty()) {
    const uint64_t* vm = f.vmask.data();
    const bool stop = early && p_monotone;
    if (const int T = par_threads(kJudgeWork * C); T > 1) return judge_monotone_par(T, f, s, stop);
    for (int64_t c = 0; c < C; ++c) {
      if (cnt[c] < min_size || mask_violates(vm[c], s)) {
        s.viol[static_cast<size_t>(c)] = s.viol_m[static_cast<size_t>(c)] = 1;
        SM += cnt[c];
        if (stop && SM > limit) break;
      }
    }
  } else {
    for (int64_t c = 0; c < C; ++c) {
      const bool v = cnt[c] < min_size ||
                     (distinct_now && f.hoff[static_cast<size_t>(c + 1)] - f.hoff[static_cast<size_t>(c)] < distinct_l);
      if (v) {
        s.viol[static_cast<size_t>(c)] = s.viol_m[static_cast<size_t>(c)] = 1;
        SM += cnt[c];
      }
    }
  }
  return SM;
}

namespace {

/// Linked lists of the items of each of G groups (head[g]: its first item, next[i]: the item after i in its
/// group, -1 at the end), every list in ascending item order. One thread: one pass from the last item down.
/// T threads: each chunk of items builds its own lists (first and last item per group), then the groups'
/// lists are stitched in chunk order, so the lists are the serial ones.
void group_lists(const int32_t* ids, int64_t n, int64_t G, int T, std::vector<int32_t>& head,
                 RawVec<int32_t>& next) {
  head.assign(static_cast<size_t>(G), -1);
  next.resize(static_cast<size_t>(n));
  int32_t* nx = next.data();
  if (T <= 1) {
    int32_t* hd = head.data();
    for (int64_t i = n - 1; i >= 0; --i) {
      const int32_t g = ids[i];
      nx[i] = hd[g];
      hd[g] = static_cast<int32_t>(i);
    }
    return;
  }
  const int64_t chunk = (n + T - 1) / T, P = (n + chunk - 1) / chunk;
  std::vector<int32_t> first(static_cast<size_t>(P * G), -1), last(static_cast<size_t>(P * G), -1);
  parallel_chunks(n, chunk, T, [&](int64_t p, int64_t lo, int64_t hi) {
    int32_t* fp = first.data() + p * G;
    int32_t* lp = last.data() + p * G;
    for (int64_t i = hi - 1; i >= lo; --i) {
      const int32_t g = ids[i];
      if (fp[g] < 0) lp[g] = static_cast<int32_t>(i);
      nx[i] = fp[g];
      fp[g] = static_cast<int32_t>(i);
    }
  });
  for (int64_t g = 0; g < G; ++g) {
    int32_t tail = -1;
    for (int64_t p = 0; p < P; ++p) {
      const int32_t f0 = first[static_cast<size_t>(p * G + g)];
      if (f0 < 0) continue;
      if (tail < 0) head[static_cast<size_t>(g)] = f0;
      else nx[tail] = f0;
      tail = last[static_cast<size_t>(p * G + g)];
    }
  }
}

}  // namespace

/// Threads for group_lists over n items in G groups: the engine's threads for n items when the groups are few
/// enough that stitching them (G per chunk) costs little beside the items.
int Engine::Impl::list_threads(int64_t n, int64_t G) const { return 8 * G <= n ? par_threads(n) : 1; }

// Two levels: the source of a deferred set may itself be deferred to a materialized anchor (a roll-up from a
// deferred source that does not compose keeps it deferred, see rollup); then each checked class walks its
// source classes in ascending order and, for each, the anchor classes of that source class in ascending
// order: the values appear in the same order as when the source is merged first (a value's first appearance
// is in the first source class holding it, and within it in the source's own order), and the counts are the
// same sums, so the histograms are identical.
/// A deferred set's classes as lists of their source classes (s.lz_head / s.lz_next; with two levels also the
/// anchor's classes per source class, s.lz_head2 / s.lz_next2), for lazy_hist.
void Engine::Impl::lazy_lists(const FreqSet& f, Scratch& s, bool two) const {
  const int64_t C = f.n_classes;
  if (two) {
    const FreqSet& mid = *f.hsrc;
    const int64_t Ca = mid.hsrc->n_classes;
    group_lists(mid.hids.data(), Ca, mid.n_classes, list_threads(Ca, mid.n_classes), s.lz_head2, s.lz_next2);
  }
  // the source classes of each class as linked lists (head per class, next per source class), each list in
  // ascending source order
  const int64_t Cs = f.hsrc->n_classes;
  group_lists(f.hids.data(), Cs, C, list_threads(Cs, C), s.lz_head, s.lz_next);
  if (static_cast<int64_t>(s.lz_acc.size()) < m) s.lz_acc.assign(static_cast<size_t>(m), 0);
}

/// The histogram of class c of a deferred set, merged on the fly from its source classes (the lists of
/// lazy_lists in `lists`) in the same order as merge_histograms (ascending source class, then its entries), so
/// it is identical: values in s.lz_val, counts in s.lz_cnt (s.lz_acc: m zeros before and after).
void Engine::Impl::lazy_hist(const FreqSet& f, const Scratch& lists, Scratch& s, int64_t c, bool two) const {
  const FreqSet& src = two ? *f.hsrc->hsrc : *f.hsrc;
  auto& val = s.lz_val;
  auto& num = s.lz_cnt;
  val.clear();
  num.clear();
  int64_t* acc = s.lz_acc.data();
  const int64_t* hc64 = src.hcnt.data();
  const uint32_t* hc32 = src.hcnt32.data();
  const bool narrow = src.cnt32;
  auto add_class = [&](int32_t x) {
    const auto i = static_cast<size_t>(x);
    for (int64_t e = src.hoff[i]; e < src.hoff[i + 1]; ++e) {
      const int32_t hv = src.hval[static_cast<size_t>(e)];
      if (acc[hv] == 0) val.push_back(hv);
      acc[hv] += narrow ? static_cast<int64_t>(hc32[e]) : hc64[e];
    }
  };
  for (int32_t x = lists.lz_head[static_cast<size_t>(c)]; x >= 0; x = lists.lz_next[static_cast<size_t>(x)]) {
    if (two) {
      for (int32_t y = lists.lz_head2[static_cast<size_t>(x)]; y >= 0; y = lists.lz_next2[static_cast<size_t>(y)])
        add_class(y);
    } else {
      add_class(x);
    }
  }
  for (int32_t hv : val) {
    num.push_back(acc[hv]);
    acc[hv] = 0;
  }
}

/// Class c of f judged (check_class) with the scratch ts: its histogram merged on the fly from the lists in
/// `lists` when lazy, else read from f.
void Engine::Impl::check_one(const FreqSet& f, const Scratch& lists, Scratch& ts, int64_t c, bool lazy, bool two,
                             uint8_t& v, uint8_t& vm) const {
  const int64_t nE = f.count[static_cast<size_t>(c)];
  if (lazy) {
    lazy_hist(f, lists, ts, c, two);
    check_class(nE, ts.lz_val.data(), ts.lz_cnt.data(), static_cast<int64_t>(ts.lz_val.size()), ts, v, vm);
  } else {
    const int64_t b0 = f.hoff[static_cast<size_t>(c)];
    const int64_t nnz = f.hoff[static_cast<size_t>(c + 1)] - b0;
    const int64_t* hc = f.hcnt.data() + b0;
    if (f.cnt32) {  // (the criteria core reads 64-bit counts: the class's few copied)
      ts.lz_cnt.assign(f.hcnt32.data() + b0, f.hcnt32.data() + b0 + nnz);
      hc = ts.lz_cnt.data();
    }
    check_class(nE, f.hval.data() + b0, hc, nnz, ts, v, vm);
  }
}

/// Pass 2 of judge: the classes pass 1 left unflagged checked against every criterion, in order; a violating
/// class flagged and its rows added to S (and to SM when it violates the monotone part: a deferred set checks
/// distinct-l here). early: stop at the first class where S exceeds the limit (returns true: cut). A large set
/// on several threads: judge_rest_par (judge_par.cpp), with the same flags, sums and stop.
bool Engine::Impl::judge_rest(const FreqSet& f, Scratch& s, bool early, bool lazy, bool two, int64_t& S,
                              int64_t& SM) const {
  const int64_t C = f.n_classes;
  // (threads by the classes read: a deferred set's classes each merge many source classes)
  const int64_t read = !lazy ? C : two ? f.hsrc->hsrc->n_classes : f.hsrc->n_classes;
  if (const int T = par_threads(kJudgeWork * read); T > 1 && C > 1)
    return judge_rest_par(T, f, s, early, lazy, two, S, SM);
  const int64_t* cnt = f.count.data();
  for (int64_t c = 0; c < C; ++c) {
    if (s.viol[static_cast<size_t>(c)]) continue;
    uint8_t v = 0, vm = 0;
    check_one(f, s, s, c, lazy, two, v, vm);
    if (!v) continue;
    s.viol[static_cast<size_t>(c)] = 1;
    S += cnt[c];
    if (vm) {
      s.viol_m[static_cast<size_t>(c)] = 1;
      SM += cnt[c];
    }
    if (early && S > limit) return true;
  }
  return false;
}

/// Evaluate the classes of f: violation flags into s.viol (s.viol_m: the monotone part), the node result.
/// early: stop checking classes as soon as the node is known infeasible (suppressed > limit). Then
/// `suppressed` is only a lower bound and `metric` is not computed (the search needs neither for an
/// infeasible node); `suppressed_size` and `lower_bound` stay exact.
NodeResult Engine::Impl::judge(const FreqSet& f, Scratch& s, bool early) const {
  const detail::PhaseScope timed(phases, detail::Phase::kJudge);
  NodeResult res;
  const int64_t C = f.n_classes;
  res.n_classes = C;
  s.viol.assign(static_cast<size_t>(C), 0);
  s.viol_m.assign(static_cast<size_t>(C), 0);
  const int64_t* cnt = f.count.data();
  const bool full = hist_sets && !crit.empty();
  // A deferred set judged early checks distinct-l with the other criteria, class by class on the fly (pass
  // 2), so `suppressed_size` is exact only when the judge is not cut; a cut node has S > limit and its
  // partial suppressed_size is a lower bound, which the search only uses in ways that stay valid (a
  // partial value above the limit proves the monotone part infeasible; one below it only tags less).
  const bool deferred = early && m > 0 && f.hsrc != nullptr;
  const bool distinct_now = distinct_l > 0 && !deferred && f.vmask.empty();
  if (m > 0 && needs_hist && distinct_now) ensure_hist(f, s);
  int64_t SM = judge_monotone(f, s, early, distinct_now);
  int64_t S = SM;
  bool cut = early && S > limit;
  bool loss_cut = false;
  if (!cut && early && full && cut_on && metric.kind == MetricKind::kLoss) {
    // the classes flagged so far are suppressed in the node's output: their Loss bounds the node's
    loss_cut = beats_cut(SM == 0 ? loss_lb(f.levels.data()) : loss_flagged(f, s.viol.data(), SM));
    cut = loss_cut;
  }
  // pass 2: the other criteria on the remaining classes. A set whose histograms are deferred (its roll-up
  // kept the source and the class map) is judged with each checked class's histogram merged on the fly
  // (lazy_hist). An early judge usually stops after a few classes (suppressed rows above the limit: measured
  // 0.2-3 % of the classes of such nodes on Adult and census-income), so most merges are never done; the set
  // is merged in full only if it later becomes the source of a roll-up (ensure_hist).
  const bool lazy = full && !cut && deferred;
  if (deferred) {
    n_judged_deferred.fetch_add(1, std::memory_order_relaxed);
    if (lazy) n_judged_lazy.fetch_add(1, std::memory_order_relaxed);
  }
  const bool two = lazy && f.hsrc->hsrc != nullptr;
  if (lazy) lazy_lists(f, s, two);
  if (full && !cut) {
    if (m > 0 && !lazy) ensure_hist(f, s);
    cut = judge_rest(f, s, early, lazy, two, S, SM);
  }
  res.suppressed = S;
  res.suppressed_size = SM;
  res.feasible = S <= limit && !loss_cut;  // a cut node is worse than the incumbent: never chosen
  if (cut) {
    res.lower_bound = lower_bound_of(f);
    res.metric = res.lower_bound;
    return res;
  }
  if (has_tcrit && res.feasible) res.feasible = table_holds(f, s.viol.data(), S);
  score(f, s, S, res);
  return res;
}

}  // namespace anoncore::lattice

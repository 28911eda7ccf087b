// OptimalReposition and the sliding-window driver (P-TEMP Sections III-V; spec A.2.1-A.2.8).
#include "anoncore/temporal/reposition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "anoncore/core/status.hpp"

namespace anoncore::temporal {
namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::min();

inline bool rec_less(const Rec& a, const Rec& b) { return a.ts < b.ts || (a.ts == b.ts && a.id < b.id); }

/// Insert keeping (ts, id) order; the carried record is usually near the end, so scan from the back.
inline void insert_sorted(std::vector<Rec>& v, const Rec& r) {
  v.push_back(r);
  size_t i = v.size() - 1;
  while (i > 0 && rec_less(r, v[i - 1])) {
    v[i] = v[i - 1];
    --i;
  }
  v[i] = r;
}

inline void erase_rec(std::vector<Rec>& v, const Rec& r) {
  for (size_t i = v.size(); i-- > 0;) {
    if (v[i].id == r.id && v[i].ts == r.ts) {
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
  throw InternalError("temporal: record to undo not found");
}

}  // namespace

double CostModel::mu(int64_t d) const {
  const double x = static_cast<double>(d);
  switch (kind) {
    case MuKind::Linear:
      return c * x;
    case MuKind::Power:
      return c * std::pow(x, p);
    case MuKind::Exponential:
      return c * (std::pow(p, x) - 1.0);
    case MuKind::Table:
    default: {
      const auto n = static_cast<int64_t>(table.size());
      if (d < n) return table[static_cast<size_t>(d)];
      const double last = table[static_cast<size_t>(n - 1)];
      const double step = n >= 2 ? last - table[static_cast<size_t>(n - 2)] : 0.0;
      return last + step * static_cast<double>(d - (n - 1));
    }
  }
}

int64_t eligible_level(Span<int64_t> counts, int64_t l) {
  int64_t n = 0;
  for (int64_t c : counts) n += c;
  int64_t lo = 0, hi = n / l;  // f(L) = sum min(c, L) - l L is concave with f(0) = 0: feasible L form a prefix
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    int64_t sum = 0;
    for (int64_t c : counts) sum += std::min(c, mid);
    if (sum >= l * mid)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

Stream::Stream(int64_t l, int64_t w, int32_t n_sa, CostModel cost, Mode mode)
    : l_(l), w_(w), n_sa_(n_sa), cost_(std::move(cost)), mode_(mode) {
  if (l < 1 || w < 1 || n_sa < 1) throw std::invalid_argument("temporal: l, w and n_sa must be positive");
  if (static_cast<int64_t>(cost_.beta.size()) != n_sa) throw std::invalid_argument("temporal: beta has wrong size");
  if (cost_.kind == MuKind::Table && cost_.table.empty()) throw std::invalid_argument("temporal: empty mu table");
  ring_.resize(static_cast<size_t>(w));
  for (auto& sl : ring_) {
    sl.P.resize(static_cast<size_t>(n_sa));
    sl.S.resize(static_cast<size_t>(n_sa));
  }
  p_.assign(static_cast<size_t>(n_sa), 0);
  smax_.assign(static_cast<size_t>(n_sa), kNone);
  gain_.assign(static_cast<size_t>(n_sa), 0.0);
  counts_scratch_.assign(static_cast<size_t>(n_sa), 0);
}

void Stream::clear_popped() {
  popped_ids.clear();
  popped_ts.clear();
  popped_slot.clear();
  popped_sa.clear();
}

void Stream::start_at(int64_t t) {
  if (n_records_ != 0) throw std::invalid_argument("temporal: start_at needs an empty window");
  lo_ = t;
  hi_ = t - 1;
}

void Stream::load(int64_t lo, int64_t hi, Span<int64_t> ids, Span<int64_t> ts, Span<int32_t> sa, Span<int64_t> slot_of,
                  Span<uint8_t> suppressed) {
  if (hi - lo + 1 > w_ || hi < lo - 1) throw std::invalid_argument("temporal: loaded window wider than w");
  for (auto& sl : ring_) {
    for (auto& v : sl.P) v.clear();
    for (auto& v : sl.S) v.clear();
  }
  lo_ = lo;
  hi_ = hi;
  n_records_ = ids.size;
  for (int64_t k = 0; k < ids.size; ++k) {
    const int64_t t = slot_of[k];
    const int32_t s = sa[k];
    if (t < lo || t > hi || s < 0 || s >= n_sa_) throw std::invalid_argument("temporal: record outside the window");
    if (suppressed[k]) {
      if (ts[k] != t) throw std::invalid_argument("temporal: suppressed record not at its home slot");
      slot(t).S[static_cast<size_t>(s)].push_back(ids[k]);
    } else {
      if (ts[k] > t) throw std::invalid_argument("temporal: record placed before its timestamp");
      slot(t).P[static_cast<size_t>(s)].push_back(Rec{ts[k], ids[k]});
    }
  }
  for (auto& sl : ring_) {
    for (auto& v : sl.P) std::sort(v.begin(), v.end(), rec_less);
    for (auto& v : sl.S) std::sort(v.begin(), v.end(), [](int64_t a, int64_t b) { return a > b; });
  }
}

void Stream::pop_oldest() {
  Slot& sl = slot(lo_);
  for (int32_t s = 0; s < n_sa_; ++s) {
    auto& pv = sl.P[static_cast<size_t>(s)];
    auto& sv = sl.S[static_cast<size_t>(s)];
    n_records_ -= static_cast<int64_t>(pv.size() + sv.size());
    if (bulk_) {
      for (const Rec& r : pv) out_slot_[r.id] = lo_;
    } else {
      for (const Rec& r : pv) {
        popped_ids.push_back(r.id);
        popped_ts.push_back(r.ts);
        popped_slot.push_back(lo_);
        popped_sa.push_back(s);
      }
      for (int64_t id : sv) {
        popped_ids.push_back(id);
        popped_ts.push_back(lo_);
        popped_slot.push_back(-1);
        popped_sa.push_back(s);
      }
    }
    pv.clear();
    sv.clear();
  }
  ++lo_;
}

void Stream::flush() {
  while (lo_ <= hi_) pop_oldest();
}

void Stream::initial_suppression(Slot& sl) {
  for (int32_t s = 0; s < n_sa_; ++s) counts_scratch_[static_cast<size_t>(s)] = static_cast<int64_t>(sl.P[static_cast<size_t>(s)].size());
  const int64_t L = eligible_level(Span<int64_t>{counts_scratch_.data(), n_sa_}, l_);
  for (int32_t s = 0; s < n_sa_; ++s) {
    auto& pv = sl.P[static_cast<size_t>(s)];
    auto& sv = sl.S[static_cast<size_t>(s)];
    while (static_cast<int64_t>(pv.size()) > L) {
      sv.push_back(pv.back().id);
      pv.pop_back();
      ++counters.initially_suppressed;
    }
    // sv now holds ids in descending order: relays take the back, i.e. the earliest record (smallest id) first.
  }
}

template <class IdOf>
void Stream::push_impl(const int32_t* sa, int64_t n, IdOf id_of) {
  if (n_slots() == w_) pop_oldest();
  ++hi_;
  Slot& sl = slot(hi_);
  for (int64_t k = 0; k < n; ++k) sl.P[static_cast<size_t>(sa[k])].push_back(Rec{hi_, id_of(k)});
  n_records_ += n;
  initial_suppression(sl);
  if (track_il) last_il_initial = window_il();
  optimize();
  if (track_il) last_il_final = window_il();
}

void Stream::push(Span<int32_t> sa, Span<int64_t> ids) {
  push_impl(sa.data, sa.size, [&](int64_t k) { return ids[k]; });
}

void Stream::run(Span<int64_t> ts, Span<int32_t> sa, int64_t id_offset, MutSpan<int64_t> out_slot, bool do_flush) {
  bulk_ = true;
  out_slot_ = out_slot;
  const int32_t* no_sa = nullptr;
  int64_t k = 0;
  while (k < ts.size) {
    const int64_t t = ts[k];
    int64_t e = k;
    while (e < ts.size && ts[e] == t) ++e;
    if (n_records_ == 0) {
      // An empty window carries nothing forward: restart it at t (gaps cost nothing).
      lo_ = t;
      hi_ = t - 1;
    } else {
      while (hi_ + 1 < t) {
        push_impl(no_sa, 0, [](int64_t) { return int64_t{0}; });
        if (n_records_ == 0) {
          lo_ = t;
          hi_ = t - 1;
        }
      }
    }
    push_impl(sa.data + k, e - k, [&](int64_t j) { return id_offset + k + j; });
    k = e;
  }
  if (do_flush) flush();
  bulk_ = false;
  out_slot_ = MutSpan<int64_t>{};
}

double Stream::window_il() const {
  double il = 0.0;
  for (int64_t t = lo_; t <= hi_; ++t) {
    const Slot& sl = slot(t);
    for (int32_t s = 0; s < n_sa_; ++s) {
      for (const Rec& r : sl.P[static_cast<size_t>(s)]) il += cost_.mu(t - r.ts);
      il += cost_.beta[static_cast<size_t>(s)] * static_cast<double>(sl.S[static_cast<size_t>(s)].size());
    }
  }
  return il;
}

void Stream::export_state(std::vector<int64_t>& ids, std::vector<int64_t>& ts, std::vector<int32_t>& sa,
                          std::vector<int64_t>& slot_of, std::vector<uint8_t>& suppressed) const {
  for (int64_t t = lo_; t <= hi_; ++t) {
    const Slot& sl = slot(t);
    for (int32_t s = 0; s < n_sa_; ++s) {
      for (const Rec& r : sl.P[static_cast<size_t>(s)]) {
        ids.push_back(r.id);
        ts.push_back(r.ts);
        sa.push_back(s);
        slot_of.push_back(t);
        suppressed.push_back(0);
      }
      for (int64_t id : sl.S[static_cast<size_t>(s)]) {
        ids.push_back(id);
        ts.push_back(t);
        sa.push_back(s);
        slot_of.push_back(t);
        suppressed.push_back(1);
      }
    }
  }
}

int64_t Stream::find_smax(int32_t s, int64_t from) const {
  for (int64_t t = from; t >= lo_; --t)
    if (!slot(t).S[static_cast<size_t>(s)].empty()) return t;
  return kNone;
}

/// IG(r0) = beta_s - psi(r0) (Eq. 5-6) for r0 in Smax[s], after-insertion semantics (spec A.2.2), without mutating.
double Stream::head_gain(int32_t s) const {
  const int64_t i0 = smax_[static_cast<size_t>(s)];
  const double beta = cost_.beta[static_cast<size_t>(s)];
  if (i0 == hi_) return beta;
  if (cost_.kind == MuKind::Linear) return beta - cost_.c * static_cast<double>(hi_ - i0);  // psi telescopes
  double cost = 0.0;
  int64_t carry_ts = i0, cur = i0;
  for (int64_t j = i0 + 1; j <= hi_; ++j) {
    if (j < hi_ && slot(j).P[static_cast<size_t>(s)].empty()) continue;
    const auto& v = slot(cur).P[static_cast<size_t>(s)];
    if (!v.empty() && v.back().ts > carry_ts) carry_ts = v.back().ts;
    cost += cost_.mu(j - carry_ts) - cost_.mu(cur - carry_ts);
    cur = j;
  }
  return beta - cost;
}

/// The relay of one record of Smax[s] into P_hi (spec A.2.2). Returns psi.
double Stream::relay(int32_t s, bool journal) {
  const auto su = static_cast<size_t>(s);
  const int64_t i0 = smax_[su];
  auto& sv = slot(i0).S[su];
  const int64_t id0 = sv.back();
  sv.pop_back();
  RelayLog log{s, i0, id0, i0, steps_.size(), Rec{0, 0}};
  Rec carry{i0, id0};
  double cost = 0.0;
  int64_t cur = i0;
  for (int64_t j = i0 + 1; j <= hi_; ++j) {
    if (j < hi_ && slot(j).P[su].empty()) continue;
    auto& v = slot(cur).P[su];
    if (!v.empty() && rec_less(carry, v.back())) {
      const Rec out = v.back();
      v.pop_back();
      insert_sorted(v, carry);
      if (journal) steps_.push_back(Step{cur, out, carry});
      carry = out;
    }
    cost += cost_.mu(j - carry.ts) - cost_.mu(cur - carry.ts);
    cur = j;
  }
  insert_sorted(slot(hi_).P[su], carry);
  log.final_rec = carry;
  if (journal) journal_.push_back(log);
  ++p_[su];
  ++total_p_;
  --n_supp_;
  smax_[su] = find_smax(s, i0);
  if (smax_[su] != kNone) gain_[su] = head_gain(s);
  return cost;
}

void Stream::undo_journal() {
  for (size_t k = journal_.size(); k-- > 0;) {
    const RelayLog& log = journal_[k];
    const auto su = static_cast<size_t>(log.s);
    const size_t step_end = k + 1 < journal_.size() ? journal_[k + 1].step_begin : steps_.size();
    erase_rec(slot(hi_).P[su], log.final_rec);
    for (size_t q = step_end; q-- > log.step_begin;) {
      const Step& st = steps_[q];
      auto& v = slot(st.t).P[su];
      erase_rec(v, st.in);
      v.push_back(st.out);
    }
    slot(log.i0).S[su].push_back(log.id0);
    smax_[su] = log.old_smax;
    --p_[su];
    --total_p_;
    ++n_supp_;
    gain_[su] = head_gain(log.s);
  }
  journal_.clear();
  steps_.clear();
}

int32_t Stream::best_head(int64_t cap_inclusive, bool positive_only) const {
  int32_t best = -1;
  double g = 0.0;
  for (int32_t s = 0; s < n_sa_; ++s) {
    const auto su = static_cast<size_t>(s);
    if (smax_[su] == kNone || p_[su] > cap_inclusive) continue;
    if (positive_only && !(gain_[su] > 0.0)) continue;
    if (best < 0 || gain_[su] > g) {
      best = s;
      g = gain_[su];
    }
  }
  return best;
}

int64_t Stream::level() const {
  int64_t lv = 0;
  for (int64_t c : p_) lv = std::max(lv, c);
  return lv;
}

void Stream::optimize() {
  ++counters.windows;
  if (trace_enabled) last_trace.clear();
  total_p_ = 0;
  n_supp_ = 0;
  const Slot& top = slot(hi_);
  for (int32_t s = 0; s < n_sa_; ++s) {
    const auto su = static_cast<size_t>(s);
    p_[su] = static_cast<int64_t>(top.P[su].size());
    total_p_ += p_[su];
    int64_t sm = kNone;
    for (int64_t t = hi_; t >= lo_; --t) {
      const auto n = static_cast<int64_t>(slot(t).S[su].size());
      if (n > 0 && sm == kNone) sm = t;
      n_supp_ += n;
    }
    smax_[su] = sm;
  }
  if (n_supp_ == 0) return;
  for (int32_t s = 0; s < n_sa_; ++s)
    if (smax_[static_cast<size_t>(s)] != kNone) gain_[static_cast<size_t>(s)] = head_gain(s);

  auto note = [&](int32_t it, int32_t phase, int32_t s) {
    if (!trace_enabled) return;
    const auto su = static_cast<size_t>(s);
    last_trace.push_back(TraceEntry{it, phase, slot(smax_[su]).S[su].back(), s, smax_[su], gain_[su], 0});
  };
  auto lp = [&](int32_t it, int64_t cap) {  // relay positive heads while |P_hi[s]| < cap
    for (;;) {
      const int32_t s = best_head(cap - 1, true);
      if (s < 0) return;
      note(it, 0, s);
      counters.total_gain += gain_[static_cast<size_t>(s)];
      ++counters.relays;
      relay(s, false);
    }
  };
  // Tentative LL: up to m picks of the best head with |P_hi[s]| <= cap. Returns (#picks, sum of IG).
  auto ll = [&](int32_t it, int64_t m, int64_t cap, double& sum) {
    journal_.clear();
    steps_.clear();
    sum = 0.0;
    int64_t picks = 0;
    while (picks < m) {
      const int32_t s = best_head(cap, false);
      if (s < 0) break;
      note(it, 1, s);
      sum += gain_[static_cast<size_t>(s)];
      relay(s, true);
      ++picks;
    }
    return picks;
  };
  auto rollback = [&](int64_t picks) {
    undo_journal();
    counters.rolled_back += picks;
    if (trace_enabled)
      for (int64_t q = 0; q < picks; ++q) last_trace[last_trace.size() - 1 - static_cast<size_t>(q)].rolled_back = 1;
  };
  auto commit = [&](int64_t picks, double sum) {
    counters.relays += picks;
    counters.total_gain += sum;
    journal_.clear();
    steps_.clear();
  };

  int32_t it = 0;
  if (mode_ == Mode::Corrected) {
    int64_t L = level();
    for (;;) {
      ++it;
      lp(it, L);
      const int64_t m = std::max<int64_t>(0, (L + 1) * l_ - total_p_);
      double sum = 0.0;
      const int64_t picks = ll(it, m, L, sum);
      if (picks < m || (m > 0 && !(sum > 0.0))) {
        rollback(picks);
        break;
      }
      commit(picks, sum);
      ++L;
      if (n_supp_ == 0) break;
    }
  } else {
    for (;;) {
      ++it;
      lp(it, level());
      const int64_t i = level();
      const int64_t m = std::max<int64_t>(0, (i + 1) * l_ - total_p_);
      double sum = 0.0;
      const int64_t picks = ll(it, m, i, sum);
      if (picks < m || !(sum > 0.0)) {
        rollback(picks);
        break;
      }
      commit(picks, sum);
    }
  }
  counters.iterations += it;
}

}  // namespace anoncore::temporal

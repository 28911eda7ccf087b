// Reposition model for temporal snapshots (Wang, Xu, Wong, Fu, "Anonymizing Temporal Data", ICDE 2010 short
// paper; spec ../shared/spec/temporal-reposition.md, "P-TEMP"). A sliding window of w snapshots is kept; each new
// snapshot gets the minimum suppression that makes it l-eligible, then suppressed records of the window are
// relayed forward into the new snapshot (OptimalReposition, Figure 4) and the oldest snapshot pops off.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::temporal {

/// Shape of the reposition cost mu(d) (P-TEMP Section II.C, conditions C1-C3 are validated in Python).
enum class MuKind : int32_t { Table = 0, Linear = 1, Power = 2, Exponential = 3 };

/// mu(d) and the per-SA suppression costs beta_s.
///  Table: mu(d) = table[d] for d < table.size(), extended linearly with the last increment beyond it.
///  Linear: c*d.  Power: c*d^p.  Exponential: c*(p^d - 1).
struct CostModel {
  MuKind kind = MuKind::Linear;
  double c = 1.0;
  double p = 1.0;
  std::vector<double> table;
  std::vector<double> beta;  // one per SA code
  double mu(int64_t d) const;
};

/// Figure 4 exactly (stops when m = 0) or the spec's corrected loop with an explicit level cap (A.2.6).
enum class Mode : int32_t { Corrected = 0, PaperFaithful = 1 };

/// A record in an eligible set: original timestamp and record id; sets are kept sorted by (ts, id).
struct Rec {
  int64_t ts;
  int64_t id;
};

/// One relay decided by the greedy (trace for tests and docs).
struct TraceEntry {
  int32_t iteration;  // outer loop iteration of OptimalReposition
  int32_t phase;      // 0 = LP (level preserving), 1 = LL (level lifting)
  int64_t id;         // the relayed (previously suppressed) record r0
  int32_t sa;
  int64_t from_slot;  // = r0.TS (home rule)
  double gain;        // IG(r0) at the time it was picked
  int32_t rolled_back;
};

/// Counters over the whole stream (or the last window, see Stream::last_*).
struct StreamCounters {
  int64_t windows = 0;
  int64_t initially_suppressed = 0;
  int64_t relays = 0;           // committed relays
  int64_t rolled_back = 0;      // tentative relays undone
  int64_t iterations = 0;       // outer loop iterations
  double total_gain = 0.0;
};

/// Stateful window driver (one instance per independent stream). Not thread-safe; holds no caller memory.
class Stream {
 public:
  Stream(int64_t l, int64_t w, int32_t n_sa, CostModel cost, Mode mode);

  /// Replace the window by slots [lo, hi] (already optimised; hi - lo + 1 <= w). Suppressed records must sit at
  /// their home slot (slot == ts), published ones at slot >= ts. The next push is at time hi + 1.
  void load(int64_t lo, int64_t hi, Span<int64_t> ids, Span<int64_t> ts, Span<int32_t> sa, Span<int64_t> slot,
            Span<uint8_t> suppressed);

  /// Push the snapshot of time hi + 1 (records given by SA code and id). If the window already holds w slots, the
  /// oldest pops off first and its records are appended to the popped_* buffers (or written to out_slot when a
  /// bulk output is attached). Then the minimum suppression is applied and OptimalReposition runs.
  /// Cost: O(n_t + |SA| w + sigma (w + |SA|)), sigma = relays considered.
  void push(Span<int32_t> sa, Span<int64_t> ids);

  /// Bulk loop over a whole stream: records sorted by timestamp (non-decreasing, first >= hi + 1), record ids are
  /// id_offset + position. out_slot[id] receives the published slot or stays -1 when suppressed. Gaps in time push
  /// empty snapshots (at most w of them per gap). With flush, the window is emptied at the end.
  void run(Span<int64_t> ts, Span<int32_t> sa, int64_t id_offset, MutSpan<int64_t> out_slot, bool flush);

  /// Pop every slot still in the window, oldest first.
  void flush();

  /// Start an empty window so that the next push is at time t.
  void start_at(int64_t t);
  int64_t n_records() const { return n_records_; }

  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  int64_t n_slots() const { return hi_ - lo_ + 1; }

  /// Export the window: one row per record (slot order, then SA, then (ts, id)).
  void export_state(std::vector<int64_t>& ids, std::vector<int64_t>& ts, std::vector<int32_t>& sa,
                    std::vector<int64_t>& slot, std::vector<uint8_t>& suppressed) const;

  /// IL of the current window (P-TEMP Eq. 1-2): sum of mu(slot - ts) over published and beta over suppressed.
  double window_il() const;

  // Popped records since the last clear_popped(): published slot (-1 when suppressed).
  std::vector<int64_t> popped_ids, popped_ts, popped_slot;
  std::vector<int32_t> popped_sa;
  void clear_popped();

  bool trace_enabled = false;
  bool track_il = false;
  std::vector<TraceEntry> last_trace;
  double last_il_initial = 0.0;  // after the initial suppression of the last push (track_il only)
  double last_il_final = 0.0;
  StreamCounters counters;

 private:
  struct Slot {
    std::vector<std::vector<Rec>> P;      // per SA: sorted by (ts, id)
    std::vector<std::vector<int64_t>> S;  // per SA: suppressed ids, descending (all with ts == slot time)
  };
  struct Step {
    int64_t t;
    Rec out;
    Rec in;
  };
  struct RelayLog {
    int32_t s;
    int64_t i0;
    int64_t id0;
    int64_t old_smax;
    size_t step_begin;
    Rec final_rec;
  };

  Slot& slot(int64_t t) { return ring_[static_cast<size_t>(((t % w_) + w_) % w_)]; }
  const Slot& slot(int64_t t) const { return ring_[static_cast<size_t>(((t % w_) + w_) % w_)]; }
  template <class IdOf>
  void push_impl(const int32_t* sa, int64_t n, IdOf id_of);
  void pop_oldest();
  void initial_suppression(Slot& sl);
  void optimize();
  double head_gain(int32_t s) const;
  int64_t find_smax(int32_t s, int64_t from) const;
  double relay(int32_t s, bool journal);
  void undo_journal();
  int32_t best_head(int64_t cap_inclusive, bool positive_only) const;
  int64_t level() const;

  int64_t l_, w_;
  int32_t n_sa_;
  CostModel cost_;
  Mode mode_;
  std::vector<Slot> ring_;
  int64_t lo_ = 0, hi_ = -1;
  int64_t n_records_ = 0;
  // per-window greedy state
  std::vector<int64_t> p_;      // |P_hi[s]| including tentative relays
  std::vector<int64_t> smax_;   // latest slot with S[s] non-empty, or kNone
  std::vector<double> gain_;    // head gain of s (valid when smax_[s] != kNone)
  int64_t total_p_ = 0;
  int64_t n_supp_ = 0;          // suppressed records in the window
  std::vector<RelayLog> journal_;
  std::vector<Step> steps_;
  std::vector<int64_t> counts_scratch_;
  MutSpan<int64_t> out_slot_{};
  bool bulk_ = false;
};

/// Closed-form minimum suppression (P-TEMP Section III; spec A.2.1): the largest L with sum_s min(c_s, L) >= l*L.
int64_t eligible_level(Span<int64_t> counts, int64_t l);

}  // namespace anoncore::temporal

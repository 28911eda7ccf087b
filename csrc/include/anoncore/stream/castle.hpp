// CASTLE: continuously anonymizing a data stream under k_s-anonymity (distinct persons per class), an
// optional distinct l-diversity, and a delay bound delta (Cao, PhD thesis NUS 2010, chapter 5; spec
// ../shared/spec/streams-castle-sabrew.md, "the spec" below). A small stateful class, as STYLE.md §2.3 allows
// for streaming algorithms; no pybind11 here.
//
// Quasi-identifiers come in two kinds:
//  - numeric: float64 values, cluster range [min, max], IL = (max - min) / (U - L) with a declared domain;
//  - categorical: int32 pre-order leaf codes of a hierarchy (docs/contracts.md), cluster range = leaf range
//    [lo, hi], generalization = LCA(lo, hi), IL = 0 for one leaf, else |Leaves(LCA)| / |Leaves(root)|.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "anoncore/core/rng.hpp"
#include "anoncore/core/views.hpp"

namespace anoncore::stream {

/// Hierarchy arrays of one categorical quasi-identifier (docs/contracts.md numbering).
struct CatHierarchy {
  std::vector<int32_t> parent;
  std::vector<int32_t> leaf_start;
  std::vector<int32_t> leaf_count;
  int32_t n_leaves = 1;
};

/// Throws std::invalid_argument unless `h` follows the numbering of docs/contracts.md (leaves first in pre-order,
/// parents after children, root last, contiguous leaf ranges). O(n_nodes).
void validate_hierarchy(const CatHierarchy& h);

/// Multiset counter of int64 keys (pid -> tuples, sa -> tuples): open addressing with linear probing and
/// backward-shift deletion, so inserting and removing allocate nothing once the table has grown. Only
/// size() (distinct keys) and the per-key counts are observable; nothing iterates it.
class CountMap {
 public:
  /// Add one occurrence of `key`.
  void inc(int64_t key) {
    if (2 * (n_ + 1) > slots_.size()) grow();
    size_t i = home(key);
    while (slots_[i].cnt != 0) {
      if (slots_[i].key == key) {
        ++slots_[i].cnt;
        return;
      }
      i = (i + 1) & mask_;
    }
    slots_[i] = Slot{key, 1};
    ++n_;
  }
  /// Remove one occurrence of `key`; false if it is absent.
  bool dec(int64_t key) {
    if (n_ == 0) return false;
    size_t i = home(key);
    while (slots_[i].key != key || slots_[i].cnt == 0) {
      if (slots_[i].cnt == 0) return false;
      i = (i + 1) & mask_;
    }
    if (--slots_[i].cnt > 0) return true;
    for (size_t j = (i + 1) & mask_; slots_[j].cnt != 0; j = (j + 1) & mask_) {  // backward shift
      const size_t h = home(slots_[j].key);
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (!stays) {
        slots_[i] = slots_[j];
        slots_[j].cnt = 0;
        i = j;
      }
    }
    slots_[i].cnt = 0;
    --n_;
    return true;
  }
  size_t size() const { return n_; }
  void clear() {
    if (n_ == 0) return;
    if (slots_.size() > 64) {
      slots_.clear();  // a large cluster's table is given back
      slots_.shrink_to_fit();
      mask_ = 0;
    } else {
      for (auto& x : slots_) x.cnt = 0;
    }
    n_ = 0;
  }

 private:
  struct Slot {
    int64_t key = 0;
    int32_t cnt = 0;  // 0 = empty
  };
  size_t home(int64_t key) const {
    return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ULL) >> 32) & mask_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t cap = std::max<size_t>(16, 2 * old.size());
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const Slot& x : old) {
      if (x.cnt == 0) continue;
      size_t i = home(x.key);
      while (slots_[i].cnt != 0) i = (i + 1) & mask_;
      slots_[i] = x;
    }
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0, n_ = 0;
};

/// Parameters (spec §2.1 and A4-A12). `l = 0` switches l-diversity off; `max_reuse < 0` keeps every
/// released cluster in Omega (the thesis), otherwise Omega is a FIFO of at most `max_reuse` entries (A12).
struct CastleParams {
  int64_t k = 100;
  int64_t delta = 10000;
  int64_t eta = 50;
  int64_t mu = 100;
  int64_t l = 0;
  int64_t max_reuse = -1;
  double initial_tau = 0.0;
  bool containment_range = false;  // A8: false = test against the generalization, true = the range
  bool outlier_suppression = false;  // TDSC step (absent from the thesis), spec §2.5 [X]
  uint64_t seed = 0;
};

/// How a tuple left the algorithm (spec §8 audit channel).
enum class Mode : int8_t { Cluster = 0, Split = 1, Merge = 2, Reuse = 3, Suppressed = 4 };

/// Everything emitted since the last `take_events()`: one row per tuple released or suppressed, plus one
/// row per cluster released ("generalization", referenced by gen_id; reuse rows point to an older one).
struct CastleEvents {
  std::vector<int64_t> position, pid, emitted_at, gen_id;  // emitted_at = arrival position, -1 at flush
  std::vector<int8_t> mode;
  std::vector<double> num_lo, num_hi;  // (n_events, d_num), row-major; suppressed rows hold NaN
  std::vector<int32_t> cat_node;       // (n_events, d_cat); suppressed rows hold -1
  std::vector<int64_t> g_id, g_pids, g_tuples, g_diversity;
  std::vector<double> g_il, g_tau;  // IL of the cluster; tau after it (A6)
  std::vector<int8_t> g_kept;       // 1 if appended to Omega
  size_t size() const { return position.size(); }
};

struct CheckpointReader;

class Castle {
 public:
  Castle(const CastleParams& params, std::vector<double> num_domain_lo, std::vector<double> num_domain_hi,
         std::vector<CatHierarchy> cats);

  /// Algorithm CASTLE main loop (spec §2.3) over a batch of tuples, in order. Positions must be strictly
  /// increasing across calls (checked by the caller). Cost per tuple O(eta * d) plus amortised
  /// releases (merge O(eta^2 d), split O(n^2 d / k)) and the Omega scan O(|Omega| d) on reuse attempts.
  void push(Span<int64_t> position, Span<int64_t> pid, Span<int32_t> sa, Matrix<double> num,
            Matrix<int32_t> cat);
  /// End of stream, mode `drain` (spec §2.10): expire every pending tuple in position order.
  void flush();
  /// End of stream, mode `paper` (spec §2.10): the thesis's protocol with a final k-check.
  void flush_paper();
  CastleEvents take_events();

  /// The dynamic state as versioned little-endian bytes (no parameters, no hierarchies: the caller keeps those);
  /// pending events must have been taken. Written by castle_checkpoint.cpp.
  std::string checkpoint() const;
  /// Load checkpoint() bytes into this freshly constructed Castle (same parameters and hierarchies). Every field is
  /// range-checked against them first; a bad one throws std::invalid_argument, never reads out of bounds.
  void restore_state(const std::string& bytes);
  /// Positions of the pending tuples in arrival order.
  std::vector<int64_t> pending_positions() const;

  double tau() const { return tau_; }
  int64_t n_open() const { return static_cast<int64_t>(gamma_.size()); }
  int64_t n_pending() const { return n_alive_; }
  int64_t n_reuse() const { return static_cast<int64_t>(omega_.size()); }
  int64_t n_arrivals() const { return n_arrivals_; }
  bool has_last_position() const { return has_last_; }
  int64_t last_position() const { return last_pos_; }
  const CastleParams& params() const { return p_; }
  int64_t d_num() const { return dn_; }
  /// Threads for split^k's block scans (<= 0: all cores). Not part of the state: the output does not depend on it.
  void set_n_threads(int n) { n_threads_ = n; }
  int n_threads() const { return n_threads_; }
  int64_t d_cat() const { return dc_; }

 private:
  struct Cluster {
    int64_t id = 0;
    std::vector<int32_t> members;                  // tuple slots
    CountMap pids;  // pid -> tuples
    CountMap sas;   // sa -> tuples (l-mode)
    double il = 0.0;
    bool used = false;
  };
  struct OmegaEntry {
    int64_t gen_id;
    std::vector<double> lo, hi;         // numeric generalization
    std::vector<int32_t> clo, chi;      // categorical containment range (leaf codes, inclusive)
    std::vector<int32_t> node;          // categorical generalization node
  };

  // --- checkpoint restore (castle_checkpoint.cpp)
  void restore_counters(CheckpointReader& r);
  void restore_omega(CheckpointReader& r);
  void restore_tuples(CheckpointReader& r);

  // --- information loss
  double cat_term(int64_t j, int32_t lo, int32_t hi) const;
  int32_t cat_lca(int64_t j, int32_t lo, int32_t hi) const;
  double il_of_bounds(const double* nlo, const double* nhi, const int32_t* clo, const int32_t* chi) const;
  double il_with_cluster(int32_t c, int32_t other) const;

  // --- slabs
  int32_t new_tuple_slot();
  int32_t new_cluster(int32_t first_tuple);
  void free_cluster(int32_t c);
  void add_to_cluster(int32_t c, int32_t t);
  void recompute_bounds(int32_t c);
  void widen_bounds(int32_t c, int32_t t);
  void remove_from_cluster(int32_t t);
  void gamma_erase(int32_t c);

  // --- procedures of the spec
  void arrive(int64_t pos, int64_t pid, int32_t sa, const double* num, const int32_t* cat);
  int32_t best_selection(int32_t t);
  void delay_constraint(int32_t t, int64_t at);
  bool merge_clusters(int32_t c);
  void absorb(int32_t c, int32_t o);
  bool try_reuse(int32_t t, int64_t at);
  void output_cluster(int32_t c, Mode mode, int64_t at);
  std::vector<std::vector<int32_t>> split_k(const std::vector<int32_t>& members, Rng& rng);
  std::vector<std::vector<int32_t>> split_k_buckets(const std::vector<int32_t>& members,
                                                    const std::vector<int32_t>& order, const std::vector<double>& X,
                                                    const std::vector<int32_t>& Y, size_t nb, Rng& rng);
  std::vector<std::vector<int32_t>> split_leftovers(std::vector<std::vector<int32_t>> subs,
                                                    const std::vector<std::vector<int32_t>>& buckets);
  std::vector<std::vector<int32_t>> split_l(const std::vector<int32_t>& members, Rng& rng);
  void emit_group(const std::vector<int32_t>& tuples, Mode mode, int64_t at, Rng& rng);
  void emit_tuple(int32_t t, Mode mode, int64_t at, int64_t gen, const double* lo, const double* hi,
                  const int32_t* node);
  void release_tuple(int32_t t);
  void suppress(int32_t t, int64_t at);
  void expire_upto(int64_t bound, int64_t at);
  Rng next_rng() { return Rng::for_chunk(p_.seed, rng_counter_++); }

  CastleParams p_;
  int n_threads_ = 1;
  int64_t dn_, dc_;
  double inv_d_;
  std::vector<double> dom_lo_, dom_hi_, inv_range_;
  std::vector<CatHierarchy> cats_;
  std::vector<std::vector<double>> cat_il_table_;    // per categorical QI: (L x L) or empty
  std::vector<std::vector<int32_t>> cat_lca_table_;  // per categorical QI: (L x L) or empty
  std::vector<const double*> cat_tab_;               // cat_il_table_[j].data() or nullptr
  std::vector<size_t> cat_L_;                         // leaves per categorical QI
  std::vector<std::vector<int32_t>> cat_top_;         // per categorical QI: leaf -> rank of its top group
  /// IL term of a categorical range (lo <= hi); table lookup when the hierarchy is small.
  double cat_fast(int64_t j, int32_t lo, int32_t hi) const {
    const double* tab = cat_tab_[static_cast<size_t>(j)];
    if (tab) return tab[static_cast<size_t>(lo) * cat_L_[static_cast<size_t>(j)] + static_cast<size_t>(hi)];
    return cat_term(j, lo, hi);
  }

  // tuples (slab)
  std::vector<int64_t> t_pos_, t_pid_;
  std::vector<int32_t> t_sa_, t_cluster_, t_member_;
  std::vector<int8_t> t_alive_;
  std::vector<double> t_num_;
  std::vector<int32_t> t_cat_;
  std::vector<int32_t> t_free_;
  std::deque<int32_t> queue_;  // slots in arrival order
  int64_t n_alive_ = 0;

  // clusters (slab) and Gamma (open clusters, in creation order)
  std::vector<Cluster> clusters_;
  std::vector<double> c_nlo_, c_nhi_;
  std::vector<int32_t> c_clo_, c_chi_;
  std::vector<int32_t> c_free_;
  std::vector<int32_t> gamma_;
  // SoA mirror of Gamma's bounds and ILs by position in gamma_ (dimension-major, capacity gcap_), so that
  // bestSelection runs over all open clusters one dimension at a time (vectorisable).
  size_t gcap_ = 0;
  std::vector<double> g_nlo_, g_nhi_, g_il_;
  std::vector<int32_t> g_clo_, g_chi_;
  std::vector<int32_t> c_gpos_;  // slot -> position in gamma_, -1 when not open
  std::vector<double> g_acc_, g_e_;
  // Per categorical QI with a table and at most 64 leaves: for every code y, the IL term of (cluster ∪ {y}) for
  // each open cluster, g_row_[(row_off_[j] + y) * gcap_ + g], so bestSelection reads contiguous rows.
  std::vector<size_t> row_off_;
  std::vector<double> g_row_;
  void gamma_sync(int32_t c, bool fresh = false);
  void gamma_push(int32_t c);
  CountMap gamma_pids_;  // pid -> tuples over Gamma (A10)
  CountMap gamma_sas_;   // sa -> tuples over Gamma (A18)

  // Omega and tau
  std::deque<OmegaEntry> omega_;
  // flat mirror of Omega's containment boxes for the reuse scan: entry i of omega_ is mirror entry om_start_ + i,
  // with (lo, hi) per numeric QI in om_num_ and (lo, hi) leaf codes per categorical QI in om_cat_
  std::vector<double> om_num_;
  std::vector<int32_t> om_cat_;
  size_t om_start_ = 0;
  void omega_push(OmegaEntry&& e);
  void omega_pop_front();
  std::vector<double> recent_il_;  // ring of the last mu released cluster ILs
  int64_t recent_head_ = 0;
  double tau_ = 0.0;

  int64_t next_cluster_id_ = 0;
  int64_t next_gen_id_ = 0;
  uint64_t rng_counter_ = 0;
  int64_t n_arrivals_ = 0;
  int64_t last_pos_ = 0;
  bool has_last_ = false;

  CastleEvents ev_;
  // scratch (no allocation per tuple in the hot loop)
  std::vector<int32_t> scratch_em_;
  std::vector<double> scratch_il_;
  std::vector<size_t> scratch_found_;
};

}  // namespace anoncore::stream

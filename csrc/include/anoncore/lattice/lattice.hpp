// Full-domain generalization lattice (spec generalization-lattice.md §2.4, §3, §10; ARX-ORACLES.md §4-7):
// frequency sets with roll-up, ARX suppression semantics, node predicates for every class-based model,
// information-loss metrics with monotone lower bounds, and the optimal (branch-and-bound with predictive
// tagging) search.
//
// A node is a levels vector (one level per quasi-identifier). Codes at a level are *dense*: Python gives, per
// QI, a table gen(leaf, level) -> dense code in [0, card(level)). The frequency set of a node groups rows by
// their generalized QI key; it is computed once from the rows (the bottom node) and every other node is a
// roll-up of an already computed finer node (the nearest cached one), never a re-read of the rows.
//
// Integer arithmetic everywhere a criterion allows it (64-bit; distances take one division at the end), so
// predicates are exact at any table size that fits in memory.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "anoncore/core/raw_vec.hpp"
#include "anoncore/core/status.hpp"
#include "anoncore/criteria/models.hpp"
#include "anoncore/core/views.hpp"

namespace anoncore::lattice {

/// Class-based privacy criteria: the models' kernel ids and instances of the criteria core
/// (anoncore/criteria/models.hpp; the lattice judges the models whose `lattice` flag is set).
using CriterionKind = criteria::Model;
using Criterion = criteria::Criterion;

/// Objective (ARX-ORACLES.md §7). Each has a lower bound that is monotone along the lattice.
enum class MetricKind : int {
  kLoss = 0,           // ARX Loss (§7.4), aggregate below, gs-factor
  kDM = 1,             // discernibility, suppressed rows charged N each
  kDMStar = 2,         // monotone discernibility Σ n_E² (suppressed classes included)
  kEntropy = 3,        // monotone non-uniform entropy (suppression ignored)
  kEntropyNM = 4,      // non-monotone non-uniform entropy
  kPrecision = 5,      // monotone precision (1/D) Σ λ_j / h_j
  kPrecisionNM = 6,    // non-monotone precision
  kHeight = 7,         // Σ λ_j
  kAECS = 8,           // ARX's average equivalence class size N / (sF·C_kept + gF·[S > 0]) (§7.5)
  kKLArx = 9,          // ARX's KL divergence (MetricSDNMKLDivergence): summed over records (objective_info.cpp)
  kAmbiguity = 10,     // ARX's ambiguity (MetricSDNMAmbiguity): Σ_E n_E Π_j leaves_j(E) (objective_info.cpp)
  kKL = 11,            // KL divergence over QI tuples (Machanavajjhala et al. 2007), a proper mixture under
                       // suppression (objective_info.cpp)
};

enum class Aggregate : int { kGeometricMean = 0, kArithmeticMean = 1, kSum = 2, kMax = 3 };

/// Per quasi-identifier input. gen is (n_leaves, height+1) int32 row-major: dense code of leaf v at level l.
/// leaf_count[offset(l) + c] = hierarchy rows (leaves) under dense code c of level l (concatenated by level).
/// nu_base[l] = -Σ_v a_v log2(a_v / b_gen(v)) >= 0 at level l (monotone NU-entropy term, §7.3).
struct QiInput {
  Span<int32_t> gen;
  int32_t height = 0;
  Span<int64_t> leaf_count;
  Span<double> nu_base;
};

/// The rows' quasi-identifier leaf codes, read in place: columns cols[j] (j < r) of a row-major (rows, width)
/// matrix, such as a table's own codes (no copy of the quasi-identifier columns). all() takes every column.
struct QiRows {
  const int32_t* data = nullptr;
  int64_t rows = 0;
  int64_t width = 0;
  std::vector<int64_t> cols;
  static QiRows all(Matrix<int32_t> m) {
    QiRows q{m.data, m.rows, m.cols, std::vector<int64_t>(static_cast<size_t>(m.cols))};
    for (int64_t j = 0; j < m.cols; ++j) q.cols[static_cast<size_t>(j)] = j;
    return q;
  }
  int64_t r() const { return static_cast<int64_t>(cols.size()); }
  const int32_t* row(int64_t i) const { return data + i * width; }
  int32_t operator()(int64_t i, int64_t j) const { return data[i * width + cols[static_cast<size_t>(j)]]; }
};

/// Sensitive attribute input: codes (n_rows,) in [0, m); for hierarchical EMD, the SA hierarchy (leaves are
/// the SA codes, post-order internal nodes) given by parent and node height.
struct SensitiveInput {
  Span<int32_t> codes;  // empty when no criterion needs it
  int64_t m = 0;
  Span<int32_t> parent;
  Span<int32_t> node_height;
};

struct MetricSpec {
  MetricKind kind = MetricKind::kLoss;
  Aggregate aggregate = Aggregate::kGeometricMean;
  double gs_factor = 0.5;
  /// Loss's attribute weights, one per QI (ARX-ORACLES.md §7.1: each divided by the largest, so the default
  /// of equal weights is all 1); empty: all 1. Non-negative with a positive maximum (checked in Python).
  std::vector<double> weights;
};

/// What an evaluation of one node gives.
struct NodeResult {
  bool feasible = false;
  int64_t n_classes = 0;
  int64_t suppressed = 0;          // rows in classes violating some criterion
  int64_t suppressed_size = 0;     // rows in classes violating the monotone part (size, distinct-l, support)
  double metric = 0.0;             // objective with the node's suppression
  double lower_bound = 0.0;        // monotone lower bound of the objective (<= metric)
  // (optimal search only) the grouping stopped as soon as lower_bound exceeded the incumbent (DM / DM*):
  // the node is neither the optimum nor below it, its feasibility is unknown (never used for tagging)
  bool partial = false;
};

/// Table-level criteria (risk-based models judged on the published rows of a node, from its class sizes):
/// they never suppress (a node fails them as a whole). Negative / empty: not set. table_criteria.cpp.
struct TableCriteria {
  double avg_risk = -1.0;             // published classes / published rows <= avg_risk
  double sample_uniqueness = -1.0;    // published classes of one row / published rows <= sample_uniqueness
  std::vector<int64_t> min_kept_size; // by the node's suppressed rows S (0..limit): every published class has
                                      // at least this many rows (estimated k-map, whose threshold depends on
                                      // the published rows N - S)
};

/// One search step (trace).
struct TraceEntry {
  std::vector<int32_t> levels;
  NodeResult result;
  int32_t how = 0;  // 0 evaluated, 1 inferred feasible, 2 inferred infeasible
};

/// Result of the optimal search.
struct SearchResult {
  Status status = Status::Ok;
  std::vector<int32_t> best;      // empty when no node is feasible
  NodeResult best_result;
  int64_t evaluated = 0;          // nodes whose frequency set was computed
  int64_t inferred = 0;           // nodes decided by predictive tagging without evaluation
  int64_t popped = 0;             // nodes taken from the queue (the sweep: nodes it did not skip by a tag)
  bool swept = false;             // found by the sweep instead of the queue (see Engine::optimal)
};

/// The table-derived part of an Engine's build: the per-QI value counts, the bottom frequency set (with the
/// sensitive-value histograms when it was built with them) and the rows' bottom classes. Immutable; handed to
/// a later Engine on the same rows, hierarchies and sensitive column (the caller's responsibility: the Python
/// side keys it by the frozen Table) so that Engine skips the pass over the rows and their grouping.
struct BottomState;

namespace detail {
class OptimalSearch;
}

class Engine {
 public:
  /// Builds the bottom frequency set from the rows. qi_codes: the rows' r quasi-identifier leaf codes (read
  /// once, in place, during construction); limit is the absolute suppression limit floor(suppression_limit * N).
  /// allow_packed = false forces the generic (re-densified mixed-radix) class layout even when the packed
  /// 64-bit keys would fit (tests of both layouts).
  /// reuse: a BottomState of an earlier Engine on the same rows, hierarchies and sensitive column (used when
  /// its layout and histograms match this Engine's; ignored otherwise).
  Engine(const QiRows& qi_codes, std::vector<QiInput> qis, SensitiveInput sa, std::vector<Criterion> criteria,
         MetricSpec metric, int64_t limit, int n_threads, bool allow_packed = true,
         std::shared_ptr<const BottomState> reuse = nullptr);
  /// Builds the bottom frequency set from weighted items instead of rows (a frequency set: anoncore.distributed):
  /// item i (leaf codes qi_codes row i, sensitive code sa.codes[i] when a criterion needs it) stands for
  /// weights[i] >= 0 identical rows. Every result equals that of the row constructor on the rows the items
  /// stand for, taken in item order (with items in order of first appearance over those rows, the same bits);
  /// classify then labels items, not rows. Defined in from_counts.cpp.
  Engine(Matrix<int32_t> qi_codes, Span<int64_t> weights, std::vector<QiInput> qis, SensitiveInput sa,
         std::vector<Criterion> criteria, MetricSpec metric, int64_t limit, int n_threads, bool allow_packed = true);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int64_t n_qi() const;
  int64_t n_rows() const;
  /// Rows (or weighted items) that classify labels: n_rows() unless built from weighted items.
  int64_t n_items() const;
  int64_t bottom_classes() const;
  /// The bottom classes' sensitive histograms (CSR: class c's values hval[hoff[c]:hoff[c+1]] in the order of
  /// their first rows, with their counts hcnt), copied; empty without histograms (diagnostic and tests).
  void bottom_histograms(std::vector<int64_t>& hoff, std::vector<int32_t>& hval, std::vector<int64_t>& hcnt) const;
  std::vector<int32_t> heights() const;
  /// true when feasibility is upward closed (all criteria monotone under suppression, or limit 0).
  bool predicate_monotone() const;
  /// true when the objective never decreases upward among feasible nodes.
  bool metric_monotone() const;

  /// Evaluate one node (roll-up from the nearest cached finer node). Thread-safe only from one thread.
  /// early: judged as the search judges (stopped once infeasible: `suppressed` and `suppressed_size` are then
  /// lower bounds and `metric` is the lower bound; histograms may be deferred).
  NodeResult evaluate(Span<int32_t> levels, bool early = false);
  /// Evaluate many nodes (rows of `levels`), in parallel over nodes; results in input order.
  std::vector<NodeResult> evaluate_many(Matrix<int32_t> levels);
  /// Monotone lower bound of the objective computable without grouping (0 for DM/DM*).
  double cheap_lower_bound(const int32_t* levels) const;
  /// ARX Loss (this engine's gs-factor and aggregate) of the node with only the classes below the minimal
  /// class size suppressed: a lower bound of the node's Loss under any suppression that includes them (the
  /// optimal search's suppression-aware cut; tested against the true Loss).
  double suppression_loss_bound(Span<int32_t> levels);
  /// The optimal search's evaluation under the DM / DM* cut with incumbent `cut`: grouping stops once its
  /// lower bound of Σ n_E² exceeds `cut` (result.partial). Only for k-anonymity-only problems with packed keys
  /// and metric DM / DM* (std::invalid_argument otherwise); tested against the exhaustive oracle.
  NodeResult evaluate_dm_cut(Span<int32_t> levels, double cut);
  /// Per-row suppression flags and class labels (dense, first appearance) of a node; with ``first``, also the
  /// first row of every class (in label order).
  /// clean: the caller knows that the node suppresses no row (the optimal search's answer under a zero
  /// suppression limit: feasible means no violating class); then no class is judged (no histogram is merged)
  /// and only n_classes of the result is set.
  NodeResult classify(Span<int32_t> levels, MutSpan<int64_t> labels, MutSpan<uint8_t> suppressed,
                      std::vector<int64_t>* first = nullptr, bool clean = false);
  /// Adds table-level criteria (see TableCriteria) to the node predicate; with a positive suppression limit
  /// feasibility is then no longer upward closed (the published rows depend on the other criteria's
  /// suppression). Call before any evaluation.
  void set_table_criteria(TableCriteria t);
  /// Population-based criteria with a research subset (exact k-map, delta-presence): this Engine's rows are
  /// the subset, `population` an Engine on the whole population table with the same hierarchies (packed keys
  /// of the same layout; std::invalid_argument otherwise), kept alive by the caller. At a node, a population
  /// class of F rows holding f published subset rows passes when f = 0 or F >= kmap_k (k-map; 0: not set)
  /// and delta_min <= f / F <= delta_max (delta-presence; delta_min < 0: not set). Non-suppressing, judged
  /// with the table-level criteria; delta-presence is not monotone. Call before any evaluation.
  void set_population(Engine& population, int64_t kmap_k, double delta_min, double delta_max);
  /// Globally optimal node: minimal objective among feasible nodes, ties -> lexicographically smallest levels.
  /// allow_sweep = false keeps the queue even where the sweep applies (tests compare both).
  SearchResult optimal(const InterruptHook& hook, std::vector<TraceEntry>* trace, bool allow_sweep = true);
  int64_t evaluations() const;
  /// This Engine's BottomState (see above), for reuse by later Engines on the same table.
  std::shared_ptr<const BottomState> bottom_state() const;
  /// Whether this Engine was built from a reused BottomState.
  bool reused_bottom() const;
  /// Total number of source classes rolled up so far (a machine-independent cost measure).
  int64_t rollup_work() const;
  /// Seconds spent so far per phase (build, group, masks, merge, judge: phase_clock.hpp), in that order.
  std::vector<std::pair<std::string, double>> phase_seconds() const;
  /// Intermediate sources (meets) rolled up and cached by the optimal search so far (diagnostic).
  int64_t primed_sources() const;
  /// Items per thread below which a frequency set is grouped and merged by one thread (default 32,768; the
  /// output never depends on it; a test lowers it to run the parallel paths on small tables).
  int64_t parallel_grain() const;
  void set_parallel_grain(int64_t grain);
  /// Whether the threads of a node are held to the cores the machine's load average leaves idle (default true;
  /// a test turns it off to run the parallel paths on a busy machine).
  bool load_aware() const;
  void set_load_aware(bool on);

 private:
  friend class detail::OptimalSearch;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The engine's packed grouping on its own: n 64-bit keys with weights (empty: 1 each) into groups numbered by
/// first appearance; ids[i] = group of key i, keys / counts = each group's key and summed weight. One thread
/// (n_threads <= 1) runs the search's serial grouping, more the parallel one (group_par.cpp) as for the bottom's
/// rows (rows = true: in halves on two threads up to kHalvesRowsMax rows, else partitioned) or a roll-up's classes
/// (in halves on 2-3 threads), grain as Engine::parallel_grain: the same output.
struct KeyGroups {
  core::RawVec<int32_t> ids;
  core::RawVec<uint64_t> keys;
  core::RawVec<int64_t> counts;
};
KeyGroups group_keys(Span<uint64_t> keys, Span<int64_t> weights, int n_threads, bool rows, int64_t grain);

/// Number of nodes per lattice height (coefficients of Π_i (1 + x + ... + x^{h_i}), spec Prop. 3.1), as
/// doubles (exact below 2^53). O(r · hmax).
std::vector<double> level_sizes(Span<int32_t> heights);

}  // namespace anoncore::lattice

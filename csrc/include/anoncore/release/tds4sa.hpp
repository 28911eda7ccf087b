// TDS4SA: top-down specialization for sequential anonymization (Wang & Fung, "Anonymizing Sequential
// Releases", Algorithm 1, Sections 4-5 and 7). Python encodes the tables, groups the previous releases into
// partitions (Tree2 as a flat group -> partitions index) and validates; this kernel runs the loop.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/release/join.hpp"

namespace anoncore::release {

/// A previous release (T2, T3, ...), already grouped by Python: groups = distinct join-slot values (the first
/// |J_r| levels of Tree2); partitions = distinct (J_r, X_r) values inside a group, stored group by group.
struct ReleaseView {
  Matrix<int32_t> group_nodes;  ///< (n_groups, n_slots) join-slot node per group
  Span<int64_t> group_off;      ///< (n_groups + 1) partition range of each group
  Span<int64_t> part_size;      ///< |P_r|
  Span<int64_t> part_x;         ///< id of the partition's X_r value, in [0, n_x)
  int64_t n_x = 1;
  Matrix<int64_t> part_y;       ///< (n_parts, n_items) |P_r[y]| for linkability items on this side, else 0
  int32_t y_mode = 0;           ///< anonymity Y_r: 0 empty, 1 a key of T_r, 2 general (distinct ids in yset)
  Span<int64_t> yset_off;       ///< (n_parts + 1), general mode only
  Span<int64_t> yset;
  bool join_in_x = false;       ///< J_r is inside X_r: a partition is one x_r value (Case 1)
};

struct Problem {
  int64_t n1 = 0;
  Matrix<int32_t> codes;            ///< (n1, m1) X1 codes: leaf id (categorical) or value rank (continuous)
  std::vector<int32_t> attr_tax;    ///< per X1 attribute: taxonomy index, -1 for continuous
  std::vector<int32_t> attr_nvals;  ///< per X1 attribute: number of distinct ranks (continuous)
  Matrix<int32_t> raw_join;         ///< (n1, n_raw) node of each join attribute of T1 that is not in X1
  std::vector<int32_t> slot_src;    ///< per T1 join slot: X1 attribute (>= 0) or -(1 + raw column)
  std::vector<Taxonomy> tax;
  std::vector<Constraint> cons;
  Span<int32_t> pair_a, pair_b;
  std::vector<ReleaseView> rel;     ///< releases 1..p (index 0 is T2)
  Span<int32_t> cls;                ///< class label per T1 record (n_cls == 0: none)
  int32_t n_cls = 0;
  int32_t model = 0;                ///< 0 (X,Y)-anonymity, 1 (X,Y)-linkability
  int64_t k_anon = 1;
  int32_t y1_mode = 0;              ///< anonymity Y1: 0 empty, 1 key, 2 general (ids in y1_id)
  Span<int64_t> y1_id;
  int32_t n_items = 0;              ///< linkability: sensitive values (attribute, value)
  Span<int32_t> item_side;          ///< 0: T1, r: release r
  Span<double> item_k;              ///< per-value thresholds k_y
  Matrix<uint8_t> y1;               ///< (n1, n_items) record holds item (T1 items only)
  int32_t metric = 0;               ///< 0 entropy, 1 distortion, 2 discernibility
  int32_t privloss = 0;             ///< linkability: 0 max_y L_y increase, 1 max_y L_y/k_y increase
  bool require_gain = true;         ///< winners must have InfoGain > 0
  bool force_general = false;       ///< never use the Case-1 shortcut (tests)
  int64_t max_iter = -1;
};

struct Step {
  int32_t attr, node, split;
  double score, gain, privloss, value_after;
};

/// A candidate left at termination. state 0: invalid (pruned), 1: valid but not beneficial (InfoGain 0).
struct Remaining {
  int32_t attr, node, split, state;
  double gain, value;
};

struct Output {
  Status status = Status::Ok;
  double root_value = 0, final_value = 0;
  std::vector<double> final_item_l;
  std::vector<int32_t> gen;                      ///< (n1 * m1) final node (categorical) or interval id
  std::vector<std::vector<int32_t>> iv_lo, iv_hi;  ///< per X1 attribute: interval rank ranges [lo, hi)
  std::vector<Step> trace;
  std::vector<Remaining> remaining;
  int64_t refine_accesses = 0, evaluations = 0, pairs_probed = 0, n_partitions = 0;
  double t_pre = 0, t_gen = 0;
  bool case1 = false;
};

/// Algorithm 1. Complexity per iteration: the records on Link[w] (refinement, the only raw access counted
/// by `refine_accesses`) plus, for every candidate whose Link changed, its records and its
/// (partition, child) x matching-partition pairs. Preconditions (checked in Python): population related
/// tables, Y from one table for linkability, valid codes.
Output tds4sa(const Problem& pb, const InterruptHook& hook);

}  // namespace anoncore::release

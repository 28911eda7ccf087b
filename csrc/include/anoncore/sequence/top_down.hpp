// Top-Down refinement (Algorithm 1 of Bonomi, Fan, Jin, WSDM 2016; spec sequence-sanitization.md §2.3) for a batch
// of users, without traces. Mirrors the Python reference anoncore.sequence._algorithms.top_down step for step
// (same candidate order, tie rule, pruning and floating-point summation order), so both return identical maps.
#pragma once
#include <cstdint>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/sequence/user_state.hpp"

namespace anoncore::sequence {

struct TopDownParams {
  double epsilon = 0.0;        // >= 0; relative (fraction of H̃) when `relative`
  bool relative = true;
  double log_base = 2.0;       // > 1
  bool sigma_s_shortcut = true;
  bool prune = true;           // Corollary 1
  bool tie_last = true;        // equal-UL feasible candidate evaluated later wins (paper literal)
  bool use_pair_table = true;  // m = 2: evaluate f_Ŝ from the dense pair table; else windowed DP over S
  int64_t w = 0;
  bool dedupe = true;          // evaluate identical candidates of a pass (same target node) once; false: paper listing
};

/// Per-user outputs of top_down_batch (arrays of length n_users; gen has shape (n_users, n_leaves)).
struct TopDownOutputs {
  MutMatrix<int32_t> gen;  // generalization map per user
  MutSpan<double> mi;      // achieved Ĩ
  MutSpan<double> entropy; // H̃(𝒫)
  MutSpan<double> epsilon; // absolute ε used
  MutSpan<double> ul;      // utility loss Σ_a f(a) c(a, h(a))
  MutSpan<int64_t> n_evaluations;  // Ĩ evaluations (work counter)
  MutSpan<int64_t> pattern_counts; // f_S(p) for every row of `patterns`
};

/// Algorithm 1 per user. Sensitive patterns of user u are rows [pattern_offsets[u], pattern_offsets[u+1]) of
/// `patterns` (leaf codes, deduplicated by the caller, all of length m = patterns.cols). `cost` has shape
/// (n_leaves, n_nodes) (Definition 3, validated by the caller). Parallel over users; each user is independent and
/// written by one chunk, so results do not depend on n_threads. Worst case O(|Σ|² · eval) per user, where an
/// evaluation costs O(|𝒫| · |L(u)|·|L(v)|) with the pair table and O(|𝒫| · n·w·m) with the DP.
/// The interrupt hook is polled once per chunk of users; returns Status::Interrupted if it fired (outputs are
/// then partial), else Status::Ok.
Status top_down_batch(Span<int64_t> offsets, Span<int32_t> symbols, const TaxonomyView& tax, Matrix<double> cost,
                      Span<int64_t> pattern_offsets, Matrix<int32_t> patterns, const TopDownParams& params,
                      int n_threads, const TopDownOutputs& out, const InterruptHook& hook = {});

}  // namespace anoncore::sequence

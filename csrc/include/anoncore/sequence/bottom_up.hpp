// Bottom-Up clustering (Algorithm 3 of Bonomi, Fan, Jin, WSDM 2016; spec sequence-sanitization.md §2.4-§2.5, §6 B4-B7)
// for a batch of users, without traces. Mirrors the Python reference anoncore.sequence._algorithms.bottom_up step for
// step (same cluster order, LCGP closed form, distance, pair tie rule, image-wise update, R-BU1-R-BU3 completion and
// floating-point summation order), so both return identical maps.
#pragma once
#include <cstdint>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/sequence/top_down.hpp"
#include "anoncore/sequence/user_state.hpp"

namespace anoncore::sequence {

struct BottomUpParams {
  double epsilon = 0.0;        // >= 0; relative (fraction of H̃) when `relative`
  bool relative = true;
  double log_base = 2.0;       // > 1
  bool delta_ul = false;       // pair distance: false = d_g (Eq. 5, literal), true = marginal UL increase
  bool use_pair_table = true;  // m = 2: evaluate f_Ŝ from the dense pair table; else windowed DP over S
  int64_t w = 0;
};

/// Per-user outputs: the same arrays as Top-Down (gen, mi, entropy, epsilon, ul, n_evaluations, pattern_counts).
using BottomUpOutputs = TopDownOutputs;

/// Algorithm 3 per user: R-BU1 (stop at once if the identity is private), agglomerative merges of the sensitive
/// patterns' clusters by least distance (ties: lexicographically smallest (i, j) in cluster order), the LCGP symbol
/// map (union-find closed form, §2.4) applied image-wise h ← λ∘h, R-BU2 (clusters with equal centroids merge), and
/// R-BU3 (once one cluster remains: move whole image classes to proper ancestors; the feasible move with least UL,
/// else the best ΔĨ/ΔUL, else the least ΔUL) until Ĩ ≤ ε. Patterns of user u are rows
/// [pattern_offsets[u], pattern_offsets[u+1]) of `patterns` (deduplicated leaf codes, length m = patterns.cols).
/// O(|𝒫|³) pair distances plus O(|𝒫|) Ĩ evaluations for the merges, and O(|Σ|·h_max) Ĩ evaluations per completion
/// step. Parallel over users; results do not depend on n_threads. The interrupt hook is polled once per chunk.
Status bottom_up_batch(Span<int64_t> offsets, Span<int32_t> symbols, const TaxonomyView& tax, Matrix<double> cost,
                       Span<int64_t> pattern_offsets, Matrix<int32_t> patterns, const BottomUpParams& params,
                       int n_threads, const BottomUpOutputs& out, const InterruptHook& hook = {});

}  // namespace anoncore::sequence

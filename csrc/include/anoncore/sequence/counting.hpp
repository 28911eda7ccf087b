// Windowed pattern-occurrence counting for individual event sequences (Bonomi, Fan, Jin, WSDM 2016,
// Definition 1 and spec sequence-sanitization.md §1.2, §2.1(a), §5 H1).
//
// Sequences arrive as a ragged batch: `offsets` (int64, n_users + 1, offsets[0] = 0, non-decreasing) and a flat
// array of int32 leaf codes `symbols`. A generalization map `gen_map` (int32, one entry per leaf, values are
// taxonomy node ids in [0, n_nodes)) defines the sanitized sequence Ŝ[i] = gen_map[S[i]] without materialising it.
#pragma once
#include <cstdint>

#include "anoncore/core/views.hpp"

namespace anoncore::sequence {

/// N_m(n, w) = Σ_{i=1}^{n} C(min(w, n − i), m − 1): the number of windowed length-m index tuples of a sequence of
/// length n (spec §1.2). Closed form C(n, m) if n ≤ w, else (n − w)·C(w, m − 1) + C(w, m). O(m).
/// Preconditions: n ≥ 0, w ≥ 0, m ≥ 1. Saturates at INT64_MAX on overflow.
int64_t total_embeddings(int64_t n, int64_t w, int64_t m);

/// f_Ŝ(p̂) for every user and pattern: counts(u, k) = number of index tuples i_1 < … < i_m with i_m − i_1 ≤ w and
/// gen_map[S_u[i_j]] == patterns(k, j) for all j (exact equality over taxonomy nodes, spec §1.2 / A3).
/// Definition 1 of the paper; embeddings (index tuples), inclusive window.
/// m = 1: O(n); m = 2: one O(n + matches) pass per user for all patterns at once (sliding window counts per
/// node); m ≥ 3: the O(n·w·m) start-position DP of spec §2.1(a) per pattern. Parallel over users
/// (deterministic: each user is written by exactly one chunk).
/// Preconditions (validated in Python): symbols in [0, gen_map.size); gen_map values and pattern entries in
/// [0, n_nodes); counts has shape (n_users, n_patterns); w ≥ 0.
void count_patterns(Span<int64_t> offsets, Span<int32_t> symbols, Span<int32_t> gen_map, Matrix<int32_t> patterns,
                    int64_t n_nodes, int64_t w, int n_threads, MutMatrix<int64_t> counts);

/// Dense length-2 sufficient statistics (spec §5 H1): out[u, a, b] = number of index pairs i < j with
/// j − i ≤ w, S_u[i] = a, S_u[j] = b. Then f_Ŝ(p̂) = Σ_{a ∈ h⁻¹(p̂_1), b ∈ h⁻¹(p̂_2)} out[u, a, b] for any map h.
/// O(n·min(w, n)) per user. out has n_users·n_leaves² entries (row-major (u, a, b)), zero-initialised here.
void pair_table(Span<int64_t> offsets, Span<int32_t> symbols, int64_t n_leaves, int64_t w, int n_threads,
                MutSpan<int64_t> out);

/// Unigram counts per user: out[u, a] = #{i : S_u[i] = a}. O(n).
void unigram_counts(Span<int64_t> offsets, Span<int32_t> symbols, int64_t n_leaves, int n_threads,
                    MutSpan<int64_t> out);

}  // namespace anoncore::sequence

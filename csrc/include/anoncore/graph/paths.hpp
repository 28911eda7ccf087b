// Shortest-path sweeps for the graph centralities (spec social-network.md §6.2, §10): Brandes betweenness
// (exact or over a seeded sample of sources) and the per-source distance sums behind closeness, harmonic
// closeness and proximity prestige, in one BFS (unweighted) or Dijkstra (weighted) pass per source.
#pragma once
#include <cstdint>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"

namespace anoncore::graph {

/// A graph in CSR form: the out-neighbours of u are targets[offsets[u] .. offsets[u+1]), with edge lengths
/// `lengths` (same size as targets; empty for unit lengths). Undirected graphs list each edge both ways.
struct CsrView {
  Span<int64_t> offsets;  // n + 1
  Span<int64_t> targets;  // m
  Span<double> lengths;   // m, or size 0
  int64_t n() const { return offsets.size - 1; }
  bool weighted() const { return lengths.size > 0; }
};

/// Outputs of path_sweep; a span of size 0 is not computed.
struct SweepOutputs {
  MutSpan<double> betweenness;  // n: sum over the sources s of Brandes' dependency delta_s(v) (not normalized)
  MutSpan<int64_t> reach;       // per source: number of nodes reached from it, itself excluded
  MutSpan<double> dist_sum;     // per source: sum of the distances to the nodes it reaches
  MutSpan<double> harmonic;     // per source: sum of 1 / distance over the nodes it reaches
};

/// Brandes (2001) single-source shortest paths from every node in `sources`, in the successor form of the
/// dependency accumulation (no predecessor lists); Dijkstra with a binary heap when the graph is weighted,
/// with exact equality on path lengths for the shortest-path counts (as networkx). Complexity
/// O(|sources| * m) unweighted, O(|sources| * m log n) weighted; memory O(threads * n).
/// Sources run in parallel batches; the dependencies are folded into `betweenness` in source order, so the
/// output is bit-identical for any n_threads. Preconditions: valid CSR, lengths > 0, sources in [0, n).
/// Polls `hook` once per batch and returns Status::Interrupted when asked to stop.
Status path_sweep(const CsrView& g, Span<int64_t> sources, const SweepOutputs& out, int n_threads,
                  const InterruptHook& hook);

}  // namespace anoncore::graph

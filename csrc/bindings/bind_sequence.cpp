// Bindings for anoncore::sequence: windowed pattern counting over ragged batches of event sequences.
#include "anoncore/sequence/bottom_up.hpp"
#include "anoncore/sequence/counting.hpp"
#include "anoncore/sequence/top_down.hpp"
#include "common.hpp"

namespace anoncore::bindings {

namespace {
void check_offsets(const Span<int64_t>& off, int64_t n_symbols) {
  if (off.size < 1) throw std::invalid_argument("offsets must have at least one entry");
  if (off[0] != 0 || off[off.size - 1] != n_symbols)
    throw std::invalid_argument("offsets must start at 0 and end at len(symbols)");
  for (int64_t i = 0; i + 1 < off.size; ++i)
    if (off[i + 1] < off[i]) throw std::invalid_argument("offsets must be non-decreasing");
}

// The shared part of the per-user batch searches (Top-Down, Bottom-Up): validate the ragged sequences, the
// taxonomy, the cost matrix and the per-user patterns; allocate the outputs; run `kernel` without the GIL; return
// (gen, mi, entropy, epsilon, utility_loss, n_evaluations, pattern_counts).
template <class Kernel>
py::tuple run_user_batch(const CArray<int64_t>& offsets, const CArray<int32_t>& symbols, const CArray<int32_t>& parent,
                         const CArray<int32_t>& depth, const CArray<int32_t>& leaf_start,
                         const CArray<int32_t>& leaf_count, int64_t n_leaves, const CArray<double>& cost,
                         const CArray<int64_t>& pattern_offsets, const CArray<int32_t>& patterns, double epsilon,
                         double log_base, int64_t w, Kernel&& kernel) {
  auto off = span_of(offsets, "offsets");
  auto sy = span_of(symbols, "symbols");
  check_offsets(off, sy.size);
  const int64_t n_users = off.size - 1;
  sequence::TaxonomyView tax{span_of(parent, "parent"), {}, {}, {}, n_leaves};
  const int64_t n_nodes = tax.parent.size;
  tax.depth = span_of(depth, "depth", n_nodes);
  tax.leaf_start = span_of(leaf_start, "leaf_start", n_nodes);
  tax.leaf_count = span_of(leaf_count, "leaf_count", n_nodes);
  auto cv = matrix_of(cost, "cost", n_leaves, n_nodes);
  auto poff = span_of(pattern_offsets, "pattern_offsets", n_users + 1);
  auto pt = matrix_of(patterns, "patterns");
  if (poff[0] != 0 || poff[n_users] != pt.rows) throw std::invalid_argument("bad pattern_offsets");
  if (w < 0 || !(log_base > 1.0) || epsilon < 0) throw std::invalid_argument("bad parameters");
  CArray<int32_t> gen({n_users, n_leaves});
  CArray<double> mi(n_users), ent(n_users), eps(n_users), ul(n_users);
  CArray<int64_t> evals(n_users), fs(pt.rows);
  sequence::TopDownOutputs out{mut_matrix_of(gen, "gen"), mut_span_of(mi, "mi"), mut_span_of(ent, "entropy"),
                               mut_span_of(eps, "epsilon"), mut_span_of(ul, "ul"),
                               mut_span_of(evals, "n_evaluations"), mut_span_of(fs, "pattern_counts")};
  Status status;
  {
    py::gil_scoped_release nogil;
    status = kernel(off, sy, tax, cv, poff, pt, out);
  }
  raise_for_status(status);
  return py::make_tuple(gen, mi, ent, eps, ul, evals, fs);
}

}  // namespace

void bind_sequence(py::module_ m) {
  m.doc() = "sequence kernels: windowed pattern-occurrence counting";
  m.def("total_embeddings", &sequence::total_embeddings, py::arg("n"), py::arg("w"), py::arg("m"),
        "N_m(n, w): number of windowed length-m index tuples (saturates at 2**63 - 1).");
  m.def(
      "count_patterns",
      [](const CArray<int64_t>& offsets, const CArray<int32_t>& symbols, const CArray<int32_t>& gen_map,
         const CArray<int32_t>& patterns, int64_t n_nodes, int64_t w, int n_threads) {
        auto off = span_of(offsets, "offsets");
        auto sy = span_of(symbols, "symbols");
        auto gm = span_of(gen_map, "gen_map");
        auto pt = matrix_of(patterns, "patterns");
        check_offsets(off, sy.size);
        if (pt.cols < 1) throw std::invalid_argument("patterns must have at least one column");
        if (w < 0) throw std::invalid_argument("w must be >= 0");
        CArray<int64_t> counts({off.size - 1, pt.rows});
        auto cv = mut_matrix_of(counts, "counts");
        {
          py::gil_scoped_release nogil;
          sequence::count_patterns(off, sy, gm, pt, n_nodes, w, n_threads, cv);
        }
        return counts;
      },
      py::arg("offsets").noconvert(), py::arg("symbols").noconvert(), py::arg("gen_map").noconvert(),
      py::arg("patterns").noconvert(), py::arg("n_nodes"), py::arg("w"), py::arg("n_threads") = 1,
      "Windowed embedding counts (n_users, n_patterns) of node patterns in gen_map[S] for each user.");
  m.def(
      "pair_table",
      [](const CArray<int64_t>& offsets, const CArray<int32_t>& symbols, int64_t n_leaves, int64_t w, int n_threads) {
        auto off = span_of(offsets, "offsets");
        auto sy = span_of(symbols, "symbols");
        check_offsets(off, sy.size);
        if (w < 0) throw std::invalid_argument("w must be >= 0");
        CArray<int64_t> out({off.size - 1, n_leaves, n_leaves});
        MutSpan<int64_t> ov{out.mutable_data(), static_cast<int64_t>(out.size())};
        {
          py::gil_scoped_release nogil;
          sequence::pair_table(off, sy, n_leaves, w, n_threads, ov);
        }
        return out;
      },
      py::arg("offsets").noconvert(), py::arg("symbols").noconvert(), py::arg("n_leaves"), py::arg("w"),
      py::arg("n_threads") = 1, "Dense windowed pair counts (n_users, n_leaves, n_leaves).");
  m.def(
      "unigram_counts",
      [](const CArray<int64_t>& offsets, const CArray<int32_t>& symbols, int64_t n_leaves, int n_threads) {
        auto off = span_of(offsets, "offsets");
        auto sy = span_of(symbols, "symbols");
        check_offsets(off, sy.size);
        CArray<int64_t> out({off.size - 1, n_leaves});
        MutSpan<int64_t> ov{out.mutable_data(), static_cast<int64_t>(out.size())};
        {
          py::gil_scoped_release nogil;
          sequence::unigram_counts(off, sy, n_leaves, n_threads, ov);
        }
        return out;
      },
      py::arg("offsets").noconvert(), py::arg("symbols").noconvert(), py::arg("n_leaves"), py::arg("n_threads") = 1,
      "Per-user symbol counts (n_users, n_leaves).");
  m.def(
      "top_down_batch",
      [](const CArray<int64_t>& offsets, const CArray<int32_t>& symbols, const CArray<int32_t>& parent,
         const CArray<int32_t>& depth, const CArray<int32_t>& leaf_start, const CArray<int32_t>& leaf_count,
         int64_t n_leaves, const CArray<double>& cost, const CArray<int64_t>& pattern_offsets,
         const CArray<int32_t>& patterns, double epsilon, bool relative, double log_base, bool sigma_s_shortcut,
         bool prune, bool tie_last, bool use_pair_table, int64_t w, int n_threads, bool dedupe) {
        sequence::TopDownParams params;
        params.epsilon = epsilon;
        params.relative = relative;
        params.log_base = log_base;
        params.sigma_s_shortcut = sigma_s_shortcut;
        params.prune = prune;
        params.tie_last = tie_last;
        params.dedupe = dedupe;
        params.use_pair_table = use_pair_table;
        params.w = w;
        return run_user_batch(offsets, symbols, parent, depth, leaf_start, leaf_count, n_leaves, cost,
                              pattern_offsets, patterns, epsilon, log_base, w,
                              [&](auto off, auto sy, const auto& tax, auto cv, auto poff, auto pt, const auto& out) {
                                return sequence::top_down_batch(off, sy, tax, cv, poff, pt, params, n_threads, out,
                                                                python_interrupt_hook());
                              });
      },
      py::arg("offsets").noconvert(), py::arg("symbols").noconvert(), py::arg("parent").noconvert(),
      py::arg("depth").noconvert(), py::arg("leaf_start").noconvert(), py::arg("leaf_count").noconvert(),
      py::arg("n_leaves"), py::arg("cost").noconvert(), py::arg("pattern_offsets").noconvert(),
      py::arg("patterns").noconvert(), py::arg("epsilon"), py::arg("relative"), py::arg("log_base"),
      py::arg("sigma_s_shortcut"), py::arg("prune"), py::arg("tie_last"), py::arg("use_pair_table"), py::arg("w"),
      py::arg("n_threads") = 1, py::arg("dedupe") = true,
      "Top-Down (Algorithm 1) per user; returns (gen, mi, entropy, epsilon, utility_loss, n_evaluations, pattern_counts).");
  m.def(
      "bottom_up_batch",
      [](const CArray<int64_t>& offsets, const CArray<int32_t>& symbols, const CArray<int32_t>& parent,
         const CArray<int32_t>& depth, const CArray<int32_t>& leaf_start, const CArray<int32_t>& leaf_count,
         int64_t n_leaves, const CArray<double>& cost, const CArray<int64_t>& pattern_offsets,
         const CArray<int32_t>& patterns, double epsilon, bool relative, double log_base, bool delta_ul,
         bool use_pair_table, int64_t w, int n_threads) {
        sequence::BottomUpParams params;
        params.epsilon = epsilon;
        params.relative = relative;
        params.log_base = log_base;
        params.delta_ul = delta_ul;
        params.use_pair_table = use_pair_table;
        params.w = w;
        return run_user_batch(offsets, symbols, parent, depth, leaf_start, leaf_count, n_leaves, cost,
                              pattern_offsets, patterns, epsilon, log_base, w,
                              [&](auto off, auto sy, const auto& tax, auto cv, auto poff, auto pt, const auto& out) {
                                return sequence::bottom_up_batch(off, sy, tax, cv, poff, pt, params, n_threads, out,
                                                                 python_interrupt_hook());
                              });
      },
      py::arg("offsets").noconvert(), py::arg("symbols").noconvert(), py::arg("parent").noconvert(),
      py::arg("depth").noconvert(), py::arg("leaf_start").noconvert(), py::arg("leaf_count").noconvert(),
      py::arg("n_leaves"), py::arg("cost").noconvert(), py::arg("pattern_offsets").noconvert(),
      py::arg("patterns").noconvert(), py::arg("epsilon"), py::arg("relative"), py::arg("log_base"),
      py::arg("delta_ul"), py::arg("use_pair_table"), py::arg("w"), py::arg("n_threads") = 1,
      "Bottom-Up (Algorithm 3) per user; returns (gen, mi, entropy, epsilon, utility_loss, n_evaluations, pattern_counts).");
}
}  // namespace anoncore::bindings


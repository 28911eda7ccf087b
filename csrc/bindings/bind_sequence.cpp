// Bindings for anoncore::sequence: windowed pattern counting over ragged batches of event sequences.
#include "anoncore/sequence/counting.hpp"
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
}
}  // namespace anoncore::bindings

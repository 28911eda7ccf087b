// Bindings for anoncore::graph: shortest-path sweeps (Brandes betweenness, distance sums per source).
#include "anoncore/graph/paths.hpp"
#include "common.hpp"

namespace anoncore::bindings {

void bind_graph(py::module_ m) {
  m.doc() = "graph kernels: Brandes betweenness and closeness sums over CSR graphs";
  m.def(
      "path_sweep",
      [](const CArray<int64_t>& offsets, const CArray<int64_t>& targets, const CArray<double>& lengths,
         const CArray<int64_t>& sources, bool betweenness, bool distances, int n_threads) {
        auto off = span_of(offsets, "offsets");
        if (off.size < 1) throw std::invalid_argument("offsets must have at least one entry");
        const int64_t n = off.size - 1;
        auto tg = span_of(targets, "targets", off[n]);
        auto ln = span_of(lengths, "lengths");
        if (ln.size != 0 && ln.size != tg.size) throw std::invalid_argument("lengths must be empty or match targets");
        auto src = span_of(sources, "sources");
        for (int64_t i = 0; i < src.size; ++i)
          if (src[i] < 0 || src[i] >= n) throw std::invalid_argument("source out of range");
        for (int64_t i = 0; i < tg.size; ++i)
          if (tg[i] < 0 || tg[i] >= n) throw std::invalid_argument("target out of range");
        const int64_t k = src.size;
        CArray<double> bc(betweenness ? n : 0), ds(distances ? k : 0), hs(distances ? k : 0);
        CArray<int64_t> reach(distances ? k : 0);
        graph::SweepOutputs out{mut_span_of(bc, "betweenness"), mut_span_of(reach, "reach"),
                                mut_span_of(ds, "dist_sum"), mut_span_of(hs, "harmonic")};
        graph::CsrView g{off, tg, ln};
        auto hook = python_interrupt_hook();
        Status st;
        {
          py::gil_scoped_release nogil;
          st = graph::path_sweep(g, src, out, n_threads, hook);
        }
        raise_for_status(st);
        return py::make_tuple(bc, reach, ds, hs);
      },
      py::arg("offsets").noconvert(), py::arg("targets").noconvert(), py::arg("lengths").noconvert(),
      py::arg("sources").noconvert(), py::arg("betweenness"), py::arg("distances"), py::arg("n_threads"),
      "Brandes dependencies summed over `sources` and per-source (reach, distance sum, harmonic sum).");
}

}  // namespace anoncore::bindings

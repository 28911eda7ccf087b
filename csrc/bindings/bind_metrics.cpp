// Bindings for anoncore::metrics: shape checks, views, GIL release, kernel call. Logic lives in the kernels
// (csrc/include/anoncore/metrics/metrics.hpp) and in anoncore/metrics.py.
#include "anoncore/metrics/metrics.hpp"
#include "common.hpp"

namespace anoncore::bindings {
namespace {

struct ClassArgs {
  Span<int64_t> kept, supp;
};

ClassArgs class_args(const CArray<int64_t>& kept, const CArray<int64_t>& supp) {
  auto k = span_of(kept, "kept");
  return {k, span_of(supp, "supp", k.size)};
}

Matrix<int32_t> gen_matrix(const CArray<int32_t>& a, const char* name, int64_t rows, int64_t col) {
  auto m = matrix_of(a, name, rows);
  if (col < 0 || col >= m.cols) throw std::invalid_argument("col is out of range");
  return m;
}

}  // namespace

void bind_metrics(py::module_ m) {
  m.doc() = "information-loss metric kernels (per quasi-identifier, vectorised over classes)";
  py::class_<metrics::ClassSummary>(m, "ClassSummary", "Row/suppression/class counts, DM and DM* of a partition.")
      .def_readonly("n_rows", &metrics::ClassSummary::n_rows)
      .def_readonly("n_suppressed", &metrics::ClassSummary::n_suppressed)
      .def_readonly("n_kept_classes", &metrics::ClassSummary::n_kept_classes)
      .def_readonly("dm", &metrics::ClassSummary::dm)
      .def_readonly("dm_star", &metrics::ClassSummary::dm_star);
  m.def(
      "class_summary",
      [](const CArray<int64_t>& kept, const CArray<int64_t>& supp) {
        auto a = class_args(kept, supp);
        metrics::ClassSummary s;
        {
          py::gil_scoped_release nogil;
          s = metrics::class_summary(a.kept, a.supp);
        }
        return s;
      },
      py::arg("kept").noconvert(), py::arg("supp").noconvert(),
      "Row/suppression/class counts, DM and DM* of the classes.");
  m.def(
      "range_cost_sums",
      [](const CArray<int64_t>& kept, const CArray<int64_t>& supp, const CArray<int32_t>& gen_lo,
         const CArray<int32_t>& gen_hi, int64_t col, int cost) {
        auto a = class_args(kept, supp);
        auto lo = gen_matrix(gen_lo, "gen_lo", a.kept.size, col);
        auto hi = matrix_of(gen_hi, "gen_hi", lo.rows, lo.cols);
        if (cost < 0 || cost > 2) throw std::invalid_argument("unknown range cost");
        metrics::KeptSuppSums<int64_t> r;
        {
          py::gil_scoped_release nogil;
          r = metrics::range_cost_sums(a.kept, a.supp, lo, hi, col, static_cast<metrics::RangeCost>(cost));
        }
        return py::make_tuple(r.kept, r.supp);
      },
      py::arg("kept").noconvert(), py::arg("supp").noconvert(), py::arg("gen_lo").noconvert(),
      py::arg("gen_hi").noconvert(), py::arg("col"), py::arg("cost"),
      "(Σ kept·cost, Σ supp·cost) of the code ranges of one QI; cost 0 = hi-lo+1, 1 = Cao, 2 = hi-lo.");
  m.def(
      "value_width_sums",
      [](const CArray<int64_t>& kept, const CArray<int64_t>& supp, const CArray<int32_t>& gen_lo,
         const CArray<int32_t>& gen_hi, int64_t col, const CArray<double>& values, double lower, double upper) {
        auto a = class_args(kept, supp);
        auto lo = gen_matrix(gen_lo, "gen_lo", a.kept.size, col);
        auto hi = matrix_of(gen_hi, "gen_hi", lo.rows, lo.cols);
        auto vals = span_of(values, "values");
        metrics::KeptSuppSums<double> r;
        {
          py::gil_scoped_release nogil;
          r = metrics::value_width_sums(a.kept, a.supp, lo, hi, col, vals, lower, upper);
        }
        return py::make_tuple(r.kept, r.supp);
      },
      py::arg("kept").noconvert(), py::arg("supp").noconvert(), py::arg("gen_lo").noconvert(),
      py::arg("gen_hi").noconvert(), py::arg("col"), py::arg("values").noconvert(), py::arg("lower"),
      py::arg("upper"), "(Σ kept·width, Σ supp·width) of the published numeric intervals of one QI, clipped to [lower, upper].");
  m.def(
      "node_cost_sums",
      [](const CArray<int64_t>& kept, const CArray<int64_t>& supp, const CArray<int32_t>& gen_node, int64_t col,
         const CArray<int64_t>& node_cost) {
        auto a = class_args(kept, supp);
        auto nodes = gen_matrix(gen_node, "gen_node", a.kept.size, col);
        auto cost = span_of(node_cost, "node_cost");
        metrics::KeptSuppSums<int64_t> r;
        {
          py::gil_scoped_release nogil;
          r = metrics::node_cost_sums(a.kept, a.supp, nodes, col, cost);
        }
        return py::make_tuple(r.kept, r.supp);
      },
      py::arg("kept").noconvert(), py::arg("supp").noconvert(), py::arg("gen_node").noconvert(), py::arg("col"),
      py::arg("node_cost").noconvert(), "(Σ kept·node_cost[node], Σ supp·node_cost[node]) of one QI.");
  m.def(
      "nu_entropy_terms",
      [](const CArray<int32_t>& column, int64_t n_codes, const CArray<int64_t>& kept, const CArray<int64_t>& supp,
         const CArray<int32_t>& base_lo, const CArray<int32_t>& base_hi, const CArray<int32_t>& gen_lo,
         const CArray<int32_t>& gen_hi, int64_t col, bool with_suppressed_term) {
        auto a = class_args(kept, supp);
        auto lo = gen_matrix(gen_lo, "gen_lo", a.kept.size, col);
        auto hi = matrix_of(gen_hi, "gen_hi", lo.rows, lo.cols);
        auto blo = matrix_of(base_lo, "base_lo", lo.rows, lo.cols);
        auto bhi = matrix_of(base_hi, "base_hi", lo.rows, lo.cols);
        auto codes = span_of(column, "column");
        if (n_codes < 1) throw std::invalid_argument("n_codes must be positive");
        metrics::NuEntropyTerms r;
        {
          py::gil_scoped_release nogil;
          r = metrics::nu_entropy_terms(codes, n_codes, a.kept, a.supp, blo, bhi, lo, hi, col, with_suppressed_term);
        }
        return py::make_tuple(r.base, r.supp_term);
      },
      py::arg("column").noconvert(), py::arg("n_codes"), py::arg("kept").noconvert(), py::arg("supp").noconvert(),
      py::arg("base_lo").noconvert(), py::arg("base_hi").noconvert(), py::arg("gen_lo").noconvert(),
      py::arg("gen_hi").noconvert(), py::arg("col"), py::arg("with_suppressed_term"),
      "(base, suppressed term) of ARX's non-uniform entropy for one QI (both <= 0).");
}

}  // namespace anoncore::bindings

// Bindings for anoncore::criteria: per-class criterion values and the models' metadata table (models.hpp):
// `models` = {class name: (kernel id, parameter a, parameter b or None, needs a sensitive attribute,
// judged by the lattice)}, `criteria_info` = {class name: (requirement, monotone under generalization,
// monotone under suppression)}.
#include "anoncore/criteria/criteria.hpp"
#include "common.hpp"

namespace anoncore::bindings {
namespace {

/// The exact kernels form products of two counts in int64: totals must stay below 2^31.
Span<int64_t> checked_reference(const CArray<int64_t>& reference, int64_t m) {
  auto rv = span_of(reference, "reference", m);
  int64_t total = 0;
  for (int64_t v = 0; v < rv.size; ++v) {
    if (rv[v] < 0) throw std::invalid_argument("reference counts must be non-negative");
    total += rv[v];
  }
  if (total <= 0 || total >= (int64_t{1} << 31))
    throw std::invalid_argument("the reference total must be in [1, 2^31)");
  return rv;
}

/// Binds a per-class entropy kernel `kernel(hist, sizes, out, n_threads)` (one value per histogram row).
template <class Kernel>
void def_entropy_kernel(py::module_& m, const char* name, const char* doc, Kernel kernel) {
  m.def(
      name,
      [kernel](const CArray<int64_t>& hist, const CArray<int64_t>& sizes, int n_threads) {
        auto hv = matrix_of(hist, "hist");
        auto sv = span_of(sizes, "sizes", hv.rows);
        CArray<double> out(hv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          kernel(hv, sv, ov, n_threads);
        }
        return out;
      },
      py::arg("hist").noconvert(), py::arg("sizes").noconvert(), py::arg("n_threads") = 0, doc);
}

}  // namespace

void bind_criteria(py::module_ m) {
  m.doc() = "criteria kernels: per-class values of the privacy models";
  py::dict info, models;
  for (const auto& c : criteria::kModels) {
    info[c.name] = py::make_tuple(c.requirement == criteria::Requirement::Count ? "count" : "histogram",
                                  c.monotone_generalization, c.monotone_suppression);
    models[c.name] = py::make_tuple(static_cast<int>(c.id), c.param_a,
                                    c.param_b != nullptr ? py::object(py::str(c.param_b)) : py::object(py::none()),
                                    c.needs_sensitive, c.lattice);
  }
  m.attr("models") = models;
  m.attr("criteria_info") = info;

  m.def(
      "distinct_values",
      [](const CArray<int64_t>& hist, int n_threads) {
        auto hv = matrix_of(hist, "hist");
        CArray<int64_t> out(hv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          criteria::distinct_values(hv, ov, n_threads);
        }
        return out;
      },
      py::arg("hist").noconvert(), py::arg("n_threads") = 0, "Distinct sensitive values per class.");
  def_entropy_kernel(m, "entropy", "Plug-in Shannon entropy (nats) per class.",
                     [](Matrix<int64_t> h, Span<int64_t> s, MutSpan<double> o, int t) {
                       criteria::entropy(h, s, o, t);
                     });
  def_entropy_kernel(m, "entropy_grassberger", "Grassberger's entropy estimate (nats) per class.",
                     [](Matrix<int64_t> h, Span<int64_t> s, MutSpan<double> o, int t) {
                       criteria::entropy_grassberger(h, s, o, t);
                     });
  m.def(
      "recursive_cl_ratio",
      [](const CArray<int64_t>& hist, const CArray<int64_t>& sizes, int64_t l, int n_threads) {
        auto hv = matrix_of(hist, "hist");
        auto sv = span_of(sizes, "sizes", hv.rows);
        if (l < 1) throw std::invalid_argument("l must be >= 1");
        CArray<double> out(hv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          criteria::recursive_cl_ratio(hv, sv, l, ov, n_threads);
        }
        return out;
      },
      py::arg("hist").noconvert(), py::arg("sizes").noconvert(), py::arg("l"), py::arg("n_threads") = 0,
      "Recursive (c,l) ratio r1 / (r_l + ... + r_m') per class.");
  m.def(
      "beta_likeness",
      [](const CArray<int64_t>& hist, const CArray<int64_t>& sizes, const CArray<int64_t>& reference, bool enhanced,
         int n_threads) {
        auto hv = matrix_of(hist, "hist");
        auto sv = span_of(sizes, "sizes", hv.rows);
        auto rv = checked_reference(reference, hv.cols);
        CArray<double> out(hv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          criteria::beta_likeness(hv, sv, rv, enhanced, ov, n_threads);
        }
        return out;
      },
      py::arg("hist").noconvert(), py::arg("sizes").noconvert(), py::arg("reference").noconvert(),
      py::arg("enhanced"), py::arg("n_threads") = 0, "Basic or enhanced beta-likeness value per class.");
  m.def(
      "delta_disclosure",
      [](const CArray<int64_t>& hist, const CArray<int64_t>& sizes, const CArray<int64_t>& reference, int n_threads) {
        auto hv = matrix_of(hist, "hist");
        auto sv = span_of(sizes, "sizes", hv.rows);
        auto rv = checked_reference(reference, hv.cols);
        CArray<double> out(hv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          criteria::delta_disclosure(hv, sv, rv, ov, n_threads);
        }
        return out;
      },
      py::arg("hist").noconvert(), py::arg("sizes").noconvert(), py::arg("reference").noconvert(),
      py::arg("n_threads") = 0, "delta-disclosure value per class (max |ln(q/p)|).");
}

}  // namespace anoncore::bindings

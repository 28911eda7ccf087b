// The compiled module anoncore._core: one submodule per concern, named after the Python module that uses it
// (anoncore.static.sabre -> _core.sabre, anoncore.stream.castle -> _core.castle, ...); this file only wires them.
#include <pybind11/pybind11.h>

#include "anoncore/core/parallel.hpp"

namespace py = pybind11;

namespace anoncore::bindings {
void bind_core(py::module_ m);
void bind_distance(py::module_ m);
void bind_criteria(py::module_ m);
void bind_metrics(py::module_ m);
void bind_lattice(py::module_ m);
void bind_sabre(py::module_ m);
void bind_mondrian(py::module_ m);
void bind_stream(py::module_ m);
void bind_temporal(py::module_ m);
void bind_sequence(py::module_ m);
void bind_sabre_w(py::module_ m);
void bind_burel(py::module_ m);
void bind_release(py::module_ m);
void bind_graph(py::module_ m);
void bind_workload(py::module_ m);
void bind_risk(py::module_ m);
void bind_datasets(py::module_ m);
}  // namespace anoncore::bindings

PYBIND11_MODULE(_core, m) {
  using namespace anoncore::bindings;
  m.doc() = "anoncore compiled kernels (private; use the anoncore package)";
  m.attr("has_openmp") = anoncore::has_openmp();
#ifdef ANONCORE_VERSION
  m.attr("__version__") = ANONCORE_VERSION;
#endif
  bind_core(m.def_submodule("core"));
  bind_distance(m.def_submodule("distance"));
  bind_criteria(m.def_submodule("criteria"));
  bind_metrics(m.def_submodule("metrics"));
  bind_lattice(m.def_submodule("lattice"));
  bind_sabre(m.def_submodule("sabre"));
  bind_mondrian(m.def_submodule("mondrian"));
  bind_stream(m.def_submodule("castle"));
  bind_temporal(m.def_submodule("temporal"));
  bind_sequence(m.def_submodule("sequence"));
  bind_sabre_w(m.def_submodule("sabre_w"));
  bind_burel(m.def_submodule("burel"));
  bind_release(m.def_submodule("release"));
  bind_graph(m.def_submodule("graph"));
  bind_workload(m.def_submodule("workload"));
  bind_risk(m.def_submodule("risk"));
  bind_datasets(m.def_submodule("datasets"));
}

// Bindings for anoncore::lattice (filled in by the issue that builds this concern).
#include "common.hpp"

namespace anoncore::bindings {
void bind_lattice(py::module_ m) { m.doc() = "lattice kernels"; }
}  // namespace anoncore::bindings

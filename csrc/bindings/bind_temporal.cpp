// Bindings for anoncore::temporal (filled in by the issue that builds this concern).
#include "common.hpp"

namespace anoncore::bindings {
void bind_temporal(py::module_ m) { m.doc() = "temporal kernels"; }
}  // namespace anoncore::bindings

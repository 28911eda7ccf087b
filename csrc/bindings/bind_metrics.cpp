// Bindings for anoncore::metrics (filled in by the issue that builds this concern).
#include "common.hpp"

namespace anoncore::bindings {
void bind_metrics(py::module_ m) { m.doc() = "metrics kernels"; }
}  // namespace anoncore::bindings

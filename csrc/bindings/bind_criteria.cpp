// Bindings for anoncore::criteria (filled in by the issue that builds this concern).
#include "common.hpp"

namespace anoncore::bindings {
void bind_criteria(py::module_ m) { m.doc() = "criteria kernels"; }
}  // namespace anoncore::bindings

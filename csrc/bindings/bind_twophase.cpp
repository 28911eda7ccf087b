// Bindings for anoncore::twophase (filled in by the issue that builds this concern).
#include "common.hpp"

namespace anoncore::bindings {
void bind_twophase(py::module_ m) { m.doc() = "twophase kernels"; }
}  // namespace anoncore::bindings

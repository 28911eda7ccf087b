// Bindings for anoncore::sequence (filled in by the issue that builds this concern).
#include "common.hpp"

namespace anoncore::bindings {
void bind_sequence(py::module_ m) { m.doc() = "sequence kernels"; }
}  // namespace anoncore::bindings

// Bindings for anoncore::mondrian (filled in by the issue that builds this concern).
#include "common.hpp"

namespace anoncore::bindings {
void bind_mondrian(py::module_ m) { m.doc() = "mondrian kernels"; }
}  // namespace anoncore::bindings

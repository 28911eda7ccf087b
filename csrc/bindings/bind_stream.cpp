// Bindings for anoncore::stream (filled in by the issue that builds this concern).
#include "common.hpp"

namespace anoncore::bindings {
void bind_stream(py::module_ m) { m.doc() = "stream kernels"; }
}  // namespace anoncore::bindings

// Bindings for anoncore::distance (filled in by the issue that builds this concern).
#include "common.hpp"

namespace anoncore::bindings {
void bind_distance(py::module_ m) { m.doc() = "distance kernels"; }
}  // namespace anoncore::bindings

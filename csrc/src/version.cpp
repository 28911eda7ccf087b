// Anchor translation unit of anoncore_kernels (the library always has at least one source).
#include "anoncore/core/parallel.hpp"

namespace anoncore {
const char* kernels_build_info() { return has_openmp() ? "openmp" : "serial"; }
}  // namespace anoncore

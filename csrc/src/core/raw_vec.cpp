#include "anoncore/core/raw_vec.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace anoncore::core {

void* raw_alloc(size_t bytes) {
  constexpr size_t kHuge = size_t{1} << 21;
  void* p = nullptr;
  if (bytes >= 2 * kHuge) {
    const size_t sz = (bytes + kHuge - 1) / kHuge * kHuge;
    p = std::aligned_alloc(kHuge, sz);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p != nullptr) (void)madvise(p, sz, MADV_HUGEPAGE);
#endif
  } else {
    p = std::malloc(std::max<size_t>(bytes, 1));
  }
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace anoncore::core

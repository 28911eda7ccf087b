// Buffers that grow without zeroing: raw_alloc's memory (large blocks on transparent huge pages) behind an
// allocator whose value-less construct default-initialises, so a large output is first touched by the
// parallel pass that fills it instead of being zeroed by one thread before it (src/core/raw_vec.cpp).
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace anoncore::core {

/// Raw memory: blocks of 4 MiB or more 2 MiB-aligned and, on Linux, marked for transparent huge pages (a
/// fresh buffer's first touch then faults a few 2 MiB pages instead of thousands of 4 KiB ones; a hint only).
/// Freed with std::free.
void* raw_alloc(size_t bytes);

/// An allocator whose value-less construct default-initialises: resize() of a RawVec of trivial values leaves
/// them unwritten, so a large output (a lattice's row classes: 40 MB at 10M rows) is first touched by the parallel
/// pass that fills it, not zeroed by one thread before it. Every resize of one is followed by a pass that
/// writes each element. Memory from raw_alloc.
template <class T>
struct NoInitAlloc {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = NoInitAlloc<U>;
  };
  NoInitAlloc() = default;
  template <class U>
  NoInitAlloc(const NoInitAlloc<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(raw_alloc(n * sizeof(T))); }
  void deallocate(T* p, size_t) noexcept { std::free(p); }
  template <class U>
  bool operator==(const NoInitAlloc<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const NoInitAlloc<U>&) const noexcept {
    return false;
  }
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
template <class T>
using RawVec = std::vector<T, NoInitAlloc<T>>;

}  // namespace anoncore::core

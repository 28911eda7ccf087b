// Parallel-for over chunks with exception capture (STYLE.md §2.5): no exception leaves a parallel region.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#ifdef ANONCORE_HAVE_OPENMP
#include <omp.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace anoncore {

inline bool has_openmp() {
#ifdef ANONCORE_HAVE_OPENMP
  return true;
#else
  return false;
#endif
}

/// The cores this process may run on: the size of its affinity mask (os.sched_getaffinity), not the machine's
/// core count and not OMP_NUM_THREADS.
inline int available_cores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif
#ifdef ANONCORE_HAVE_OPENMP
  return omp_get_num_procs();
#else
  return 1;
#endif
}

/// Resolve the public n_threads knob: <= 0 (Python's None) means every core the process may use
/// (available_cores); without OpenMP always 1.
inline int resolve_threads(int n_threads) {
#ifdef ANONCORE_HAVE_OPENMP
  if (n_threads <= 0) return available_cores();
  return n_threads;
#else
  (void)n_threads;
  return 1;
#endif
}

/// Index of the calling thread inside a parallel region (0 outside one, or without OpenMP): for per-thread
/// scratch space only, never for anything that reaches an output.
inline int thread_index() {
#ifdef ANONCORE_HAVE_OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/// Call body(chunk_index, begin, end) for consecutive chunks of [0, n). The chunking depends only on n and
/// chunk_size (never on the thread count), so per-chunk results can be combined in chunk order
/// deterministically. The first exception thrown by any chunk is rethrown after the join.
template <class Body>
void parallel_chunks(int64_t n, int64_t chunk_size, int n_threads, Body&& body) {
  if (n <= 0) return;
  chunk_size = std::max<int64_t>(1, chunk_size);
  const int64_t n_chunks = (n + chunk_size - 1) / chunk_size;
  std::exception_ptr error = nullptr;
#ifdef ANONCORE_HAVE_OPENMP
  std::atomic<bool> failed{false};
  const int threads = static_cast<int>(std::min<int64_t>(resolve_threads(n_threads), n_chunks));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t c = 0; c < n_chunks; ++c) {
    if (failed.load(std::memory_order_relaxed)) continue;
    try {
      body(c, c * chunk_size, std::min(n, (c + 1) * chunk_size));
    } catch (...) {
#pragma omp critical(anoncore_parallel_error)
      {
        if (!error) error = std::current_exception();
      }
      failed.store(true, std::memory_order_relaxed);
    }
  }
#else
  (void)n_threads;
  for (int64_t c = 0; c < n_chunks && !error; ++c) {
    try {
      body(c, c * chunk_size, std::min(n, (c + 1) * chunk_size));
    } catch (...) {
      error = std::current_exception();
    }
  }
#endif
  if (error) std::rethrow_exception(error);
}

}  // namespace anoncore

// Parallel-for over chunks with exception capture (STYLE.md §2.5): no exception leaves a parallel region.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <exception>
#include <limits>
#ifdef ANONCORE_HAVE_OPENMP
#include <omp.h>
#endif
#if defined(__linux__)
#include <dirent.h>
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

/// Whether threads that wait on each other are held to the idle cores (idle_cores); ANONCORE_LOAD_AWARE=0 in
/// the environment turns it off (the tests, so that the parallel paths run on a busy machine too).
inline bool load_aware_enabled() {
  const char* v = std::getenv("ANONCORE_LOAD_AWARE");
  return v == nullptr || std::string(v) != "0";
}

/// Threads of other processes runnable right now (Linux: the running count of /proc/loadavg, less this
/// process's threads in state R); -1 when unknown. An instantaneous count, not the 1-minute load average,
/// which still counts for a minute the threads of a process that has ended (and this process's own).
inline int running_elsewhere() {
#if defined(__linux__)
  long running = -1, total = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    double a = 0, b = 0, c = 0;
    if (std::fscanf(f, "%lf %lf %lf %ld/%ld", &a, &b, &c, &running, &total) != 5) running = -1;
    std::fclose(f);
  }
  if (running < 0) return -1;
  long own = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      char path[64], buf[512];
      std::snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
      FILE* f = std::fopen(path, "r");
      if (f == nullptr) continue;
      const size_t len = std::fread(buf, 1, sizeof(buf) - 1, f);
      std::fclose(f);
      buf[len] = 0;
      const char* p = std::strrchr(buf, ')');  // the state follows the command name
      own += p != nullptr && p[1] == ' ' && p[2] == 'R';
    }
    closedir(d);
  }
  return static_cast<int>(std::max<long>(0, running - std::max<long>(own, 1)));
#else
  return -1;
#endif
}

/// The cores the other processes leave idle right now: available_cores() less their runnable threads
/// (running_elsewhere, the least of three reads), at least 1; available_cores() when unknown. For passes
/// whose threads wait on each other (a join per small step, a hand-over per item): on a machine busy with
/// other work a thread holding a fraction of a core stalls the others. The output never depends on it.
/// (Read at most every 50 ms: a read costs 20-60 us, and a search may ask before every large merge.)
inline int idle_cores() {
  static std::atomic<int64_t> last_ns{std::numeric_limits<int64_t>::min() / 2};
  static std::atomic<int> last{0};
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch()).count();
  if (now - last_ns.load(std::memory_order_relaxed) < 50'000'000) {
    const int v = last.load(std::memory_order_relaxed);
    if (v > 0) return v;
  }
  const int cores = available_cores();
  int others = running_elsewhere();
  for (int i = 0; i < 2 && others > 0; ++i) others = std::min(others, running_elsewhere());  // a blip is no load
  const int v = others < 0 ? cores : std::clamp(cores - others, 1, cores);
  last.store(v, std::memory_order_relaxed);
  last_ns.store(now, std::memory_order_relaxed);
  return v;
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

/// Threads for a region of n_chunks independent chunks: at most one per chunk and, when the chunks are few
/// (fewer than kFewChunksPerThread per thread: a region of a few milliseconds), at most the idle cores. A thread
/// that another process deschedules while it holds one of few chunks holds the region's end for a whole time
/// slice (Adult's encoding on 2 cores beside one busy process: 2 ms → 60 ms); many chunks rebalance around it.
inline constexpr int64_t kFewChunksPerThread = 64;
inline int region_threads(int64_t n_chunks, int n_threads) {
  int threads = static_cast<int>(std::min<int64_t>(resolve_threads(n_threads), n_chunks));
  if (threads > 1 && n_chunks < kFewChunksPerThread * threads && load_aware_enabled())
    threads = std::min(threads, idle_cores());
  return threads;
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
  const int threads = region_threads(n_chunks, n_threads);
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

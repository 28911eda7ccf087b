// Helpers shared by the per-class kernels (criteria, distances): histogram totals, the serial/parallel cut-off
// and the per-class driver that maps every class histogram row to one value.
#pragma once
#include <cstdint>
#include <limits>

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/views.hpp"

namespace anoncore::per_class_detail {

/// Classes per parallel chunk (the chunking never depends on the thread count).
constexpr int64_t kClassChunk = 256;

}  // namespace anoncore::per_class_detail

namespace anoncore {

/// Sum of a count vector.
inline int64_t total_of(Span<int64_t> v) {
  int64_t s = 0;
  for (int64_t i = 0; i < v.size; ++i) s += v[i];
  return s;
}

/// Threads are worth their start-up cost only for enough work (small audits run serially; results are the same).
inline int threads_for(int64_t work, int n_threads) { return work < (int64_t{1} << 16) ? 1 : n_threads; }

/// out[c] = f(row of class c, its size Q) for every class with Q > 0, NaN for an empty class; parallel chunks
/// (deterministic: every class is independent).
template <class F>
void per_class(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<double> out, int n_threads, F&& f) {
  parallel_chunks(hist.rows, per_class_detail::kClassChunk, threads_for(hist.rows * hist.cols, n_threads),
                  [&](int64_t, int64_t b, int64_t e) {
                    for (int64_t c = b; c < e; ++c)
                      out[c] = sizes[c] <= 0 ? std::numeric_limits<double>::quiet_NaN() : f(hist.row(c), sizes[c]);
                  });
}

}  // namespace anoncore

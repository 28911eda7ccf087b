#include "anoncore/criteria/criteria.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/per_class.hpp"
#include "anoncore/criteria/class_criteria.hpp"

namespace anoncore::criteria {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kChunk = 256;

}  // namespace

void distinct_values(Matrix<int64_t> hist, MutSpan<int64_t> out, int n_threads) {
  const int64_t m = hist.cols;
  parallel_chunks(hist.rows, kChunk, threads_for(hist.rows * hist.cols, n_threads), [&](int64_t, int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t* row = hist.row(c);
      int64_t d = 0;
      for (int64_t v = 0; v < m; ++v) d += row[v] > 0 ? 1 : 0;
      out[c] = d;
    }
  });
}

void entropy(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<double> out, int n_threads) {
  const int64_t m = hist.cols;
  parallel_chunks(hist.rows, kChunk, threads_for(hist.rows * hist.cols, n_threads), [&](int64_t, int64_t b, int64_t e) {
    std::vector<int32_t> val;
    std::vector<int64_t> cnt;
    for (int64_t c = b; c < e; ++c) {
      if (sizes[c] <= 0) {
        out[c] = kNaN;
        continue;
      }
      ClassHist h = sparse_row(hist.row(c), m, val, cnt);
      h.size = sizes[c];
      out[c] = entropy_nats(h);
    }
  });
}

void recursive_cl_ratio(Matrix<int64_t> hist, Span<int64_t> sizes, int64_t l, MutSpan<double> out, int n_threads) {
  const int64_t m = hist.cols;
  parallel_chunks(hist.rows, kChunk, threads_for(hist.rows * hist.cols, n_threads), [&](int64_t, int64_t b, int64_t e) {
    std::vector<int32_t> val;
    std::vector<int64_t> cnt, buf;
    for (int64_t c = b; c < e; ++c) {
      if (sizes[c] <= 0) {
        out[c] = kNaN;
        continue;
      }
      ClassHist h = sparse_row(hist.row(c), m, val, cnt);
      h.size = sizes[c];
      int64_t first = 0, tail = 0;
      out[c] = recursive_cl_terms(h, l, buf, first, tail) ? static_cast<double>(first) / static_cast<double>(tail)
                                                          : kInf;
    }
  });
}

/// f(class histogram) for every class with a positive size (NaN otherwise), with the reference's tables.
template <class F>
void per_class_sparse(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                      int n_threads, F&& f) {
  const int64_t m = hist.cols;
  ReferenceTables tables;
  tables.build(reference.data, m, total_of(reference), nullptr, nullptr, 0);
  const Reference R = tables.view();
  parallel_chunks(hist.rows, kChunk, threads_for(hist.rows * hist.cols, n_threads), [&](int64_t, int64_t b, int64_t e) {
    std::vector<int32_t> val;
    std::vector<int64_t> cnt;
    for (int64_t c = b; c < e; ++c) {
      if (sizes[c] <= 0) {
        out[c] = kNaN;
        continue;
      }
      ClassHist h = sparse_row(hist.row(c), m, val, cnt);
      h.size = sizes[c];
      out[c] = f(h, R);
    }
  });
}

void beta_likeness(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, bool enhanced,
                   MutSpan<double> out, int n_threads) {
  per_class_sparse(hist, sizes, reference, out, n_threads,
                   [&](const ClassHist& h, const Reference& R) { return beta_value(h, R, enhanced); });
}

void delta_disclosure(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                      int n_threads) {
  per_class_sparse(hist, sizes, reference, out, n_threads,
                   [](const ClassHist& h, const Reference& R) { return delta_value(h, R); });
}

}  // namespace anoncore::criteria

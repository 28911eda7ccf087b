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
  per_class_hist(hist, sizes, 0, out, n_threads, [](const ClassHist& h, Workspace&) { return entropy_nats(h); });
}

void entropy_grassberger(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<double> out, int n_threads) {
  per_class_hist(hist, sizes, 0, out, n_threads,
                 [](const ClassHist& h, Workspace&) { return entropy_grassberger_nats(h); });
}

void recursive_cl_ratio(Matrix<int64_t> hist, Span<int64_t> sizes, int64_t l, MutSpan<double> out, int n_threads) {
  per_class_hist(hist, sizes, 0, out, n_threads, [&](const ClassHist& h, Workspace& ws) {
    int64_t first = 0, tail = 0;
    return recursive_cl_terms(h, l, ws.sorted, first, tail) ? static_cast<double>(first) / static_cast<double>(tail)
                                                           : kInf;
  });
}

void beta_likeness(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, bool enhanced,
                   MutSpan<double> out, int n_threads) {
  ReferenceTables tables;
  tables.build(reference.data, hist.cols, total_of(reference), nullptr, nullptr, 0);
  const Reference R = tables.view();
  per_class_hist(hist, sizes, 0, out, n_threads,
                 [&](const ClassHist& h, Workspace&) { return beta_value(h, R, enhanced); });
}

void delta_disclosure(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                      int n_threads) {
  ReferenceTables tables;
  tables.build(reference.data, hist.cols, total_of(reference), nullptr, nullptr, 0);
  const Reference R = tables.view();
  per_class_hist(hist, sizes, 0, out, n_threads, [&](const ClassHist& h, Workspace&) { return delta_value(h, R); });
}

}  // namespace anoncore::criteria

#include "anoncore/criteria/criteria.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/per_class.hpp"

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
  per_class(hist, sizes, out, n_threads, [&](const int64_t* row, int64_t n) -> double {
    double s = 0.0;
    for (int64_t v = 0; v < m; ++v) {
      if (row[v] > 1) {
        const double f = static_cast<double>(row[v]);
        s += f * std::log(f);
      }
    }
    const double nd = static_cast<double>(n);
    return std::max(0.0, std::log(nd) - s / nd);
  });
}

void recursive_cl_ratio(Matrix<int64_t> hist, Span<int64_t> sizes, int64_t l, MutSpan<double> out, int n_threads) {
  const int64_t m = hist.cols;
  parallel_chunks(hist.rows, kChunk, threads_for(hist.rows * hist.cols, n_threads), [&](int64_t, int64_t b, int64_t e) {
    std::vector<int64_t> buf(static_cast<size_t>(m));
    for (int64_t c = b; c < e; ++c) {
      const int64_t n = sizes[c];
      if (n <= 0) {
        out[c] = kNaN;
        continue;
      }
      const int64_t* row = hist.row(c);
      size_t r = 0;
      for (int64_t v = 0; v < m; ++v)
        if (row[v] > 0) buf[r++] = row[v];
      if (static_cast<int64_t>(r) < l) {
        out[c] = kInf;
        continue;
      }
      // The l-1 largest counts go first; the tail sum r_l + ... + r_m' is n minus them.
      const auto head = static_cast<std::ptrdiff_t>(std::max<int64_t>(l - 1, 1));
      std::partial_sort(buf.begin(), buf.begin() + head, buf.begin() + static_cast<std::ptrdiff_t>(r),
                        std::greater<int64_t>());
      int64_t top = 0;
      for (int64_t i = 0; i < l - 1; ++i) top += buf[static_cast<size_t>(i)];
      out[c] = static_cast<double>(buf[0]) / static_cast<double>(n - top);
    }
  });
}

void beta_likeness(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, bool enhanced,
                   MutSpan<double> out, int n_threads) {
  const int64_t m = hist.cols, P = total_of(reference);
  std::vector<double> bound(static_cast<size_t>(m));  // -ln p_v
  for (int64_t v = 0; v < m; ++v)
    bound[static_cast<size_t>(v)] =
        reference[v] > 0 ? -std::log(static_cast<double>(reference[v]) / static_cast<double>(P)) : 0.0;
  per_class(hist, sizes, out, n_threads, [&](const int64_t* row, int64_t Q) -> double {
    double best = 0.0;
    for (int64_t v = 0; v < m; ++v) {
      if (row[v] == 0) continue;
      if (reference[v] == 0) {
        best = kInf;
        break;
      }
      const int64_t num = row[v] * P - reference[v] * Q;  // (q - p) P Q
      if (num <= 0) continue;
      const double gain = static_cast<double>(num) / (static_cast<double>(reference[v]) * static_cast<double>(Q));
      if (enhanced && gain > bound[static_cast<size_t>(v)]) {
        best = kInf;
        break;
      }
      best = std::max(best, gain);
    }
    return best;
  });
}

void delta_disclosure(Matrix<int64_t> hist, Span<int64_t> sizes, Span<int64_t> reference, MutSpan<double> out,
                      int n_threads) {
  const int64_t m = hist.cols, P = total_of(reference);
  per_class(hist, sizes, out, n_threads, [&](const int64_t* row, int64_t Q) -> double {
    double best = 0.0;
    for (int64_t v = 0; v < m; ++v) {
      if (reference[v] == 0) {
        if (row[v] > 0) {
          best = kInf;
          break;
        }
        continue;
      }
      if (row[v] == 0) {
        best = kInf;
        break;
      }
      const double ratio = (static_cast<double>(row[v]) * static_cast<double>(P)) /
                           (static_cast<double>(reference[v]) * static_cast<double>(Q));
      best = std::max(best, std::fabs(std::log(ratio)));
    }
    return best;
  });
}

}  // namespace anoncore::criteria

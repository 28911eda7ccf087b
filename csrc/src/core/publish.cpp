#include "anoncore/core/publish.hpp"

#include <stdexcept>

#include "anoncore/core/parallel.hpp"

namespace anoncore::core {
namespace {
constexpr int64_t kChunk = int64_t{1} << 16;
}  // namespace

template <class T>
void publish_qi_columns(Span<int64_t> labels, Span<uint8_t> suppressed, Matrix<int32_t> class_map,
                        Span<int32_t> tokens, Span<int64_t> rows, const std::vector<T*>& out, int n_threads) {
  const int64_t q = class_map.cols, n_out = rows.size > 0 ? rows.size : labels.size;
  const bool has_sup = suppressed.size > 0, has_rows = rows.size > 0;
  parallel_chunks(n_out, kChunk, n_threads, [&](int64_t, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t r = has_rows ? rows[p] : p;
      if (r < 0 || r >= labels.size) throw std::out_of_range("rows out of range");
      if (has_sup && suppressed[r]) {
        for (int64_t j = 0; j < q; ++j) out[static_cast<size_t>(j)][p] = static_cast<T>(tokens[j]);
        continue;
      }
      const int64_t c = labels[r];
      if (c < 0 || c >= class_map.rows) throw std::out_of_range("class label outside the class map");
      const int32_t* m = class_map.row(c);
      for (int64_t j = 0; j < q; ++j) out[static_cast<size_t>(j)][p] = static_cast<T>(m[j]);
    }
  });
}

template void publish_qi_columns<int8_t>(Span<int64_t>, Span<uint8_t>, Matrix<int32_t>, Span<int32_t>, Span<int64_t>,
                                         const std::vector<int8_t*>&, int);
template void publish_qi_columns<int16_t>(Span<int64_t>, Span<uint8_t>, Matrix<int32_t>, Span<int32_t>,
                                          Span<int64_t>, const std::vector<int16_t*>&, int);
template void publish_qi_columns<int32_t>(Span<int64_t>, Span<uint8_t>, Matrix<int32_t>, Span<int32_t>,
                                          Span<int64_t>, const std::vector<int32_t*>&, int);

void gather_code_column(Matrix<int32_t> codes, int64_t column, Span<int64_t> rows, int32_t* out, int n_threads) {
  const int64_t n_out = rows.size > 0 ? rows.size : codes.rows;
  const bool has_rows = rows.size > 0;
  parallel_chunks(n_out, kChunk, n_threads, [&](int64_t, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t r = has_rows ? rows[p] : p;
      if (r < 0 || r >= codes.rows) throw std::out_of_range("rows out of range");
      out[p] = codes(r, column);
    }
  });
}

void gather_value_column(Matrix<int32_t> codes, int64_t column, Span<double> values, Span<int64_t> rows, double* out,
                         int n_threads) {
  const int64_t n_out = rows.size > 0 ? rows.size : codes.rows;
  const bool has_rows = rows.size > 0;
  parallel_chunks(n_out, kChunk, n_threads, [&](int64_t, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t r = has_rows ? rows[p] : p;
      if (r < 0 || r >= codes.rows) throw std::out_of_range("rows out of range");
      const int32_t v = codes(r, column);
      if (v < 0 || v >= values.size) throw std::out_of_range("code outside the values");
      out[p] = values[v];
    }
  });
}

}  // namespace anoncore::core

#include "anoncore/core/publish.hpp"

#include <algorithm>
#include <stdexcept>

#include "anoncore/core/parallel.hpp"

namespace anoncore::core {
namespace {
constexpr int64_t kChunk = int64_t{1} << 16;
/// The rows of a chunk: kChunk, or 8,192 for tables of at most four chunks (Adult's 30,162 rows then take every
/// core: to_arrow 241-262 -> 189-192 us on two; larger tables keep kChunk). Rows are independent: the output
/// does not depend on it.
int64_t chunk_for(int64_t n) { return n <= 4 * kChunk ? int64_t{1} << 13 : kChunk; }
constexpr int64_t kBlock = 2048;  // rows per block of publish_qi_columns (16 KB of offsets)
}  // namespace

template <class T>
void publish_qi_columns(Span<int64_t> labels, Span<uint8_t> suppressed, Matrix<int32_t> class_map,
                        Span<int32_t> tokens, Span<int64_t> rows, const std::vector<T*>& out, int n_threads) {
  const int64_t q = class_map.cols, n_out = rows.size > 0 ? rows.size : labels.size;
  const bool has_sup = suppressed.size > 0, has_rows = rows.size > 0;
  const int64_t n_classes = class_map.rows;
  const int32_t* cm = class_map.data;
  parallel_chunks(n_out, chunk_for(n_out), n_threads, [&](int64_t, int64_t p0, int64_t p1) {
    // Blocks of rows: each row's offset in the class map (-1: suppressed) once, then one column at a time
    // with its output pointer and token in registers (a row-major loop over int8 columns reloads every
    // pointer after each store, as char stores may alias anything).
    int64_t base[kBlock];
    for (int64_t b0 = p0; b0 < p1; b0 += kBlock) {
      const int64_t b1 = std::min(p1, b0 + kBlock);
      for (int64_t p = b0; p < b1; ++p) {
        const int64_t r = has_rows ? rows[p] : p;
        if (r < 0 || r >= labels.size) throw std::out_of_range("rows out of range");
        const int64_t c = labels[r];
        if (c < 0 || c >= n_classes) throw std::out_of_range("class label outside the class map");
        base[p - b0] = has_sup && suppressed[r] ? -1 : c * q;
      }
      for (int64_t j = 0; j < q; ++j) {
        T* const o = out[static_cast<size_t>(j)];
        const T tok = static_cast<T>(tokens[j]);
        const int32_t* const col = cm + j;
        for (int64_t p = b0; p < b1; ++p) {
          const int64_t at = base[p - b0];
          o[p] = at < 0 ? tok : static_cast<T>(col[at]);
        }
      }
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
  parallel_chunks(n_out, chunk_for(n_out), n_threads, [&](int64_t, int64_t p0, int64_t p1) {
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
  parallel_chunks(n_out, chunk_for(n_out), n_threads, [&](int64_t, int64_t p0, int64_t p1) {
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

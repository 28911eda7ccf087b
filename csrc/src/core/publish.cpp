#include "anoncore/core/publish.hpp"

#include <algorithm>
#include <cstring>
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

namespace {
/// The dictionary's offsets: m + 1 non-decreasing entries from 0 on, within its bytes.
void check_dictionary(Span<int64_t> dict_offsets, int64_t dict_bytes) {
  const int64_t m = dict_offsets.size - 1;
  if (m < 0 || dict_offsets[0] < 0) throw std::invalid_argument("dict_offsets must have m + 1 entries from 0 on");
  for (int64_t k = 0; k < m; ++k)
    if (dict_offsets[k + 1] < dict_offsets[k]) throw std::invalid_argument("dict_offsets must not decrease");
  if (dict_offsets[m] > dict_bytes) throw std::invalid_argument("dict_offsets point past the dictionary's bytes");
}
}  // namespace

int64_t dictionary_chunk_count(int64_t n) { return (n + chunk_for(n) - 1) / chunk_for(n); }

template <class I>
std::vector<int64_t> dictionary_chunk_starts(Span<I> indices, Span<int64_t> dict_offsets, int64_t dict_bytes,
                                             int n_threads) {
  check_dictionary(dict_offsets, dict_bytes);
  const int64_t m = dict_offsets.size - 1, n = indices.size, nc = dictionary_chunk_count(n);
  std::vector<int64_t> starts(static_cast<size_t>(nc) + 1, 0);
  const int64_t* const doff = dict_offsets.data;
  parallel_chunks(n, chunk_for(n), n_threads, [&](int64_t c, int64_t lo, int64_t hi) {
    int64_t bytes = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t k = static_cast<int64_t>(indices[i]);
      if (k < 0 || k >= m) throw std::out_of_range("dictionary index outside the dictionary");
      bytes += doff[k + 1] - doff[k];
    }
    starts[static_cast<size_t>(c) + 1] = bytes;
  });
  for (int64_t c = 0; c < nc; ++c) starts[static_cast<size_t>(c) + 1] += starts[static_cast<size_t>(c)];
  return starts;
}

template <class I>
void decode_dictionary(Span<I> indices, Span<int64_t> dict_offsets, Span<uint8_t> dict_data,
                       Span<int64_t> chunk_starts, MutSpan<int64_t> out_offsets, MutSpan<uint8_t> out_data,
                       int n_threads) {
  check_dictionary(dict_offsets, dict_data.size);
  const int64_t m = dict_offsets.size - 1, n = indices.size, nc = dictionary_chunk_count(n);
  if (chunk_starts.size != nc + 1 || chunk_starts[0] != 0 || chunk_starts[nc] != out_data.size)
    throw std::invalid_argument("chunk_starts must run from 0 to out_data's size, one entry per chunk and one more");
  for (int64_t c = 0; c < nc; ++c)
    if (chunk_starts[c + 1] < chunk_starts[c]) throw std::invalid_argument("chunk_starts must not decrease");
  if (out_offsets.size != n + 1) throw std::invalid_argument("out_offsets must have n + 1 entries");
  const int64_t* const doff = dict_offsets.data;
  // the dictionary's bytes with 16 zero bytes after them: a string is copied 16 bytes at a time, the
  // last block running past its end into the next string's place (written after it, by the same thread); a
  // memcpy call per string of 10-30 bytes cost more than the strings' bytes (census-income: 33 ms for 2.7M)
  std::vector<uint8_t> padded(static_cast<size_t>(dict_data.size + 16), 0);
  if (dict_data.size > 0) std::memcpy(padded.data(), dict_data.data, static_cast<size_t>(dict_data.size));
  const uint8_t* const dd = padded.data();
  int64_t* const oo = out_offsets.data;
  uint8_t* const od = out_data.data;
  oo[0] = 0;
  parallel_chunks(n, chunk_for(n), n_threads, [&](int64_t c, int64_t lo, int64_t hi) {
    int64_t at = chunk_starts[c];
    // a block may not run into the next chunk's bytes (another thread's): the strings that end within 16
    // bytes of the chunk's end are copied exactly
    const int64_t end = chunk_starts[c + 1];
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t k = static_cast<int64_t>(indices[i]);
      if (k < 0 || k >= m) throw std::out_of_range("dictionary index outside the dictionary");
      const int64_t a = doff[k], len = doff[k + 1] - a;
      if (at + len + 16 <= end) {
        for (int64_t x = 0; x < len; x += 16) std::memcpy(od + at + x, dd + a + x, 16);
      } else if (at + len <= end) {
        std::memcpy(od + at, dd + a, static_cast<size_t>(len));
      } else {
        throw std::invalid_argument("chunk_starts leave a chunk too few bytes");
      }
      at += len;
      oo[i + 1] = at;
    }
    if (at != end) throw std::invalid_argument("chunk_starts leave a chunk more bytes than its strings");
  });
}

#define ANONCORE_DECODE_DICTIONARY(I)                                                                              \
  template std::vector<int64_t> dictionary_chunk_starts<I>(Span<I>, Span<int64_t>, int64_t, int);                  \
  template void decode_dictionary<I>(Span<I>, Span<int64_t>, Span<uint8_t>, Span<int64_t>, MutSpan<int64_t>,        \
                                     MutSpan<uint8_t>, int);
ANONCORE_DECODE_DICTIONARY(int8_t)
ANONCORE_DECODE_DICTIONARY(int16_t)
ANONCORE_DECODE_DICTIONARY(int32_t)
#undef ANONCORE_DECODE_DICTIONARY

}  // namespace anoncore::core

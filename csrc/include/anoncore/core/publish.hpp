// Publishing a partition as columns (Partition.to_arrow): the per-row gathers, in one pass over the rows.
#pragma once
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::core {

/// For every published row p (rows[p], or p itself when rows is empty) and quasi-identifier j:
/// out[j][p] = tokens[j] where the row is suppressed (suppressed empty = none), else class_map(labels[row], j).
/// One pass over the labels writes every column; parallel over fixed-size chunks (same output for any
/// n_threads). class_map is (n_classes, q); labels must lie in [0, n_classes) (std::out_of_range otherwise).
/// T (int8, int16 or int32) is the indices' type: the caller picks one that holds every class_map and token value
/// (the narrowest, so that the published columns take a quarter or half of int32's memory).
template <class T>
void publish_qi_columns(Span<int64_t> labels, Span<uint8_t> suppressed, Matrix<int32_t> class_map,
                        Span<int32_t> tokens, Span<int64_t> rows, const std::vector<T*>& out, int n_threads);

/// out[p] = codes(rows[p], column) (rows empty = every row): a column of the row-major code matrix made
/// contiguous, in parallel.
void gather_code_column(Matrix<int32_t> codes, int64_t column, Span<int64_t> rows, int32_t* out, int n_threads);

/// out[p] = values[codes(rows[p], column)]: a numeric column's values, in parallel (codes must index values).
void gather_value_column(Matrix<int32_t> codes, int64_t column, Span<double> values, Span<int64_t> rows, double* out,
                         int n_threads);

/// Decoding a dictionary column to its strings (Arrow's large_string layout), in two passes over fixed chunks:
/// dictionary_chunk_starts gives each chunk's first byte in the output (and, last, the total): entry c of a
/// vector of n_chunks + 1 (dictionary_chunk_count chunks); decode_dictionary then writes out_offsets (n + 1
/// entries) and out_data (exactly the total bytes). The dictionary is dict_offsets (m + 1 non-decreasing entries
/// from 0 ... within dict_data) and dict_data; every index must lie in [0, m) (std::out_of_range otherwise).
/// decode_dictionary checks the starts it is given as it writes (a chunk's strings must fill exactly its
/// range: std::invalid_argument otherwise), so no byte is written outside out_data whatever they hold. The
/// output does not depend on n_threads.
int64_t dictionary_chunk_count(int64_t n);
template <class I>
std::vector<int64_t> dictionary_chunk_starts(Span<I> indices, Span<int64_t> dict_offsets, int64_t dict_bytes,
                                             int n_threads);
template <class I>
void decode_dictionary(Span<I> indices, Span<int64_t> dict_offsets, Span<uint8_t> dict_data,
                       Span<int64_t> chunk_starts, MutSpan<int64_t> out_offsets, MutSpan<uint8_t> out_data,
                       int n_threads);

}  // namespace anoncore::core

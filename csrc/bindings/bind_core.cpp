// Bindings for anoncore::core: group-by primitives used by the data model (Partition, Table).
#include <limits>

#include "anoncore/core/encode.hpp"
#include "anoncore/core/groupby.hpp"
#include "anoncore/core/parallel.hpp"
#include "anoncore/core/publish.hpp"
#include "common.hpp"

namespace anoncore::bindings {

namespace {

/// Column `column` of a writable C-contiguous (n_rows,) or (n_rows, n_cols) int32 array.
int32_t* column_of(CArray<int32_t>& out, int64_t column, int64_t n_rows) {
  if (!out.writeable()) throw std::invalid_argument("out must be writable");
  if (out.ndim() == 1) {
    if (column != 0 || out.shape(0) != n_rows) throw std::invalid_argument("out must have one entry per row");
    return out.mutable_data();
  }
  if (out.ndim() != 2 || out.shape(0) != n_rows || column < 0 || column >= out.shape(1))
    throw std::invalid_argument("out must have shape (n_rows, n_cols) with column in [0, n_cols)");
  return out.mutable_data() + column;
}

/// The optional contiguous copy of an encoded column: null for an empty array, else a writable (n_rows,) array.
int32_t* copy_of(CArray<int32_t>& copy, int64_t n_rows) {
  if (copy.size() == 0) return nullptr;
  if (!copy.writeable() || copy.ndim() != 1 || copy.shape(0) != n_rows)
    throw std::invalid_argument("copy must be empty or a writable array with one entry per row");
  return copy.mutable_data();
}

template <class I>
void def_gather(py::module_& m) {
  m.def(
      "gather_codes",
      [](const CArray<I>& index, const CArray<int32_t>& map, const CArray<uint8_t>& validity, int64_t validity_offset,
         CArray<int32_t>& out, int64_t column, CArray<int32_t>& copy, int n_threads) {
        auto iv = span_of(index, "index");
        auto mv = span_of(map, "map");
        auto vv = span_of(validity, "validity");
        const core::CodeSink sink{column_of(out, column, iv.size), out.ndim() == 2 ? out.shape(1) : 1,
                                  copy_of(copy, iv.size)};
        core::EncodeCounts c;
        {
          py::gil_scoped_release nogil;
          c = core::gather_codes<I>(iv, mv, vv, validity_offset, sink, n_threads);
        }
        return py::make_tuple(c.unknown, c.missing, c.lo, c.hi);
      },
      py::arg("index").noconvert(), py::arg("map").noconvert(), py::arg("validity").noconvert(),
      py::arg("validity_offset"), py::arg("out").noconvert(), py::arg("column"), py::arg("copy").noconvert(),
      py::arg("n_threads"),
      "out[i, column] = map[index[i]] (and copy[i], unless copy is empty); -2 where index[i] < 0 or the validity "
      "bitmap (Arrow bit order, empty = all valid) says null. Returns (n_unknown, n_missing, least code, "
      "largest code) (-1 and -2 codes included; an empty index gives int32's max and min).");
}

void bind_encode(py::module_& m) {
  m.def(
      "encode_strings",
      [](const CArray<int64_t>& offsets, const CArray<uint8_t>& data, const CArray<uint8_t>& validity,
         int64_t validity_offset, const CArray<int64_t>& key_offsets, const CArray<uint8_t>& key_data,
         const CArray<int32_t>& key_codes, CArray<int32_t>& out, int64_t column, CArray<int32_t>& copy,
         int n_threads) {
        auto ofs = span_of(offsets, "offsets");
        if (ofs.size < 1) throw std::invalid_argument("offsets must have n_rows + 1 entries");
        core::LabelHash keys(span_of(key_offsets, "key_offsets"), span_of(key_data, "key_data"),
                             span_of(key_codes, "key_codes"));
        const core::CodeSink sink{column_of(out, column, ofs.size - 1), out.ndim() == 2 ? out.shape(1) : 1,
                                  copy_of(copy, ofs.size - 1)};
        auto dv = span_of(data, "data");
        auto vv = span_of(validity, "validity");
        core::EncodeCounts c;
        {
          py::gil_scoped_release nogil;
          c = core::encode_strings(ofs, dv, vv, validity_offset, keys, sink, n_threads);
        }
        return py::make_tuple(c.unknown, c.missing, c.lo, c.hi);
      },
      py::arg("offsets").noconvert(), py::arg("data").noconvert(), py::arg("validity").noconvert(),
      py::arg("validity_offset"), py::arg("key_offsets").noconvert(), py::arg("key_data").noconvert(),
      py::arg("key_codes").noconvert(), py::arg("out").noconvert(), py::arg("column"), py::arg("copy").noconvert(),
      py::arg("n_threads"),
      "Writes into out[:, column] (and copy, unless it is empty) the codes of Arrow-layout strings looked up in a "
      "hash of the keys: key_codes of the matching key, -2 for null, -1 for a string that is no key. Returns "
      "(n_unknown, n_missing, least code, largest code).");
  def_gather<int8_t>(m);
  def_gather<int16_t>(m);
  def_gather<int32_t>(m);
  def_gather<int64_t>(m);
  m.def(
      "publish_codes",
      [](const CArray<int64_t>& labels, const CArray<bool>& suppressed, const CArray<int32_t>& class_map,
         int32_t token, int n_threads) {
        auto lv = span_of(labels, "labels");
        Span<uint8_t> sk{reinterpret_cast<const uint8_t*>(suppressed.data()),
                         static_cast<int64_t>(suppressed.size())};
        auto cm = span_of(class_map, "class_map");
        CArray<int32_t> out(lv.size);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          core::publish_codes(lv, sk, cm, token, ov, n_threads);
        }
        return out;
      },
      py::arg("labels").noconvert(), py::arg("suppressed").noconvert(), py::arg("class_map").noconvert(),
      py::arg("token"), py::arg("n_threads"),
      "Published dictionary index per row: token where suppressed (empty = none), else class_map[labels[i]].");
  m.def(
      "select_columns",
      [](const CArray<int32_t>& codes, const CArray<int64_t>& columns, int n_threads) {
        auto cv = matrix_of(codes, "codes");
        auto cols = span_of(columns, "columns");
        CArray<int32_t> out({cv.rows, cols.size});
        auto ov = mut_matrix_of(out, "out");
        {
          py::gil_scoped_release nogil;
          core::select_columns(cv, cols, ov, n_threads);
        }
        return out;
      },
      py::arg("codes").noconvert(), py::arg("columns").noconvert(), py::arg("n_threads"),
      "A C-contiguous copy of the given columns of a row-major int32 code matrix, in the given order.");
}

/// publish_columns' columns of indices of type T (allocated here, filled without the GIL).
template <class T>
py::list publish_indices(Span<int64_t> lv, Span<uint8_t> sk, Matrix<int32_t> cm, Span<int32_t> tv, Span<int64_t> rv,
                         int n_threads) {
  const int64_t n_out = rv.size > 0 ? rv.size : lv.size;
  const int32_t hi = std::numeric_limits<T>::max();
  for (int64_t j = 0; j < tv.size; ++j)
    if (tv[j] < 0 || tv[j] > hi) throw std::invalid_argument("a token does not fit the index type");
  for (int64_t i = 0; i < cm.rows * cm.cols; ++i)
    if (cm.data[i] < 0 || cm.data[i] > hi) throw std::invalid_argument("a class_map value does not fit the index type");
  py::list cols;
  std::vector<T*> out;
  for (int64_t j = 0; j < cm.cols; ++j) {
    CArray<T> a(n_out);
    out.push_back(a.mutable_data());
    cols.append(a);
  }
  {
    py::gil_scoped_release nogil;
    core::publish_qi_columns<T>(lv, sk, cm, tv, rv, out, n_threads);
  }
  return cols;
}

/// dictionary_chunk_starts / decode_dictionary for indices of type I (without the GIL). The caller allocates the
/// outputs, so that several columns' buffers can be one block (one allocation on huge pages: census-income's
/// nine published columns took 12 ms of page faults as eighteen arrays, 3 ms as one block).
template <class I>
void def_decode_dictionary(py::module_& m) {
  m.def(
      "dictionary_chunk_starts",
      [](const CArray<I>& indices, const CArray<int64_t>& dict_offsets, int64_t dict_bytes, int n_threads) {
        auto iv = span_of(indices, "indices");
        auto ov = span_of(dict_offsets, "dict_offsets");
        std::vector<int64_t> starts;
        {
          py::gil_scoped_release nogil;
          starts = core::dictionary_chunk_starts<I>(iv, ov, dict_bytes, n_threads);
        }
        return to_numpy(std::move(starts));
      },
      py::arg("indices").noconvert(), py::arg("dict_offsets").noconvert(), py::arg("dict_bytes"), py::arg("n_threads"),
      "Where each fixed chunk of the strings dict[indices[i]] starts in decode_dictionary's data, and, last, their "
      "bytes (int64, one entry per chunk and one more); every index checked.");
  m.def(
      "decode_dictionary",
      [](const CArray<I>& indices, const CArray<int64_t>& dict_offsets, const CArray<uint8_t>& dict_data,
         const CArray<int64_t>& chunk_starts, CArray<int64_t>& out_offsets, CArray<uint8_t>& out_data, int n_threads) {
        auto iv = span_of(indices, "indices");
        auto ov = span_of(dict_offsets, "dict_offsets");
        auto dv = span_of(dict_data, "dict_data");
        auto sv = span_of(chunk_starts, "chunk_starts");
        auto oo = mut_span_of(out_offsets, "out_offsets", iv.size + 1);
        auto od = mut_span_of(out_data, "out_data");
        py::gil_scoped_release nogil;
        core::decode_dictionary<I>(iv, ov, dv, sv, oo, od, n_threads);
      },
      py::arg("indices").noconvert(), py::arg("dict_offsets").noconvert(), py::arg("dict_data").noconvert(),
      py::arg("chunk_starts").noconvert(), py::arg("out_offsets").noconvert(), py::arg("out_data").noconvert(),
      py::arg("n_threads"),
      "The strings dict[indices[i]] of a dictionary column written in Arrow's large_string layout: out_offsets "
      "(n + 1 int64, from 0) and out_data (exactly chunk_starts[-1] bytes), chunk_starts from "
      "dictionary_chunk_starts (checked as the bytes are written). The dictionary is dict_offsets (m + 1 entries) "
      "over dict_data; indices int8, int16 or int32, each in [0, m).");
}

void bind_publish(py::module_& m) {
  def_decode_dictionary<int8_t>(m);
  def_decode_dictionary<int16_t>(m);
  def_decode_dictionary<int32_t>(m);
  m.def(
      "publish_columns",
      [](const CArray<int64_t>& labels, const CArray<bool>& suppressed, const CArray<int32_t>& class_map,
         const CArray<int32_t>& tokens, const CArray<int64_t>& rows, int index_bytes, int n_threads) {
        auto lv = span_of(labels, "labels");
        Span<uint8_t> sk{reinterpret_cast<const uint8_t*>(suppressed.data()), static_cast<int64_t>(suppressed.size())};
        if (sk.size != 0 && sk.size != lv.size) throw std::invalid_argument("suppressed has the wrong length");
        auto cm = matrix_of(class_map, "class_map");
        auto tv = span_of(tokens, "tokens", cm.cols);
        auto rv = span_of(rows, "rows");
        if (index_bytes == 1) return publish_indices<int8_t>(lv, sk, cm, tv, rv, n_threads);
        if (index_bytes == 2) return publish_indices<int16_t>(lv, sk, cm, tv, rv, n_threads);
        if (index_bytes == 4) return publish_indices<int32_t>(lv, sk, cm, tv, rv, n_threads);
        throw std::invalid_argument("index_bytes must be 1, 2 or 4");
      },
      py::arg("labels").noconvert(), py::arg("suppressed").noconvert(), py::arg("class_map").noconvert(),
      py::arg("tokens").noconvert(), py::arg("rows").noconvert(), py::arg("index_bytes"), py::arg("n_threads"),
      "Published dictionary indices of every quasi-identifier in one pass over the rows (rows empty = all): "
      "column j is tokens[j] where suppressed, else class_map[labels[row], j]. Returns a list of int8, int16 or "
      "int32 arrays (index_bytes 1, 2 or 4; every value must fit).");
  m.def(
      "gather_column",
      [](const CArray<int32_t>& codes, int64_t column, const CArray<int64_t>& rows, int n_threads) {
        auto cv = matrix_of(codes, "codes");
        if (column < 0 || column >= cv.cols) throw std::invalid_argument("column out of range");
        auto rv = span_of(rows, "rows");
        CArray<int32_t> out(rv.size > 0 ? rv.size : cv.rows);
        int32_t* o = out.mutable_data();
        {
          py::gil_scoped_release nogil;
          core::gather_code_column(cv, column, rv, o, n_threads);
        }
        return out;
      },
      py::arg("codes").noconvert(), py::arg("column"), py::arg("rows").noconvert(), py::arg("n_threads"),
      "codes[rows, column] (rows empty = all) as a contiguous int32 array.");
  m.def(
      "gather_values",
      [](const CArray<int32_t>& codes, int64_t column, const CArray<double>& values, const CArray<int64_t>& rows,
         int n_threads) {
        auto cv = matrix_of(codes, "codes");
        if (column < 0 || column >= cv.cols) throw std::invalid_argument("column out of range");
        auto vv = span_of(values, "values");
        auto rv = span_of(rows, "rows");
        CArray<double> out(rv.size > 0 ? rv.size : cv.rows);
        double* o = out.mutable_data();
        {
          py::gil_scoped_release nogil;
          core::gather_value_column(cv, column, vv, rv, o, n_threads);
        }
        return out;
      },
      py::arg("codes").noconvert(), py::arg("column"), py::arg("values").noconvert(), py::arg("rows").noconvert(),
      py::arg("n_threads"), "values[codes[rows, column]] (rows empty = all) as a float64 array.");
}

/// Counting kernels over boolean masks.
void bind_counts(py::module_& m) {
  m.def(
      "count_true",
      [](const CArray<bool>& mask, int n_threads) {
        Span<uint8_t> mv{reinterpret_cast<const uint8_t*>(mask.data()), static_cast<int64_t>(mask.size())};
        py::gil_scoped_release nogil;
        return core::count_true(mv, n_threads);
      },
      py::arg("mask").noconvert(), py::arg("n_threads") = 1,
      "The number of true values of a boolean array (C-contiguous), counted on n_threads threads.");
}

}  // namespace

void bind_core(py::module_ m) {
  m.doc() = "core group-by primitives";
  bind_encode(m);
  bind_publish(m);
  bind_counts(m);
  m.def("available_cores", &available_cores, "The cores this process may run on (its affinity mask).");
  m.def("idle_cores", &idle_cores,
        "The cores the other processes leave idle right now (their runnable threads), at least 1: the cap of "
        "the passes whose threads wait on each other.");
  m.def("running_elsewhere", &running_elsewhere,
        "Threads of other processes runnable right now (-1: unknown).");
  m.def("region_threads", &region_threads, py::arg("n_chunks"), py::arg("n_threads"),
        "Threads a parallel region of n_chunks chunks would take now with n_threads asked (<= 0: every core).");
  m.def(
      "dense_labels",
      [](const CArray<int32_t>& codes, const CArray<int64_t>& cardinality, int n_threads) {
        auto cv = matrix_of(codes, "codes");
        auto card = span_of(cardinality, "cardinality", cv.cols);
        CArray<int64_t> labels(cv.rows);
        auto lv = mut_span_of(labels, "labels");
        int64_t n_classes;
        {
          py::gil_scoped_release nogil;
          n_classes = core::dense_labels(cv, card, lv, n_threads);
        }
        return py::make_tuple(labels, n_classes);
      },
      py::arg("codes").noconvert(), py::arg("cardinality").noconvert(), py::arg("n_threads") = 1,
      "Dense first-appearance labels of the distinct rows of codes; returns (labels, n_classes).");
  m.def(
      "levels_labels",
      [](const CArray<int32_t>& codes, const CArray<int64_t>& columns, const CArray<int32_t>& maps,
         const CArray<int64_t>& map_offsets, const CArray<int64_t>& widths, int n_threads) {
        auto cv = matrix_of(codes, "codes");
        auto cols = span_of(columns, "columns");
        auto mo = span_of(map_offsets, "map_offsets", cols.size + 1);
        auto wv = span_of(widths, "widths", cols.size);
        auto mv = span_of(maps, "maps", mo.size > 0 ? mo[mo.size - 1] : 0);
        unsigned __int128 space = 1;
        for (int64_t j = 0; j < cols.size; ++j) {
          if (cols[j] < 0 || cols[j] >= cv.cols) throw std::invalid_argument("columns out of range");
          if (mo[j] < 0 || mo[j] > mo[j + 1]) throw std::invalid_argument("map_offsets must be increasing");
          if (wv[j] < 1) throw std::invalid_argument("widths must be positive");
          for (int64_t k = mo[j]; k < mo[j + 1]; ++k)
            if (mv[k] < 0 || mv[k] >= wv[j]) throw std::invalid_argument("maps values must be in [0, width)");
          space *= static_cast<unsigned __int128>(wv[j]);
          if (space > (static_cast<unsigned __int128>(1) << 62))
            throw std::invalid_argument("the product of the widths must fit in 62 bits");
        }
        CArray<int64_t> labels(cv.rows);
        auto lv = mut_span_of(labels, "labels");
        std::vector<int64_t> first;
        int64_t n_classes;
        {
          py::gil_scoped_release nogil;
          n_classes = core::levels_labels(cv, cols, mv, mo, wv, lv, first, n_threads);
        }
        return py::make_tuple(labels, n_classes, to_numpy(std::move(first)));
      },
      py::arg("codes").noconvert(), py::arg("columns").noconvert(), py::arg("maps").noconvert(),
      py::arg("map_offsets").noconvert(), py::arg("widths").noconvert(), py::arg("n_threads"),
      "Classes of full-domain generalization: dense first-appearance labels of the rows' mixed-radix keys "
      "maps[map_offsets[j] + codes[i, columns[j]]] (radix widths[j]); returns (labels, n_classes, first_rows).");
  m.def(
      "class_sizes",
      [](const CArray<int64_t>& labels, const CArray<bool>& skip, int64_t n_classes, int n_threads) {
        auto lv = span_of(labels, "labels");
        Span<uint8_t> sk{reinterpret_cast<const uint8_t*>(skip.data()), static_cast<int64_t>(skip.size())};
        if (sk.size != 0 && sk.size != lv.size) throw std::invalid_argument("skip has the wrong length");
        CArray<int64_t> sizes(n_classes);
        auto sv = mut_span_of(sizes, "sizes");
        {
          py::gil_scoped_release nogil;
          core::class_sizes(lv, sk, sv, n_threads);
        }
        return sizes;
      },
      py::arg("labels").noconvert(), py::arg("skip").noconvert(), py::arg("n_classes"), py::arg("n_threads") = 1,
      "Rows per class, skipping rows flagged in skip (an empty skip skips nothing).");
  m.def(
      "value_counts",
      [](const CArray<int32_t>& values, int64_t n_values, int n_threads) {
        auto vv = span_of(values, "values");
        CArray<int64_t> counts(n_values);
        auto cv = mut_span_of(counts, "counts");
        {
          py::gil_scoped_release nogil;
          core::value_counts(vv, cv, n_threads);
        }
        return counts;
      },
      py::arg("values").noconvert(), py::arg("n_values"), py::arg("n_threads") = 1,
      "Rows per value of a coded column (every value in [0, n_values)).");
  m.def(
      "class_min_max",
      [](const CArray<int32_t>& codes, const CArray<int64_t>& labels, const CArray<bool>& skip, int64_t n_classes,
         int n_threads) {
        auto cv = matrix_of(codes, "codes");
        auto lv = span_of(labels, "labels", cv.rows);
        Span<uint8_t> sk{reinterpret_cast<const uint8_t*>(skip.data()), static_cast<int64_t>(skip.size())};
        if (sk.size != 0 && sk.size != lv.size) throw std::invalid_argument("skip has the wrong length");
        CArray<int32_t> lo({n_classes, cv.cols});
        CArray<int32_t> hi({n_classes, cv.cols});
        auto lov = mut_matrix_of(lo, "lo");
        auto hiv = mut_matrix_of(hi, "hi");
        {
          py::gil_scoped_release nogil;
          core::class_min_max(cv, lv, sk, lov, hiv, n_threads);
        }
        return py::make_tuple(lo, hi);
      },
      py::arg("codes").noconvert(), py::arg("labels").noconvert(), py::arg("skip").noconvert(), py::arg("n_classes"),
      py::arg("n_threads") = 1, "Per-class minimum and maximum code of every column; returns (lo, hi).");
  m.def(
      "column_min_max",
      [](const CArray<int32_t>& codes, int n_threads) {
        auto cv = matrix_of(codes, "codes");
        CArray<int32_t> lo(cv.cols), hi(cv.cols);
        auto lv = mut_span_of(lo, "lo");
        auto hv = mut_span_of(hi, "hi");
        {
          py::gil_scoped_release nogil;
          core::column_min_max(cv, lv, hv, n_threads);
        }
        return py::make_tuple(lo, hi);
      },
      py::arg("codes").noconvert(), py::arg("n_threads"),
      "Minimum and maximum of every column of a C-contiguous int32 matrix; returns (lo, hi).");
  m.def(
      "class_histogram",
      [](const CArray<int32_t>& values, const CArray<int64_t>& labels, const CArray<bool>& skip, int64_t n_classes,
         int64_t n_values, int n_threads) {
        auto vv = span_of(values, "values");
        auto lv = span_of(labels, "labels", vv.size);
        Span<uint8_t> sk{reinterpret_cast<const uint8_t*>(skip.data()), static_cast<int64_t>(skip.size())};
        if (sk.size != 0 && sk.size != lv.size) throw std::invalid_argument("skip has the wrong length");
        CArray<int64_t> hist({n_classes, n_values});
        auto hv = mut_matrix_of(hist, "hist");
        {
          py::gil_scoped_release nogil;
          core::class_histogram(vv, lv, sk, hv, n_threads);
        }
        return hist;
      },
      py::arg("values").noconvert(), py::arg("labels").noconvert(), py::arg("skip").noconvert(), py::arg("n_classes"),
      py::arg("n_values"), py::arg("n_threads") = 1,
      "Per-class histogram of a coded column, shape (n_classes, n_values).");
}

}  // namespace anoncore::bindings

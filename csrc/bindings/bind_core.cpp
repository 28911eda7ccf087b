// Bindings for anoncore::core: group-by primitives used by the data model (Partition, Table).
#include "anoncore/core/encode.hpp"
#include "anoncore/core/groupby.hpp"
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

template <class I>
void def_gather(py::module_& m) {
  m.def(
      "gather_codes",
      [](const CArray<I>& index, const CArray<int32_t>& map, const CArray<uint8_t>& validity, int64_t validity_offset,
         CArray<int32_t>& out, int64_t column, int n_threads) {
        auto iv = span_of(index, "index");
        auto mv = span_of(map, "map");
        auto vv = span_of(validity, "validity");
        int32_t* dst = column_of(out, column, iv.size);
        core::EncodeCounts c;
        {
          py::gil_scoped_release nogil;
          c = core::gather_codes<I>(iv, mv, vv, validity_offset, dst, out.ndim() == 2 ? out.shape(1) : 1, n_threads);
        }
        return py::make_tuple(c.unknown, c.missing);
      },
      py::arg("index").noconvert(), py::arg("map").noconvert(), py::arg("validity").noconvert(),
      py::arg("validity_offset"), py::arg("out").noconvert(), py::arg("column"), py::arg("n_threads"),
      "out[i, column] = map[index[i]]; -2 where index[i] < 0 or the validity bitmap (Arrow bit order, empty = "
      "all valid) says null. Returns (n_unknown, n_missing) (-1 and -2 codes written).");
}

void bind_encode(py::module_& m) {
  m.def(
      "encode_strings",
      [](const CArray<int64_t>& offsets, const CArray<uint8_t>& data, const CArray<uint8_t>& validity,
         int64_t validity_offset, const CArray<int64_t>& key_offsets, const CArray<uint8_t>& key_data,
         const CArray<int32_t>& key_codes, CArray<int32_t>& out, int64_t column, int n_threads) {
        auto ofs = span_of(offsets, "offsets");
        if (ofs.size < 1) throw std::invalid_argument("offsets must have n_rows + 1 entries");
        core::LabelHash keys(span_of(key_offsets, "key_offsets"), span_of(key_data, "key_data"),
                             span_of(key_codes, "key_codes"));
        int32_t* dst = column_of(out, column, ofs.size - 1);
        auto dv = span_of(data, "data");
        auto vv = span_of(validity, "validity");
        core::EncodeCounts c;
        {
          py::gil_scoped_release nogil;
          c = core::encode_strings(ofs, dv, vv, validity_offset, keys, dst, out.ndim() == 2 ? out.shape(1) : 1,
                                   n_threads);
        }
        return py::make_tuple(c.unknown, c.missing);
      },
      py::arg("offsets").noconvert(), py::arg("data").noconvert(), py::arg("validity").noconvert(),
      py::arg("validity_offset"), py::arg("key_offsets").noconvert(), py::arg("key_data").noconvert(),
      py::arg("key_codes").noconvert(), py::arg("out").noconvert(), py::arg("column"), py::arg("n_threads"),
      "Writes into out[:, column] the codes of Arrow-layout strings looked up in a hash of the keys: key_codes "
      "of the matching key, -2 for null, -1 for a string that is no key. Returns (n_unknown, n_missing).");
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

}  // namespace

void bind_core(py::module_ m) {
  m.doc() = "core group-by primitives";
  bind_encode(m);
  m.def(
      "dense_labels",
      [](const CArray<int32_t>& codes, const CArray<int64_t>& cardinality) {
        auto cv = matrix_of(codes, "codes");
        auto card = span_of(cardinality, "cardinality", cv.cols);
        CArray<int64_t> labels(cv.rows);
        auto lv = mut_span_of(labels, "labels");
        int64_t n_classes;
        {
          py::gil_scoped_release nogil;
          n_classes = core::dense_labels(cv, card, lv);
        }
        return py::make_tuple(labels, n_classes);
      },
      py::arg("codes").noconvert(), py::arg("cardinality").noconvert(),
      "Dense first-appearance labels of the distinct rows of codes; returns (labels, n_classes).");
  m.def(
      "class_sizes",
      [](const CArray<int64_t>& labels, const CArray<bool>& skip, int64_t n_classes) {
        auto lv = span_of(labels, "labels");
        Span<uint8_t> sk{reinterpret_cast<const uint8_t*>(skip.data()), static_cast<int64_t>(skip.size())};
        if (sk.size != 0 && sk.size != lv.size) throw std::invalid_argument("skip has the wrong length");
        CArray<int64_t> sizes(n_classes);
        auto sv = mut_span_of(sizes, "sizes");
        {
          py::gil_scoped_release nogil;
          core::class_sizes(lv, sk, sv);
        }
        return sizes;
      },
      py::arg("labels").noconvert(), py::arg("skip").noconvert(), py::arg("n_classes"),
      "Rows per class, skipping rows flagged in skip (an empty skip skips nothing).");
  m.def(
      "class_min_max",
      [](const CArray<int32_t>& codes, const CArray<int64_t>& labels, const CArray<bool>& skip, int64_t n_classes) {
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
          core::class_min_max(cv, lv, sk, lov, hiv);
        }
        return py::make_tuple(lo, hi);
      },
      py::arg("codes").noconvert(), py::arg("labels").noconvert(), py::arg("skip").noconvert(), py::arg("n_classes"),
      "Per-class minimum and maximum code of every column; returns (lo, hi).");
  m.def(
      "class_histogram",
      [](const CArray<int32_t>& values, const CArray<int64_t>& labels, const CArray<bool>& skip, int64_t n_classes,
         int64_t n_values) {
        auto vv = span_of(values, "values");
        auto lv = span_of(labels, "labels", vv.size);
        Span<uint8_t> sk{reinterpret_cast<const uint8_t*>(skip.data()), static_cast<int64_t>(skip.size())};
        if (sk.size != 0 && sk.size != lv.size) throw std::invalid_argument("skip has the wrong length");
        CArray<int64_t> hist({n_classes, n_values});
        auto hv = mut_matrix_of(hist, "hist");
        {
          py::gil_scoped_release nogil;
          core::class_histogram(vv, lv, sk, hv);
        }
        return hist;
      },
      py::arg("values").noconvert(), py::arg("labels").noconvert(), py::arg("skip").noconvert(), py::arg("n_classes"),
      py::arg("n_values"), "Per-class histogram of a coded column, shape (n_classes, n_values).");
}

}  // namespace anoncore::bindings

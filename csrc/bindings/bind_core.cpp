// Bindings for anoncore::core: group-by primitives used by the data model (Partition, Table).
#include "anoncore/core/groupby.hpp"
#include "common.hpp"

namespace anoncore::bindings {

void bind_core(py::module_ m) {
  m.doc() = "core group-by primitives";
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

// Bindings for anoncore::risk: the group-by of the risk profile.
#include "anoncore/risk/groupby.hpp"
#include "common.hpp"

namespace anoncore::bindings {

void bind_risk(py::module_ m) {
  m.doc() = "re-identification risk kernels";
  m.def(
      "group_columns",
      [](const CArray<int32_t>& codes, const CArray<int64_t>& cols, const CArray<int64_t>& cardinality) {
        auto cv = matrix_of(codes, "codes");
        auto colv = span_of(cols, "cols");
        auto card = span_of(cardinality, "cardinality", colv.size);
        for (int64_t j = 0; j < colv.size; ++j)
          if (colv[j] < 0 || colv[j] >= cv.cols) throw std::invalid_argument("cols holds a column out of range");
        CArray<int64_t> labels(cv.rows);
        auto lv = mut_span_of(labels, "labels");
        std::vector<int64_t> sizes;
        int64_t n_classes;
        {
          py::gil_scoped_release nogil;
          n_classes = risk::group_columns(cv, colv, card, lv, sizes);
        }
        return py::make_tuple(labels, to_numpy(std::move(sizes)), n_classes);
      },
      py::arg("codes").noconvert(), py::arg("cols").noconvert(), py::arg("cardinality").noconvert(),
      "Labels (first appearance) and class sizes of the rows grouped on the columns cols; (labels, sizes, n).");
}

}  // namespace anoncore::bindings

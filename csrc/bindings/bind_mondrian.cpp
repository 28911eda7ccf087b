// Bindings for anoncore::mondrian: Mondrian median splits under a list of class models.
#include <memory>

#include "anoncore/mondrian/mondrian.hpp"
#include "common.hpp"

namespace anoncore::bindings {

void bind_mondrian(py::module_ m) {
  m.doc() = "mondrian kernels: multidimensional median partitioning under monotone class models";
  m.def(
      "tmondrian",
      [](const CArray<int32_t>& qi, const CArray<double>& coord_values, const CArray<int64_t>& coord_offsets,
         const CArray<int32_t>& sa, int64_t m_codes, int64_t k, double t, const py::object& hierarchy) {
        mondrian::MondrianInput in;
        in.qi = matrix_of(qi, "qi");
        in.coords = {span_of(coord_values, "coord_values"), span_of(coord_offsets, "coord_offsets", in.qi.cols + 1)};
        in.sa = span_of(sa, "sa", in.qi.rows);
        in.m = m_codes;
        CArray<int32_t> parent, height, leaf_start, leaf_count;
        twophase::HierarchyView hv;
        const twophase::HierarchyView* hp = nullptr;
        if (!hierarchy.is_none()) {
          auto tup = hierarchy.cast<py::tuple>();
          if (tup.size() != 4) throw std::invalid_argument("hierarchy must be (parent, height, leaf_start, leaf_count)");
          for (size_t i = 0; i < 4; ++i)
            if (!py::isinstance<CArray<int32_t>>(tup[i])) throw py::type_error("hierarchy arrays must be C-contiguous int32");
          parent = tup[0].cast<CArray<int32_t>>();
          height = tup[1].cast<CArray<int32_t>>();
          leaf_start = tup[2].cast<CArray<int32_t>>();
          leaf_count = tup[3].cast<CArray<int32_t>>();
          hv.parent = span_of(parent, "parent");
          hv.height = span_of(height, "height", hv.parent.size);
          hv.leaf_start = span_of(leaf_start, "leaf_start", hv.parent.size);
          hv.leaf_count = span_of(leaf_count, "leaf_count", hv.parent.size);
          hv.n_leaves = m_codes;
          hp = &hv;
        }
        std::vector<int64_t> reference(static_cast<size_t>(m_codes), 0);
        for (int64_t r = 0; r < in.sa.size; ++r) {
          if (in.sa[r] < 0 || in.sa[r] >= m_codes) throw std::invalid_argument("sensitive code out of range");
          ++reference[static_cast<size_t>(in.sa[r])];
        }
        mondrian::KAnonymityModel kmodel(k);
        mondrian::TClosenessModel tmodel(reference, t, hp);
        in.models = {&kmodel, &tmodel};
        in.interrupt = python_interrupt_hook();
        mondrian::MondrianOutput o;
        {
          py::gil_scoped_release nogil;
          o = mondrian::mondrian(in);
        }
        raise_for_status(o.status);
        py::dict d;
        d["labels"] = to_numpy(std::move(o.labels));
        d["n_classes"] = o.n_classes;
        d["n_splits"] = o.n_splits;
        d["n_refused"] = o.n_refused;
        return d;
      },
      py::arg("qi").noconvert(), py::arg("coord_values").noconvert(), py::arg("coord_offsets").noconvert(),
      py::arg("sa").noconvert(), py::arg("m"), py::arg("k"), py::arg("t"), py::arg("hierarchy") = py::none(),
      "tMondrian: median splits kept only when both halves are k-anonymous and t-close.");
}

}  // namespace anoncore::bindings

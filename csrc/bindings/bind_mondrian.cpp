// Bindings for anoncore::mondrian: Mondrian median splits under a list of class models.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "anoncore/mondrian/mondrian.hpp"
#include "common.hpp"

namespace anoncore::bindings {
namespace {

// What partition returns: the row labels (as a NumPy array) and the split counters.
struct MondrianResult {
  py::array_t<int64_t> labels;
  int64_t n_classes, n_splits, n_refused;
};

}  // namespace

void bind_mondrian(py::module_ m) {
  m.doc() = "mondrian kernels: multidimensional median partitioning under monotone class models";
  py::class_<MondrianResult>(m, "MondrianResult", "Row labels and split counters of a Mondrian partition.")
      .def_readonly("labels", &MondrianResult::labels)
      .def_readonly("n_classes", &MondrianResult::n_classes)
      .def_readonly("n_splits", &MondrianResult::n_splits)
      .def_readonly("n_refused", &MondrianResult::n_refused);
  m.def(
      "partition",
      [](const CArray<int32_t>& qi, const CArray<double>& coord_values, const CArray<int64_t>& coord_offsets,
         const CArray<int32_t>& sa, int64_t m_codes, const std::vector<std::pair<std::string, double>>& models,
         const py::object& hierarchy, const py::object& groups, const py::object& qi_hierarchies,
         const py::object& reference_counts) {
        mondrian::MondrianInput in;
        in.qi = matrix_of(qi, "qi");
        in.coords = {span_of(coord_values, "coord_values"), span_of(coord_offsets, "coord_offsets", in.qi.cols + 1)};
        in.sa = span_of(sa, "sa", in.qi.rows);
        in.m = m_codes;
        CArray<int32_t> arrays[4];
        twophase::HierarchyView hv;
        const twophase::HierarchyView* hp = nullptr;
        if (!hierarchy.is_none()) {
          auto tup = hierarchy.cast<py::tuple>();
          if (tup.size() != 4) throw std::invalid_argument("hierarchy must be (parent, height, leaf_start, leaf_count)");
          for (size_t i = 0; i < 4; ++i) {
            if (!py::isinstance<CArray<int32_t>>(tup[i])) throw py::type_error("hierarchy arrays must be C-contiguous int32");
            arrays[i] = tup[i].cast<CArray<int32_t>>();
          }
          hv.parent = span_of(arrays[0], "parent");
          hv.height = span_of(arrays[1], "height", hv.parent.size);
          hv.leaf_start = span_of(arrays[2], "leaf_start", hv.parent.size);
          hv.leaf_count = span_of(arrays[3], "leaf_count", hv.parent.size);
          hv.n_leaves = m_codes;
          hp = &hv;
        }
        // Optional hierarchy-based categorical splits: one entry per QI, None (median cut) or
        // (parent, leaf_start, leaf_count) int32 arrays of that QI's hierarchy.
        if (!qi_hierarchies.is_none()) {
          auto lst = qi_hierarchies.cast<py::list>();
          if (static_cast<int64_t>(lst.size()) != in.qi.cols)
            throw std::invalid_argument("qi_hierarchies must have one entry per quasi-identifier");
          in.hierarchy_split.resize(static_cast<size_t>(in.qi.cols));
          for (int64_t j = 0; j < in.qi.cols; ++j) {
            if (lst[static_cast<size_t>(j)].is_none()) continue;
            auto tup = lst[static_cast<size_t>(j)].cast<py::tuple>();
            if (tup.size() != 3) throw std::invalid_argument("qi_hierarchies entries must be (parent, leaf_start, leaf_count)");
            CArray<int32_t> a[3];
            for (size_t i = 0; i < 3; ++i) {
              if (!py::isinstance<CArray<int32_t>>(tup[i])) throw py::type_error("qi_hierarchies arrays must be C-contiguous int32");
              a[i] = tup[i].cast<CArray<int32_t>>();
            }
            const auto par = span_of(a[0], "parent");
            const auto ls = span_of(a[1], "leaf_start", par.size);
            const auto lc = span_of(a[2], "leaf_count", par.size);
            for (int64_t r = 0; r < in.qi.rows; ++r) {
              const int32_t c = in.qi(r, j);
              if (c < 0 || c >= par.size || lc[c] != 1 || ls[c] != c)
                throw std::invalid_argument("qi_hierarchies: a code is not a leaf of its hierarchy");
            }
            in.hierarchy_split[static_cast<size_t>(j)] = mondrian::make_hierarchy_split(par, ls, lc);
          }
        }
        std::vector<int64_t> reference(static_cast<size_t>(m_codes), 0);
        for (int64_t r = 0; r < in.sa.size; ++r) {
          if (in.sa[r] < 0 || in.sa[r] >= m_codes) throw std::invalid_argument("sensitive code out of range");
          ++reference[static_cast<size_t>(in.sa[r])];
        }
        // Optional reference distribution (counts of every code, e.g. the whole table's when the rows are one
        // part of it): the models then hold every class to it instead of to these rows' own distribution.
        if (!reference_counts.is_none()) {
          if (!py::isinstance<CArray<int64_t>>(reference_counts))
            throw py::type_error("reference must be a C-contiguous int64 array");
          const auto ref_arr = reference_counts.cast<CArray<int64_t>>();
          const auto ref = span_of(ref_arr, "reference", m_codes);
          for (int64_t c = 0; c < m_codes; ++c) {
            if (ref[c] < reference[static_cast<size_t>(c)])
              throw std::invalid_argument("reference counts must cover the rows' own sensitive counts");
            reference[static_cast<size_t>(c)] = ref[c];
          }
        }
        // Model specs: ("k", k), ("t", t) (ordered EMD, or hierarchical when a hierarchy is given). Further
        // models (LMondrian's beta-likeness, DMondrian's delta-disclosure) add a ClassModel and a name here.
        std::vector<std::unique_ptr<mondrian::ClassModel>> owned;
        for (const auto& [name, value] : models) {
          if (name == "k")
            owned.push_back(std::make_unique<mondrian::KAnonymityModel>(static_cast<int64_t>(value)));
          else if (name == "t")
            owned.push_back(std::make_unique<mondrian::TClosenessModel>(reference, value, hp));
          else if (name == "beta_enhanced")  // LMondrian: enhanced beta-likeness
            owned.push_back(std::make_unique<mondrian::BetaLikenessModel>(reference, value, true));
          else if (name == "beta_basic")
            owned.push_back(std::make_unique<mondrian::BetaLikenessModel>(reference, value, false));
          else if (name == "delta_disclosure")  // DMondrian
            owned.push_back(std::make_unique<mondrian::DeltaDisclosureModel>(reference, value));
          else if (name == "beta_groups") {  // semantic / range-based beta-likeness over `groups` code ranges
            if (groups.is_none()) throw std::invalid_argument("model 'beta_groups' needs groups");
            if (!py::isinstance<CArray<int32_t>>(groups)) throw py::type_error("groups must be C-contiguous int32");
            const auto garr = groups.cast<CArray<int32_t>>();
            auto g = matrix_of(garr, "groups", -1, 2);
            std::vector<int32_t> ranges(g.data, g.data + g.rows * 2);
            for (int32_t x : ranges)
              if (x < 0 || x >= m_codes) throw std::invalid_argument("group range out of range");
            owned.push_back(std::make_unique<mondrian::GroupBetaLikenessModel>(reference, value, std::move(ranges)));
          } else
            throw std::invalid_argument("unknown Mondrian model '" + name + "'");
          in.models.push_back(owned.back().get());
        }
        in.interrupt = python_interrupt_hook();
        mondrian::MondrianOutput o;
        {
          py::gil_scoped_release nogil;
          o = mondrian::mondrian(in);
        }
        raise_for_status(o.status);
        return MondrianResult{to_numpy(std::move(o.labels)), o.n_classes, o.n_splits, o.n_refused};
      },
      py::arg("qi").noconvert(), py::arg("coord_values").noconvert(), py::arg("coord_offsets").noconvert(),
      py::arg("sa").noconvert(), py::arg("m"), py::arg("models"), py::arg("hierarchy") = py::none(),
      py::arg("groups") = py::none(), py::arg("qi_hierarchies") = py::none(), py::arg("reference") = py::none(),
      "Mondrian median splits kept only when every model accepts both halves; models are (name, value) pairs. "
      "qi_hierarchies (optional): per QI None or (parent, leaf_start, leaf_count) for hierarchy-based splits. "
      "reference (optional): int64 counts per sensitive code that the models measure against (default: the rows').");
}

}  // namespace anoncore::bindings

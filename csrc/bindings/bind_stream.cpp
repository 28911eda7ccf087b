// Bindings for anoncore::stream: the CASTLE state object. Validation of user input happens in
// anoncore.stream.castle; here only shapes/dtypes are checked.
#include <pybind11/stl.h>

#include <limits>
#include <tuple>

#include "anoncore/stream/castle.hpp"
#include "common.hpp"

namespace anoncore::bindings {

namespace {
using stream::Castle;
using stream::CastleEvents;

template <class T>
py::array_t<T> matrix_to_numpy(std::vector<T>&& v, int64_t cols) {
  auto* owner = new std::vector<T>(std::move(v));
  py::capsule cap(owner, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  const auto c = static_cast<py::ssize_t>(cols);
  const py::ssize_t rows = c > 0 ? static_cast<py::ssize_t>(owner->size()) / c : 0;
  return py::array_t<T>({rows, c}, {static_cast<py::ssize_t>(sizeof(T)) * c, static_cast<py::ssize_t>(sizeof(T))},
                        owner->data(), cap);
}

py::dict events_to_dict(CastleEvents&& e, int64_t dn, int64_t dc) {
  py::dict d;
  const auto n = static_cast<int64_t>(e.position.size());
  d["position"] = to_numpy(std::move(e.position));
  d["pid"] = to_numpy(std::move(e.pid));
  d["emitted_at"] = to_numpy(std::move(e.emitted_at));
  d["gen_id"] = to_numpy(std::move(e.gen_id));
  d["mode"] = to_numpy(std::move(e.mode));
  if (dn == 0) {
    e.num_lo.clear();
    e.num_hi.clear();
  }
  d["num_lo"] = dn ? matrix_to_numpy(std::move(e.num_lo), dn) : py::array_t<double>(std::vector<py::ssize_t>{static_cast<py::ssize_t>(n), 0});
  d["num_hi"] = dn ? matrix_to_numpy(std::move(e.num_hi), dn) : py::array_t<double>(std::vector<py::ssize_t>{static_cast<py::ssize_t>(n), 0});
  d["cat_node"] = dc ? matrix_to_numpy(std::move(e.cat_node), dc) : py::array_t<int32_t>(std::vector<py::ssize_t>{static_cast<py::ssize_t>(n), 0});
  d["g_id"] = to_numpy(std::move(e.g_id));
  d["g_pids"] = to_numpy(std::move(e.g_pids));
  d["g_tuples"] = to_numpy(std::move(e.g_tuples));
  d["g_diversity"] = to_numpy(std::move(e.g_diversity));
  d["g_il"] = to_numpy(std::move(e.g_il));
  d["g_tau"] = to_numpy(std::move(e.g_tau));
  d["g_kept"] = to_numpy(std::move(e.g_kept));
  return d;
}

using CatSpec = std::tuple<CArray<int32_t>, CArray<int32_t>, CArray<int32_t>, int32_t>;
}  // namespace

void bind_stream(py::module_ m) {
  m.doc() = "stream kernels (CASTLE)";
  py::class_<Castle>(m, "Castle")
      .def(py::init([](int64_t k, int64_t delta, int64_t eta, int64_t mu, int64_t l, int64_t max_reuse,
                       double initial_tau, bool containment_range, bool outlier_suppression, uint64_t seed,
                       const CArray<double>& dom_lo,
                       const CArray<double>& dom_hi, const std::vector<CatSpec>& cats) {
             stream::CastleParams p;
             p.k = k;
             p.delta = delta;
             p.eta = eta;
             p.mu = mu;
             p.l = l;
             p.max_reuse = max_reuse;
             p.initial_tau = initial_tau;
             p.containment_range = containment_range;
             p.outlier_suppression = outlier_suppression;
             p.seed = seed;
             auto lo = span_of(dom_lo, "dom_lo");
             auto hi = span_of(dom_hi, "dom_hi", lo.size);
             std::vector<stream::CatHierarchy> hs;
             for (const auto& c : cats) {
               stream::CatHierarchy h;
               auto par = span_of(std::get<0>(c), "parent");
               auto ls = span_of(std::get<1>(c), "leaf_start", par.size);
               auto lc = span_of(std::get<2>(c), "leaf_count", par.size);
               h.parent.assign(par.begin(), par.end());
               h.leaf_start.assign(ls.begin(), ls.end());
               h.leaf_count.assign(lc.begin(), lc.end());
               h.n_leaves = std::get<3>(c);
               hs.push_back(std::move(h));
             }
             return Castle(p, std::vector<double>(lo.begin(), lo.end()), std::vector<double>(hi.begin(), hi.end()),
                           std::move(hs));
           }),
           py::arg("k"), py::arg("delta"), py::arg("eta"), py::arg("mu"), py::arg("l"), py::arg("max_reuse"),
           py::arg("initial_tau"), py::arg("containment_range"), py::arg("outlier_suppression"), py::arg("seed"), py::arg("dom_lo").noconvert(),
           py::arg("dom_hi").noconvert(), py::arg("cats"))
      .def(
          "push",
          [](Castle& c, const CArray<int64_t>& pos, const CArray<int64_t>& pid, const CArray<int32_t>& sa,
             const CArray<double>& num, const CArray<int32_t>& cat) {
            auto p = span_of(pos, "position");
            auto q = span_of(pid, "pid", p.size);
            auto s = span_of(sa, "sa", p.size);
            auto x = matrix_of(num, "num", p.size, c.d_num());
            auto y = matrix_of(cat, "cat", p.size, c.d_cat());
            {
              py::gil_scoped_release nogil;
              c.push(p, q, s, x, y);
            }
            return events_to_dict(c.take_events(), c.d_num(), c.d_cat());
          },
          py::arg("position").noconvert(), py::arg("pid").noconvert(), py::arg("sa").noconvert(),
          py::arg("num").noconvert(), py::arg("cat").noconvert(), "Push a batch; returns the events it caused.")
      .def(
          "flush",
          [](Castle& c, bool paper) {
            {
              py::gil_scoped_release nogil;
              if (paper) {
                c.flush_paper();
              } else {
                c.flush();
              }
            }
            return events_to_dict(c.take_events(), c.d_num(), c.d_cat());
          },
          py::arg("paper") = false, "End of stream (drain, or the thesis's protocol); returns the events.")
      .def("checkpoint", [](const Castle& c) { return py::bytes(c.checkpoint()); }, "State as versioned bytes.")
      .def(
          "restore_state",
          [](Castle& c, const py::bytes& b) {
            std::string s(b);
            py::gil_scoped_release nogil;
            c.restore_state(s);
          },
          py::arg("state"), "Load checkpoint state bytes into this fresh Castle (range-checked).")
      .def("pending_positions", [](const Castle& c) { return to_numpy(c.pending_positions()); },
           "Positions of the pending tuples in arrival order.")
      .def_property("n_threads", &Castle::n_threads, &Castle::set_n_threads,
                    "Threads for split^k's block scans (<= 0: all cores); not part of the state.")
      .def_property_readonly("tau", &Castle::tau)
      .def_property_readonly("n_open", &Castle::n_open)
      .def_property_readonly("n_pending", &Castle::n_pending)
      .def_property_readonly("n_reuse", &Castle::n_reuse)
      .def_property_readonly("n_arrivals", &Castle::n_arrivals)
      .def_property_readonly("last_position",
                             [](const Castle& c) -> py::object {
                               if (!c.has_last_position()) return py::none();
                               return py::int_(c.last_position());
                             })
      .def_property_readonly("d_num", &Castle::d_num)
      .def_property_readonly("d_cat", &Castle::d_cat)
      .def_property_readonly("k", [](const Castle& c) { return c.params().k; })
      .def_property_readonly("delta", [](const Castle& c) { return c.params().delta; })
      .def_property_readonly("eta", [](const Castle& c) { return c.params().eta; })
      .def_property_readonly("mu", [](const Castle& c) { return c.params().mu; })
      .def_property_readonly("l", [](const Castle& c) { return c.params().l; })
      .def_property_readonly("max_reuse", [](const Castle& c) { return c.params().max_reuse; })
      .def_property_readonly("initial_tau", [](const Castle& c) { return c.params().initial_tau; })
      .def_property_readonly("containment_range", [](const Castle& c) { return c.params().containment_range; })
      .def_property_readonly("outlier_suppression", [](const Castle& c) { return c.params().outlier_suppression; })
      .def_property_readonly("seed", [](const Castle& c) { return c.params().seed; });
}

}  // namespace anoncore::bindings

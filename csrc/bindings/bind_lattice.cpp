// Bindings for anoncore::lattice: the Engine (frequency sets, node predicates, optimal search).
#include <pybind11/stl.h>

#include "anoncore/lattice/lattice.hpp"
#include "common.hpp"

namespace anoncore::bindings {
using namespace pybind11::literals;
namespace {
using lattice::Engine;
using lattice::NodeResult;

/// Opaque Python handle of an Engine's BottomState (see lattice.hpp).
struct BottomHandle {
  std::shared_ptr<const lattice::BottomState> p;
};

py::dict node_dict(const NodeResult& r) {
  py::dict d;
  d["feasible"] = r.feasible;
  d["n_classes"] = r.n_classes;
  d["suppressed"] = r.suppressed;
  d["suppressed_size"] = r.suppressed_size;
  d["metric"] = r.metric;
  d["lower_bound"] = r.lower_bound;
  return d;
}

std::unique_ptr<Engine> make_engine(const CArray<int32_t>& codes, const std::vector<CArray<int32_t>>& gens,
                                    const CArray<int32_t>& heights, const std::vector<CArray<int64_t>>& leaf_counts,
                                    const std::vector<CArray<double>>& nu_bases, const CArray<int32_t>& sa_codes,
                                    int64_t m, const CArray<int32_t>& sa_parent, const CArray<int32_t>& sa_height,
                                    const CArray<int32_t>& crit_kind, const CArray<double>& crit_a,
                                    const CArray<double>& crit_b, int metric, int aggregate, double gs_factor,
                                    int64_t limit, int n_threads, bool packed, const BottomHandle* bottom) {
  auto X = matrix_of(codes, "codes");
  const size_t r = static_cast<size_t>(X.cols);
  if (gens.size() != r || leaf_counts.size() != r || nu_bases.size() != r)
    throw std::invalid_argument("one gen/leaf_count/nu_base array per quasi-identifier expected");
  auto hs = span_of(heights, "heights", X.cols);
  std::vector<lattice::QiInput> qis(r);
  for (size_t j = 0; j < r; ++j) {
    auto g = matrix_of(gens[j], "gen", -1, hs[static_cast<int64_t>(j)] + 1);
    qis[j].gen = Span<int32_t>{g.data, g.rows * g.cols};
    qis[j].height = hs[static_cast<int64_t>(j)];
    qis[j].leaf_count = span_of(leaf_counts[j], "leaf_count");
    qis[j].nu_base = span_of(nu_bases[j], "nu_base");
  }
  lattice::SensitiveInput sa{span_of(sa_codes, "sa_codes"), m, span_of(sa_parent, "sa_parent"),
                             span_of(sa_height, "sa_height")};
  auto ck = span_of(crit_kind, "crit_kind");
  auto ca = span_of(crit_a, "crit_a", ck.size);
  auto cb = span_of(crit_b, "crit_b", ck.size);
  std::vector<lattice::Criterion> crit;
  for (int64_t i = 0; i < ck.size; ++i) crit.push_back({static_cast<lattice::CriterionKind>(ck[i]), ca[i], cb[i]});
  lattice::MetricSpec ms{static_cast<lattice::MetricKind>(metric), static_cast<lattice::Aggregate>(aggregate), gs_factor};
  std::shared_ptr<const lattice::BottomState> reuse = bottom != nullptr ? bottom->p : nullptr;
  py::gil_scoped_release nogil;
  return std::make_unique<Engine>(X, std::move(qis), sa, std::move(crit), ms, limit, n_threads, packed,
                                  std::move(reuse));
}
}  // namespace

void bind_lattice(py::module_ m) {
  m.doc() = "lattice kernels: frequency sets with roll-up, node predicates, optimal search";
  py::class_<BottomHandle>(m, "BottomState",
                           "An Engine's table-derived build (bottom classes); reused by a later Engine on the same "
                           "table, hierarchies and sensitive column.");
  py::class_<Engine>(m, "Engine")
      .def(py::init(&make_engine), "codes"_a.noconvert(), "gens"_a, "heights"_a.noconvert(), "leaf_counts"_a,
           "nu_bases"_a, "sa_codes"_a.noconvert(), "m"_a, "sa_parent"_a.noconvert(), "sa_height"_a.noconvert(),
           "crit_kind"_a.noconvert(), "crit_a"_a.noconvert(), "crit_b"_a.noconvert(), "metric"_a, "aggregate"_a,
           "gs_factor"_a, "limit"_a, "n_threads"_a, "packed"_a = true, "bottom"_a = nullptr)
      .def("bottom_state", [](const Engine& e) { return BottomHandle{e.bottom_state()}; },
           "This Engine's BottomState, to build later Engines on the same table faster.")
      .def_property_readonly("reused_bottom", &Engine::reused_bottom)
      .def_property_readonly("n_qi", &Engine::n_qi)
      .def_property_readonly("n_rows", &Engine::n_rows)
      .def_property_readonly("bottom_classes", &Engine::bottom_classes)
      .def_property_readonly("heights", &Engine::heights)
      .def_property_readonly("predicate_monotone", &Engine::predicate_monotone)
      .def_property_readonly("metric_monotone", &Engine::metric_monotone)
      .def_property_readonly("evaluations", &Engine::evaluations)
      .def_property_readonly("rollup_work", &Engine::rollup_work)
      .def_property_readonly("primed_sources", &Engine::primed_sources)
      .def("evaluate", [](Engine& e, const CArray<int32_t>& lv) {
        auto s = span_of(lv, "levels", e.n_qi());
        NodeResult r;
        {
          py::gil_scoped_release nogil;
          r = e.evaluate(s);
        }
        return node_dict(r);
      }, "levels"_a.noconvert(), "Evaluate one node.")
      .def("evaluate_dm_cut", [](Engine& e, const CArray<int32_t>& lv, double cut) {
        auto s = span_of(lv, "levels", e.n_qi());
        NodeResult r;
        {
          py::gil_scoped_release nogil;
          r = e.evaluate_dm_cut(s, cut);
        }
        py::dict d = node_dict(r);
        d["partial"] = r.partial;
        return d;
      }, "levels"_a.noconvert(), "cut"_a,
         "The optimal search's evaluation under the DM / DM* cut (grouping stops once its bound exceeds cut).")
      .def("evaluate_many", [](Engine& e, const CArray<int32_t>& lv) {
        auto M = matrix_of(lv, "levels", -1, e.n_qi());
        std::vector<NodeResult> rs;
        {
          py::gil_scoped_release nogil;
          rs = e.evaluate_many(M);
        }
        py::list out;
        for (const auto& r : rs) out.append(node_dict(r));
        return out;
      }, "levels"_a.noconvert(), "Evaluate many nodes (parallel over nodes).")
      .def("cheap_lower_bound", [](const Engine& e, const CArray<int32_t>& lv) {
        return e.cheap_lower_bound(span_of(lv, "levels", e.n_qi()).data);
      }, "levels"_a.noconvert(), "Monotone lower bound of the objective without grouping.")
      .def("suppression_loss_bound", [](Engine& e, const CArray<int32_t>& lv) {
        auto s = span_of(lv, "levels", e.n_qi());
        py::gil_scoped_release nogil;
        return e.suppression_loss_bound(s);
      }, "levels"_a.noconvert(),
         "ARX Loss of the node with only the classes below the minimal size suppressed (lower bound).")
      .def("classify", [](Engine& e, const CArray<int32_t>& lv, bool clean) {
        auto s = span_of(lv, "levels", e.n_qi());
        CArray<int64_t> labels(e.n_rows());
        py::array_t<bool> sup(e.n_rows());
        MutSpan<int64_t> ls{labels.mutable_data(), e.n_rows()};
        MutSpan<uint8_t> ss{reinterpret_cast<uint8_t*>(sup.mutable_data()), e.n_rows()};
        NodeResult r;
        std::vector<int64_t> first;
        {
          py::gil_scoped_release nogil;
          r = e.classify(s, ls, ss, &first, clean);
        }
        CArray<int64_t> fa(static_cast<py::ssize_t>(first.size()));
        std::copy(first.begin(), first.end(), fa.mutable_data());
        return py::make_tuple(node_dict(r), labels, sup, fa);
      }, "levels"_a.noconvert(), "clean"_a = false,
         "Row labels and suppression flags of a node, and the first row of every class (in label order); "
         "clean=True: the caller knows the node suppresses nothing (no class judged, only n_classes set).")
      .def("optimal", [](Engine& e, bool with_trace, bool sweep) {
        std::vector<lattice::TraceEntry> trace;
        lattice::SearchResult res;
        {
          py::gil_scoped_release nogil;
          res = e.optimal(python_interrupt_hook(), with_trace ? &trace : nullptr, sweep);
        }
        raise_for_status(res.status);
        py::dict d;
        d["feasible"] = res.status == Status::Ok;
        d["levels"] = res.best;
        d["result"] = node_dict(res.best_result);
        d["evaluated"] = res.evaluated;
        d["inferred"] = res.inferred;
        d["popped"] = res.popped;
        d["swept"] = res.swept;
        py::list tr;
        for (const auto& t : trace) tr.append(py::make_tuple(t.levels, t.how, node_dict(t.result)));
        d["trace"] = tr;
        return d;
      }, "with_trace"_a = false, "sweep"_a = true,
         "Globally optimal node (branch and bound with predictive tagging); sweep=False keeps the queue.");
  m.def("level_sizes", [](const CArray<int32_t>& h) { return lattice::level_sizes(span_of(h, "heights")); },
        "heights"_a.noconvert(), "Number of lattice nodes per height.");
}
}  // namespace anoncore::bindings

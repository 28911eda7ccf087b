// Bindings for anoncore::lattice: the Engine (frequency sets, node predicates, optimal search), built from a bound
// EngineConfig (named fields); evaluations return bound NodeResult / SearchResult structs.
#include <pybind11/stl.h>

#include <optional>
#include <string>

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

/// The Engine's configuration, as a bound struct with named fields (Python fills it; LatticeProblem.build).
struct EngineConfig {
  CArray<int32_t> codes;                   // (n_rows, width) leaf codes: the quasi-identifiers' columns
  CArray<int64_t> qi_columns;              // (r,) the quasi-identifiers' columns of codes; empty: every column
  std::vector<CArray<int32_t>> gens;       // per QI: (n_leaves, height + 1) dense code of each leaf per level
  CArray<int32_t> heights;                 // (r,)
  std::vector<CArray<int64_t>> leaf_counts;  // per QI: leaves under each dense code, concatenated by level
  std::vector<CArray<double>> nu_bases;    // per QI: non-uniform entropy term per level (or empty)
  CArray<int32_t> sa_codes;                // (n_rows,) sensitive codes, empty when no criterion needs them
  int64_t m = 0;                           // sensitive values
  CArray<int32_t> sa_parent, sa_height;    // the sensitive attribute's hierarchy (hierarchical EMD) or empty
  std::vector<lattice::Criterion> criteria;
  int metric = 0;                          // lattice::MetricKind
  int aggregate = 0;                       // lattice::Aggregate
  double gs_factor = 0.5;
  std::vector<double> weights;             // Loss's attribute weights (one per QI) or empty
  int64_t limit = 0;                       // absolute suppression limit
  int n_threads = 1;
  bool packed = true;                      // allow the packed 64-bit class keys
  std::optional<BottomHandle> bottom;      // a BottomState of an earlier Engine on the same table
  CArray<int64_t> counts;                  // (n_items,) > 0: codes/sa_codes are weighted items (a frequency
                                           // set, anoncore.distributed); empty: one row each
};

/// The optimal search's result with its trace (bound as SearchResult).
struct SearchOutput {
  lattice::SearchResult res;
  std::vector<lattice::TraceEntry> trace;
};

std::unique_ptr<Engine> make_engine(const EngineConfig& c) {
  auto X = matrix_of(c.codes, "codes");
  lattice::QiRows rows = lattice::QiRows::all(X);
  if (c.qi_columns.size() > 0) {
    auto cols = span_of(c.qi_columns, "qi_columns");
    rows.cols.assign(cols.begin(), cols.end());
    for (int64_t j : rows.cols)
      if (j < 0 || j >= X.cols) throw std::invalid_argument("qi_columns: a column outside codes");
  }
  const size_t r = rows.cols.size();
  if (c.gens.size() != r || c.leaf_counts.size() != r || c.nu_bases.size() != r)
    throw std::invalid_argument("one gen/leaf_count/nu_base array per quasi-identifier expected");
  auto hs = span_of(c.heights, "heights", static_cast<int64_t>(r));
  std::vector<lattice::QiInput> qis(r);
  for (size_t j = 0; j < r; ++j) {
    auto g = matrix_of(c.gens[j], "gen", -1, hs[static_cast<int64_t>(j)] + 1);
    qis[j].gen = Span<int32_t>{g.data, g.rows * g.cols};
    qis[j].height = hs[static_cast<int64_t>(j)];
    qis[j].leaf_count = span_of(c.leaf_counts[j], "leaf_count");
    qis[j].nu_base = span_of(c.nu_bases[j], "nu_base");
  }
  lattice::SensitiveInput sa{span_of(c.sa_codes, "sa_codes"), c.m, span_of(c.sa_parent, "sa_parent"),
                             span_of(c.sa_height, "sa_height")};
  lattice::MetricSpec ms{static_cast<lattice::MetricKind>(c.metric), static_cast<lattice::Aggregate>(c.aggregate),
                         c.gs_factor, c.weights};
  std::shared_ptr<const lattice::BottomState> reuse = c.bottom ? c.bottom->p : nullptr;
  std::vector<lattice::Criterion> crit = c.criteria;
  if (c.counts.size() > 0) {
    if (c.qi_columns.size() > 0) throw std::invalid_argument("qi_columns: items (counts) take every column");
    auto w = span_of(c.counts, "counts", X.rows);
    py::gil_scoped_release nogil;
    return std::make_unique<Engine>(X, w, std::move(qis), sa, std::move(crit), ms, c.limit, c.n_threads, c.packed);
  }
  py::gil_scoped_release nogil;
  return std::make_unique<Engine>(rows, std::move(qis), sa, std::move(crit), ms, c.limit, c.n_threads, c.packed,
                                  std::move(reuse));
}

void bind_results(py::module_ m) {
  py::class_<lattice::Criterion>(m, "Criterion", "One privacy model instance: kernel id (models.hpp), a, b.")
      .def(py::init([](int kind, double a, double b) {
             if (kind < 0 || kind >= criteria::kNumModels || !criteria::kModels[kind].lattice)
               throw std::invalid_argument("the lattice does not judge the model of kernel id " + std::to_string(kind));
             return lattice::Criterion{static_cast<criteria::Model>(kind), a, b};
           }),
           "kind"_a, "a"_a, "b"_a = 0.0)
      .def_property_readonly("kind", [](const lattice::Criterion& c) { return static_cast<int>(c.kind); })
      .def_readonly("a", &lattice::Criterion::a)
      .def_readonly("b", &lattice::Criterion::b);
  py::class_<EngineConfig>(m, "EngineConfig", "The Engine's inputs, by name (see bind_lattice.cpp).")
      .def(py::init<>())
      .def_readwrite("codes", &EngineConfig::codes)
      .def_readwrite("qi_columns", &EngineConfig::qi_columns)
      .def_readwrite("gens", &EngineConfig::gens)
      .def_readwrite("heights", &EngineConfig::heights)
      .def_readwrite("leaf_counts", &EngineConfig::leaf_counts)
      .def_readwrite("nu_bases", &EngineConfig::nu_bases)
      .def_readwrite("sa_codes", &EngineConfig::sa_codes)
      .def_readwrite("m", &EngineConfig::m)
      .def_readwrite("sa_parent", &EngineConfig::sa_parent)
      .def_readwrite("sa_height", &EngineConfig::sa_height)
      .def_readwrite("criteria", &EngineConfig::criteria)
      .def_readwrite("metric", &EngineConfig::metric)
      .def_readwrite("aggregate", &EngineConfig::aggregate)
      .def_readwrite("gs_factor", &EngineConfig::gs_factor)
      .def_readwrite("weights", &EngineConfig::weights)
      .def_readwrite("limit", &EngineConfig::limit)
      .def_readwrite("n_threads", &EngineConfig::n_threads)
      .def_readwrite("packed", &EngineConfig::packed)
      .def_readwrite("bottom", &EngineConfig::bottom)
      .def_readwrite("counts", &EngineConfig::counts);
  py::class_<NodeResult>(m, "NodeResult", "What an evaluation of one node gives (see lattice.hpp).")
      .def_readonly("feasible", &NodeResult::feasible)
      .def_readonly("n_classes", &NodeResult::n_classes)
      .def_readonly("suppressed", &NodeResult::suppressed)
      .def_readonly("suppressed_size", &NodeResult::suppressed_size)
      .def_readonly("metric", &NodeResult::metric)
      .def_readonly("lower_bound", &NodeResult::lower_bound)
      .def_readonly("partial", &NodeResult::partial)
      .def("__repr__", [](const NodeResult& r) {
        return "NodeResult(feasible=" + std::string(r.feasible ? "True" : "False") +
               ", n_classes=" + std::to_string(r.n_classes) + ", suppressed=" + std::to_string(r.suppressed) +
               ", suppressed_size=" + std::to_string(r.suppressed_size) +
               ", metric=" + py::repr(py::float_(r.metric)).cast<std::string>() +
               ", lower_bound=" + py::repr(py::float_(r.lower_bound)).cast<std::string>() +
               ", partial=" + (r.partial ? "True" : "False") + ")";
      });
  py::class_<SearchOutput>(m, "SearchResult", "The optimal search's result (see lattice.hpp).")
      .def_property_readonly("feasible", [](const SearchOutput& o) { return o.res.status == Status::Ok; })
      .def_property_readonly("levels", [](const SearchOutput& o) { return o.res.best; })
      .def_property_readonly("result", [](const SearchOutput& o) { return o.res.best_result; })
      .def_property_readonly("evaluated", [](const SearchOutput& o) { return o.res.evaluated; })
      .def_property_readonly("inferred", [](const SearchOutput& o) { return o.res.inferred; })
      .def_property_readonly("popped", [](const SearchOutput& o) { return o.res.popped; })
      .def_property_readonly("swept", [](const SearchOutput& o) { return o.res.swept; })
      .def_property_readonly(
          "trace",
          [](const SearchOutput& o) {
            py::list tr;
            for (const auto& t : o.trace) tr.append(py::make_tuple(t.levels, t.how, t.result));
            return tr;
          },
          "(levels, how, NodeResult) per step; how: 0 evaluated, 1 inferred feasible, 2 inferred infeasible.");
}
}  // namespace

void bind_lattice(py::module_ m) {
  m.doc() = "lattice kernels: frequency sets with roll-up, node predicates, optimal search";
  py::class_<BottomHandle>(m, "BottomState",
                           "An Engine's table-derived build (bottom classes); reused by a later Engine on the same "
                           "table, hierarchies and sensitive column.");
  bind_results(m);
  py::class_<Engine>(m, "Engine")
      .def(py::init(&make_engine), "config"_a)
      .def("bottom_state", [](const Engine& e) { return BottomHandle{e.bottom_state()}; },
           "This Engine's BottomState, to build later Engines on the same table faster.")
      .def_property_readonly("reused_bottom", &Engine::reused_bottom)
      .def_property_readonly("n_qi", &Engine::n_qi)
      .def_property_readonly("n_rows", &Engine::n_rows)
      .def_property_readonly("n_items", &Engine::n_items)
      .def_property_readonly("bottom_classes", &Engine::bottom_classes)
      .def("bottom_histograms", [](const Engine& e) {
        std::vector<int64_t> hoff, hcnt;
        std::vector<int32_t> hval;
        e.bottom_histograms(hoff, hval, hcnt);
        return py::make_tuple(to_numpy(std::move(hoff)), to_numpy(std::move(hval)), to_numpy(std::move(hcnt)));
      }, "The bottom classes' sensitive histograms (hoff, hval, hcnt): class c's values hval[hoff[c]:hoff[c+1]] "
         "in the order of their first rows, their counts hcnt[...]; empty arrays without histograms.")
      .def_property_readonly("heights", &Engine::heights)
      .def_property_readonly("predicate_monotone", &Engine::predicate_monotone)
      .def_property_readonly("metric_monotone", &Engine::metric_monotone)
      .def_property_readonly("evaluations", &Engine::evaluations)
      .def_property_readonly("rollup_work", &Engine::rollup_work)
      .def_property_readonly("phase_seconds", [](const Engine& e) {
        py::dict d;
        for (const auto& [name, sec] : e.phase_seconds()) d[py::str(name)] = sec;
        return d;
      }, "Seconds spent so far per phase: build (the engine's construction), group (the roll-ups' groupings), "
         "masks (value masks), merge (sensitive histograms), judge (the criteria; deferred merges count as merge), "
         "each less the phases timed inside it; each phase but build has a '_par' twin, its calls on several "
         "threads (large sets), timed once on the calling thread. Nodes judged in a parallel batch add their "
         "threads' times.")
      .def_property_readonly("primed_sources", &Engine::primed_sources)
      .def_property("parallel_grain", &Engine::parallel_grain, &Engine::set_parallel_grain)
      .def_property("load_aware", &Engine::load_aware, &Engine::set_load_aware)
      .def("set_table_criteria", [](Engine& e, double avg_risk, double sample_uniqueness,
                                    std::vector<int64_t> min_kept_size) {
        e.set_table_criteria(lattice::TableCriteria{avg_risk, sample_uniqueness, std::move(min_kept_size)});
      }, "avg_risk"_a = -1.0, "sample_uniqueness"_a = -1.0, "min_kept_size"_a = std::vector<int64_t>{},
         "Table-level criteria judged on each node's published classes (negative / empty: not set); "
         "min_kept_size has one entry per suppressed-row count 0..limit. Before any evaluation.")
      .def("set_population", &Engine::set_population, "population"_a, "kmap_k"_a = 0, "delta_min"_a = -1.0,
           "delta_max"_a = 2.0, py::keep_alive<1, 2>(),
           "Exact k-map / delta-presence with a research subset: this Engine's rows are the subset, population "
           "an Engine on the population table (same hierarchies, packed keys). Before any evaluation.")
      .def("evaluate", [](Engine& e, const CArray<int32_t>& lv, bool early) {
        auto s = span_of(lv, "levels", e.n_qi());
        py::gil_scoped_release nogil;
        return e.evaluate(s, early);
      }, "levels"_a.noconvert(), "early"_a = false,
         "Evaluate one node; early=True: judged as the search judges (stopped once infeasible: suppressed and "
         "suppressed_size are then lower bounds).")
      .def("evaluate_dm_cut", [](Engine& e, const CArray<int32_t>& lv, double cut) {
        auto s = span_of(lv, "levels", e.n_qi());
        py::gil_scoped_release nogil;
        return e.evaluate_dm_cut(s, cut);
      }, "levels"_a.noconvert(), "cut"_a,
         "The optimal search's evaluation under the DM / DM* cut (grouping stops once its bound exceeds cut).")
      .def("evaluate_many", [](Engine& e, const CArray<int32_t>& lv) {
        auto M = matrix_of(lv, "levels", -1, e.n_qi());
        py::gil_scoped_release nogil;
        return e.evaluate_many(M);
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
        CArray<int64_t> labels(e.n_items());
        py::array_t<bool> sup(e.n_items());
        MutSpan<int64_t> ls{labels.mutable_data(), e.n_items()};
        MutSpan<uint8_t> ss{reinterpret_cast<uint8_t*>(sup.mutable_data()), e.n_items()};
        NodeResult r;
        std::vector<int64_t> first;
        {
          py::gil_scoped_release nogil;
          r = e.classify(s, ls, ss, &first, clean);
        }
        CArray<int64_t> fa(static_cast<py::ssize_t>(first.size()));
        std::copy(first.begin(), first.end(), fa.mutable_data());
        return py::make_tuple(r, labels, sup, fa);
      }, "levels"_a.noconvert(), "clean"_a = false,
         "Row labels and suppression flags of a node, and the first row of every class (in label order); "
         "clean=True: the caller knows the node suppresses nothing (no class judged, only n_classes set).")
      .def("optimal", [](Engine& e, bool with_trace, bool sweep) {
        SearchOutput o;
        {
          py::gil_scoped_release nogil;
          o.res = e.optimal(python_interrupt_hook(), with_trace ? &o.trace : nullptr, sweep);
        }
        raise_for_status(o.res.status);
        return o;
      }, "with_trace"_a = false, "sweep"_a = true,
         "Globally optimal node (branch and bound with predictive tagging); sweep=False keeps the queue.");
  m.def("group_keys", [](const CArray<uint64_t>& keys, const CArray<int64_t>& weights, int n_threads, bool rows,
                         int64_t grain) {
        const CArray<uint64_t> ka = aligned(keys);
        const CArray<int64_t> wa = aligned(weights);
        auto ks = span_of(ka, "keys");
        auto ws = span_of(wa, "weights");
        lattice::KeyGroups g;
        {
          py::gil_scoped_release nogil;
          g = lattice::group_keys(ks, ws, n_threads, rows, grain);
        }
        return py::make_tuple(to_numpy(std::move(g.ids)), to_numpy(std::move(g.keys)), to_numpy(std::move(g.counts)));
      }, "keys"_a.noconvert(), "weights"_a.noconvert(), "n_threads"_a, "rows"_a = true, "grain"_a = 65536,
        "The lattice engine's packed grouping: (ids, keys, counts) of the keys' groups by first appearance "
        "(weights empty: 1 each); one thread runs the serial grouping, more the parallel one as for the bottom's "
        "rows (rows=True) or a roll-up's classes (same output).");
  m.def("level_sizes", [](const CArray<int32_t>& h) { return lattice::level_sizes(span_of(h, "heights")); },
        "heights"_a.noconvert(), "Number of lattice nodes per height.");
}
}  // namespace anoncore::bindings

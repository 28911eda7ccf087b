// Bindings for anoncore::release: TDS4SA on a problem encoded by anoncore.release (a dict of arrays).
#include "anoncore/release/tds4sa.hpp"
#include "common.hpp"

#include <pybind11/stl.h>

namespace anoncore::bindings {

namespace {
// Strict typed access to one dict entry: a C-contiguous array of exactly T (no silent copies).
template <class T>
CArray<T> arr(const py::dict& d, const char* name) {
  py::object o = d[name];
  if (!py::isinstance<CArray<T>>(o) || !py::array(o).dtype().is(py::dtype::of<T>()))
    throw py::type_error(std::string("release problem entry '") + name + "' has the wrong dtype or layout");
  return o.cast<CArray<T>>();
}

release::ReleaseView release_view(const py::dict& d, int32_t n_items) {
  release::ReleaseView r;
  r.group_nodes = matrix_of(arr<int32_t>(d, "group_nodes"), "group_nodes");
  r.group_off = span_of(arr<int64_t>(d, "group_off"), "group_off", r.group_nodes.rows + 1);
  r.part_size = span_of(arr<int64_t>(d, "part_size"), "part_size");
  r.part_x = span_of(arr<int64_t>(d, "part_x"), "part_x", r.part_size.size);
  r.part_y = matrix_of(arr<int64_t>(d, "part_y"), "part_y", r.part_size.size, n_items);
  r.n_x = d["n_x"].cast<int64_t>();
  r.y_mode = d["y_mode"].cast<int32_t>();
  r.yset_off = span_of(arr<int64_t>(d, "yset_off"), "yset_off");
  r.yset = span_of(arr<int64_t>(d, "yset"), "yset");
  r.join_in_x = d["join_in_x"].cast<bool>();
  if (r.group_off[r.group_nodes.rows] != r.part_size.size) throw std::invalid_argument("bad group_off");
  return r;
}
}  // namespace

py::dict run_tds4sa(const py::dict& d) {
  release::Problem pb;
  pb.codes = matrix_of(arr<int32_t>(d, "codes"), "codes");
  pb.n1 = pb.codes.rows;
  pb.attr_tax = d["attr_tax"].cast<std::vector<int32_t>>();
  pb.attr_nvals = d["attr_nvals"].cast<std::vector<int32_t>>();
  pb.raw_join = matrix_of(arr<int32_t>(d, "raw_join"), "raw_join", pb.n1);
  pb.slot_src = d["slot_src"].cast<std::vector<int32_t>>();
  for (py::handle h : d["tax"].cast<py::list>()) {
    auto t = h.cast<py::dict>();
    pb.tax.push_back({span_of(arr<int32_t>(t, "parent"), "parent"), span_of(arr<int32_t>(t, "leaf_start"), "leaf_start"),
                      span_of(arr<int32_t>(t, "leaf_count"), "leaf_count")});
  }
  auto cons = matrix_of(arr<int64_t>(d, "cons"), "cons", -1, 8);
  for (int64_t i = 0; i < cons.rows; ++i)
    pb.cons.push_back({static_cast<int32_t>(cons(i, 0)), static_cast<int32_t>(cons(i, 1)), static_cast<int32_t>(cons(i, 2)),
                       static_cast<int32_t>(cons(i, 3)), static_cast<int32_t>(cons(i, 4)), static_cast<int32_t>(cons(i, 5)),
                       cons(i, 6), cons(i, 7)});
  pb.pair_a = span_of(arr<int32_t>(d, "pair_a"), "pair_a");
  pb.pair_b = span_of(arr<int32_t>(d, "pair_b"), "pair_b", pb.pair_a.size);
  pb.n_items = d["n_items"].cast<int32_t>();
  for (py::handle h : d["releases"].cast<py::list>()) pb.rel.push_back(release_view(h.cast<py::dict>(), pb.n_items));
  pb.cls = span_of(arr<int32_t>(d, "cls"), "cls", pb.n1);
  pb.n_cls = d["n_cls"].cast<int32_t>();
  pb.model = d["model"].cast<int32_t>();
  pb.k_anon = d["k_anon"].cast<int64_t>();
  pb.y1_mode = d["y1_mode"].cast<int32_t>();
  pb.y1_id = span_of(arr<int64_t>(d, "y1_id"), "y1_id");
  pb.item_side = span_of(arr<int32_t>(d, "item_side"), "item_side", pb.n_items);
  pb.item_k = span_of(arr<double>(d, "item_k"), "item_k", pb.n_items);
  pb.y1 = matrix_of(arr<uint8_t>(d, "y1"), "y1", pb.n1, pb.n_items);
  pb.metric = d["metric"].cast<int32_t>();
  pb.privloss = d["privloss"].cast<int32_t>();
  pb.require_gain = d["require_gain"].cast<bool>();
  pb.force_general = d["force_general"].cast<bool>();
  pb.max_iter = d["max_iter"].cast<int64_t>();
  if (static_cast<int64_t>(pb.attr_tax.size()) != pb.codes.cols || pb.attr_nvals.size() != pb.attr_tax.size())
    throw std::invalid_argument("attr_tax/attr_nvals must have one entry per X1 attribute");
  release::Output out;
  {
    py::gil_scoped_release nogil;
    out = release::tds4sa(pb, python_interrupt_hook());
  }
  raise_for_status(out.status);
  py::dict r;
  const auto m1 = static_cast<py::ssize_t>(pb.codes.cols);
  r["gen"] = to_numpy(std::move(out.gen)).reshape({static_cast<py::ssize_t>(pb.n1), m1});
  py::list lo, hi;
  for (auto& v : out.iv_lo) lo.append(to_numpy(std::move(v)));
  for (auto& v : out.iv_hi) hi.append(to_numpy(std::move(v)));
  r["iv_lo"] = lo;
  r["iv_hi"] = hi;
  py::list trace, rem;
  for (const auto& s : out.trace)
    trace.append(py::make_tuple(s.attr, s.node, s.split, s.score, s.gain, s.privloss, s.value_after));
  for (const auto& c : out.remaining) rem.append(py::make_tuple(c.attr, c.node, c.split, c.state, c.gain, c.value));
  r["trace"] = trace;
  r["remaining"] = rem;
  r["feasible"] = out.status != Status::Infeasible;
  r["root_value"] = out.root_value;
  r["final_value"] = out.final_value;
  r["final_item_l"] = out.final_item_l;
  r["refine_accesses"] = out.refine_accesses;
  r["evaluations"] = out.evaluations;
  r["pairs_probed"] = out.pairs_probed;
  r["n_partitions"] = out.n_partitions;
  r["t_pre"] = out.t_pre;
  r["t_gen"] = out.t_gen;
  r["case1"] = out.case1;
  return r;
}

void bind_release(py::module_ m) {
  m.doc() = "release kernels: TDS4SA (sequential releases)";
  m.def("tds4sa", &run_tds4sa, py::arg("problem"), "Run TDS4SA on an encoded problem (a dict of arrays).");
}

}  // namespace anoncore::bindings

// What the two-phase bindings share: the sensitive-attribute hierarchy argument (bind_sabre.cpp,
// bind_sabre_w.cpp) and the end-to-end result of SABRE and BUREL (bind_sabre.cpp, bind_burel.cpp).
#pragma once

#include <memory>
#include <utility>

#include "anoncore/twophase/distance_adapter.hpp"
#include "anoncore/twophase/pipeline.hpp"
#include "common.hpp"

namespace anoncore::bindings {

/// Hierarchy arrays (parent, height, leaf_start, leaf_count) as int32 C arrays, kept alive by the holder.
struct HierarchyArg {
  CArray<int32_t> parent, height, leaf_start, leaf_count;
  twophase::HierarchyView view;
};

/// nullptr for None; otherwise the checked views of the 4-tuple (n_leaves must fit the hierarchy).
inline std::unique_ptr<HierarchyArg> hierarchy_arg(const py::object& obj, int64_t n_leaves) {
  if (obj.is_none()) return nullptr;
  auto t = obj.cast<py::tuple>();
  if (t.size() != 4) throw std::invalid_argument("hierarchy must be (parent, height, leaf_start, leaf_count)");
  auto h = std::make_unique<HierarchyArg>();
  CArray<int32_t>* slots[4] = {&h->parent, &h->height, &h->leaf_start, &h->leaf_count};
  for (size_t i = 0; i < 4; ++i) {
    if (!py::isinstance<CArray<int32_t>>(t[i])) throw py::type_error("hierarchy arrays must be C-contiguous int32");
    *slots[i] = t[i].cast<CArray<int32_t>>();
  }
  h->view.parent = span_of(h->parent, "parent");
  const int64_t nn = h->view.parent.size;
  h->view.height = span_of(h->height, "height", nn);
  h->view.leaf_start = span_of(h->leaf_start, "leaf_start", nn);
  h->view.leaf_count = span_of(h->leaf_count, "leaf_count", nn);
  if (n_leaves < 1 || n_leaves > nn) throw std::invalid_argument("n_leaves inconsistent with the hierarchy");
  h->view.n_leaves = n_leaves;
  return h;
}

/// EC-size tree leaves as an int64 array of shape (n_classes, n_buckets): rows per class and bucket.
inline py::array_t<int64_t> leaves_array(twophase::EcLeaves&& l) {
  const int64_t rows = l.n_leaves(), cols = l.n_buckets;
  auto flat = to_numpy(std::move(l.counts));
  return flat.reshape({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)});
}

/// What sabre and burel return (bound once, as _core.sabre.TwoPhaseResult): the row labels, the bucketization
/// (the dict their bucketize function gives), the EC recipes and the EC-size tree's counters, the Hilbert bits,
/// and the phase timings (bucketize, EC tree, keys, retrieve).
struct TwoPhaseResult {
  py::array_t<int64_t> labels;
  py::dict buckets;
  int64_t n_tree_nodes = 0, n_rejected = 0;
  py::array_t<int64_t> leaves;
  int hilbert_bits = 0;
  py::tuple seconds;
};

template <class B>
TwoPhaseResult two_phase_result(twophase::TwoPhaseOutput<B>&& o, py::dict buckets) {
  TwoPhaseResult r;
  r.labels = to_numpy(std::move(o.labels));
  r.buckets = std::move(buckets);
  r.n_tree_nodes = o.leaves.n_nodes;
  r.n_rejected = o.leaves.n_rejected;
  r.leaves = leaves_array(std::move(o.leaves));
  r.hilbert_bits = o.hilbert_bits;
  r.seconds = py::make_tuple(o.seconds_bucketize, o.seconds_ec_tree, o.seconds_keys, o.seconds_retrieve);
  return r;
}

inline void bind_two_phase_result(py::module_ m) {
  py::class_<TwoPhaseResult>(m, "TwoPhaseResult", "SABRE's or BUREL's labels, buckets, EC recipes and timings.")
      .def_readonly("labels", &TwoPhaseResult::labels)
      .def_readonly("buckets", &TwoPhaseResult::buckets)
      .def_readonly("n_tree_nodes", &TwoPhaseResult::n_tree_nodes)
      .def_readonly("n_rejected", &TwoPhaseResult::n_rejected)
      .def_readonly("leaves", &TwoPhaseResult::leaves)
      .def_readonly("hilbert_bits", &TwoPhaseResult::hilbert_bits)
      .def_readonly("seconds", &TwoPhaseResult::seconds);
}

}  // namespace anoncore::bindings

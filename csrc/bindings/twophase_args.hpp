// Argument conversion shared by the bindings that take a sensitive-attribute hierarchy for the two-phase kernels
// (bind_twophase.cpp, bind_sabre_w.cpp).
#pragma once

#include <memory>

#include "anoncore/twophase/distance_adapter.hpp"
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

}  // namespace anoncore::bindings

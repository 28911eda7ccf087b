// Bindings for anoncore::distance: EMD / Hellinger / KL / JS (class-vectorised and pairwise) and SABRE bounds.
#include "anoncore/distance/emd.hpp"
#include "anoncore/distance/sabre_bounds.hpp"
#include "common.hpp"

namespace anoncore::bindings {
namespace {

using distance::HierarchyView;

struct ClassStats {
  Matrix<int64_t> hist;
  Span<int64_t> sizes;
  Span<int64_t> reference;
};

/// The exact kernels form products of two counts in int64: totals must stay below 2^31.
void check_total(Span<int64_t> reference) {
  int64_t total = 0;
  for (int64_t v = 0; v < reference.size; ++v) {
    if (reference[v] < 0) throw std::invalid_argument("reference counts must be non-negative");
    total += reference[v];
  }
  if (total <= 0 || total >= (int64_t{1} << 31))
    throw std::invalid_argument("the reference total must be in [1, 2^31)");
}

ClassStats class_stats(const CArray<int64_t>& hist, const CArray<int64_t>& sizes, const CArray<int64_t>& reference) {
  auto hv = matrix_of(hist, "hist");
  ClassStats s{hv, span_of(sizes, "sizes", hv.rows), span_of(reference, "reference", hv.cols)};
  check_total(s.reference);
  return s;
}

HierarchyView hierarchy_view(const CArray<int32_t>& parent, const CArray<int32_t>& height, int64_t n_leaves,
                             const CArray<int32_t>* leaf_start = nullptr, const CArray<int32_t>* leaf_count = nullptr) {
  HierarchyView h;
  h.parent = span_of(parent, "parent");
  h.height = span_of(height, "height", h.parent.size);
  if (h.parent.size < 1 || n_leaves < 1 || n_leaves > h.parent.size)
    throw std::invalid_argument("hierarchy arrays are inconsistent with n_leaves");
  if (leaf_start) h.leaf_start = span_of(*leaf_start, "leaf_start", h.parent.size);
  if (leaf_count) h.leaf_count = span_of(*leaf_count, "leaf_count", h.parent.size);
  h.n_leaves = n_leaves;
  return h;
}

using ClassKernel = void (*)(Matrix<int64_t>, Span<int64_t>, Span<int64_t>, MutSpan<double>, int);

template <ClassKernel K>
CArray<double> run_class_kernel(const CArray<int64_t>& hist, const CArray<int64_t>& sizes,
                                const CArray<int64_t>& reference, int n_threads) {
  auto s = class_stats(hist, sizes, reference);
  CArray<double> out(s.hist.rows);
  auto ov = mut_span_of(out, "out");
  {
    py::gil_scoped_release nogil;
    K(s.hist, s.sizes, s.reference, ov, n_threads);
  }
  return out;
}

using BaseClassFn = void (*)(Matrix<int64_t>, Span<int64_t>, Span<int64_t>, double, MutSpan<double>, int);

/// A per-class divergence in a log base (KL, JS) over (hist, sizes, reference), the GIL released.
template <BaseClassFn K>
CArray<double> run_class_kernel_base(const CArray<int64_t>& hist, const CArray<int64_t>& sizes,
                                     const CArray<int64_t>& reference, double base, int n_threads) {
  auto s = class_stats(hist, sizes, reference);
  CArray<double> out(s.hist.rows);
  auto ov = mut_span_of(out, "out");
  {
    py::gil_scoped_release nogil;
    K(s.hist, s.sizes, s.reference, base, ov, n_threads);
  }
  return out;
}

using PairFn = double (*)(Span<double>, Span<double>);

template <PairFn F>
double run_pair(const CArray<double>& p, const CArray<double>& q) {
  auto pv = span_of(p, "p");
  return F(pv, span_of(q, "q", pv.size));
}

/// The per-class kernels: every class histogram against one reference.
void bind_class_kernels(py::module_& m) {
  m.def("emd_equal_classes", &run_class_kernel<distance::emd_equal_classes>, py::arg("hist").noconvert(),
        py::arg("sizes").noconvert(), py::arg("reference").noconvert(), py::arg("n_threads") = 0,
        "Per-class EMD with equal ground distance.");
  m.def("emd_ordered_classes", &run_class_kernel<distance::emd_ordered_classes>, py::arg("hist").noconvert(),
        py::arg("sizes").noconvert(), py::arg("reference").noconvert(), py::arg("n_threads") = 0,
        "Per-class EMD with ordered ground distance over the values present in the reference.");
  m.def("hellinger_classes", &run_class_kernel<distance::hellinger_classes>, py::arg("hist").noconvert(),
        py::arg("sizes").noconvert(), py::arg("reference").noconvert(), py::arg("n_threads") = 0,
        "Per-class Hellinger distance (normalised by 1/sqrt(2)).");
  m.def(
      "emd_hierarchical_classes",
      [](const CArray<int64_t>& hist, const CArray<int64_t>& sizes, const CArray<int64_t>& reference,
         const CArray<int32_t>& parent, const CArray<int32_t>& height, int64_t n_leaves, int n_threads) {
        auto s = class_stats(hist, sizes, reference);
        auto h = hierarchy_view(parent, height, n_leaves);
        if (s.hist.cols != n_leaves) throw std::invalid_argument("hist must have one column per hierarchy leaf");
        CArray<double> out(s.hist.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          distance::emd_hierarchical_classes(s.hist, s.sizes, s.reference, h, ov, n_threads);
        }
        return out;
      },
      py::arg("hist").noconvert(), py::arg("sizes").noconvert(), py::arg("reference").noconvert(),
      py::arg("parent").noconvert(), py::arg("height").noconvert(), py::arg("n_leaves"), py::arg("n_threads") = 0,
      "Per-class EMD with hierarchical ground distance (integer-exact, one post-order pass).");
  m.def(
      "kl_classes", &run_class_kernel_base<distance::kl_classes>,
      py::arg("hist").noconvert(), py::arg("sizes").noconvert(), py::arg("reference").noconvert(), py::arg("base"),
      py::arg("n_threads") = 0, "Per-class KL(class || reference) in the given log base.");
  m.def(
      "js_classes", &run_class_kernel_base<distance::js_classes>,
      py::arg("hist").noconvert(), py::arg("sizes").noconvert(), py::arg("reference").noconvert(), py::arg("base"),
      py::arg("n_threads") = 0, "Per-class Jensen-Shannon divergence in the given log base.");
}

/// The row-batched EMD over a fixed global domain (SABRE_W's ground distance).
void bind_row_kernels(py::module_& m) {
  m.def(
      "emd_rows_ordered",
      [](const CArray<double>& q, const CArray<double>& p, int n_threads) {
        auto qv = matrix_of(q, "q");
        auto pv = span_of(p, "p", qv.cols);
        CArray<double> out(qv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          distance::emd_rows_ordered(qv, pv, ov, n_threads);
        }
        return out;
      },
      py::arg("q").noconvert(), py::arg("p").noconvert(), py::arg("n_threads") = 0,
      "Ordered EMD |i - j| / (m - 1) over the whole domain of each row of q against p (numpy's arithmetic).");
  m.def(
      "emd_rows_hierarchical",
      [](const CArray<double>& q, const CArray<double>& p, const CArray<int32_t>& parent,
         const CArray<int32_t>& height, const CArray<int32_t>& leaf_start, const CArray<int32_t>& leaf_count,
         int n_threads) {
        auto qv = matrix_of(q, "q");
        auto pv = span_of(p, "p", qv.cols);
        auto h = hierarchy_view(parent, height, qv.cols, &leaf_start, &leaf_count);
        CArray<double> out(qv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          distance::emd_rows_hierarchical(qv, pv, h, ov, n_threads);
        }
        return out;
      },
      py::arg("q").noconvert(), py::arg("p").noconvert(), py::arg("parent").noconvert(),
      py::arg("height").noconvert(), py::arg("leaf_start").noconvert(), py::arg("leaf_count").noconvert(),
      py::arg("n_threads") = 0,
      "Hierarchical EMD height(LCA)/height(root) of each row of q against p (numpy's arithmetic).");
}

/// The pairwise kernels: one distribution against another.
void bind_pair_kernels(py::module_& m) {
  m.def("emd_equal", &run_pair<distance::emd_equal>, py::arg("p").noconvert(), py::arg("q").noconvert(),
        "EMD with equal ground distance between two distributions.");
  m.def("emd_ordered", &run_pair<distance::emd_ordered>, py::arg("p").noconvert(), py::arg("q").noconvert(),
        "EMD with ordered ground distance between two distributions.");
  m.def("hellinger", &run_pair<distance::hellinger>, py::arg("p").noconvert(), py::arg("q").noconvert(),
        "Hellinger distance (normalised by 1/sqrt(2)).");
  m.def(
      "emd_hierarchical",
      [](const CArray<double>& p, const CArray<double>& q, const CArray<int32_t>& parent,
         const CArray<int32_t>& height, int64_t n_leaves) {
        auto pv = span_of(p, "p", n_leaves);
        auto qv = span_of(q, "q", n_leaves);
        auto h = hierarchy_view(parent, height, n_leaves);
        return distance::emd_hierarchical(pv, qv, h);
      },
      py::arg("p").noconvert(), py::arg("q").noconvert(), py::arg("parent").noconvert(),
      py::arg("height").noconvert(), py::arg("n_leaves"), "EMD with hierarchical ground distance.");
  m.def(
      "kl_divergence",
      [](const CArray<double>& p, const CArray<double>& q, double base) {
        auto pv = span_of(p, "p");
        return distance::kl_divergence(pv, span_of(q, "q", pv.size), base);
      },
      py::arg("p").noconvert(), py::arg("q").noconvert(), py::arg("base"), "KL(p || q) in the given log base.");
  m.def(
      "js_divergence",
      [](const CArray<double>& p, const CArray<double>& q, double base) {
        auto pv = span_of(p, "p");
        return distance::js_divergence(pv, span_of(q, "q", pv.size), base);
      },
      py::arg("p").noconvert(), py::arg("q").noconvert(), py::arg("base"), "JS(p, q) in the given log base.");
}

/// SABRE's bucket-level bounds and EMDs, and the exact EMD under a general ground distance.
void bind_bucket_kernels(py::module_& m) {
  m.def(
      "cet_upper_ordered",
      [](const CArray<int64_t>& reference, const CArray<int32_t>& bucket_of, int64_t n_buckets) {
        auto rv = span_of(reference, "reference");
        auto bv = span_of(bucket_of, "bucket_of", rv.size);
        CArray<double> out(n_buckets);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          distance::cet_upper_ordered(rv, bv, ov);
        }
        return out;
      },
      py::arg("reference").noconvert(), py::arg("bucket_of").noconvert(), py::arg("n_buckets"),
      "SABRE CET^U per bucket for an ordered SA.");
  m.def(
      "cet_upper_hierarchical",
      [](const CArray<int64_t>& reference, const CArray<int32_t>& bucket_of, int64_t n_buckets,
         const CArray<int32_t>& parent, const CArray<int32_t>& height, const CArray<int32_t>& leaf_start,
         const CArray<int32_t>& leaf_count, bool tight) {
        auto rv = span_of(reference, "reference");
        auto bv = span_of(bucket_of, "bucket_of", rv.size);
        auto h = hierarchy_view(parent, height, rv.size, &leaf_start, &leaf_count);
        CArray<double> out(n_buckets);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          distance::cet_upper_hierarchical(rv, bv, h, tight, ov);
        }
        return out;
      },
      py::arg("reference").noconvert(), py::arg("bucket_of").noconvert(), py::arg("n_buckets"),
      py::arg("parent").noconvert(), py::arg("height").noconvert(), py::arg("leaf_start").noconvert(),
      py::arg("leaf_count").noconvert(), py::arg("tight") = false, "SABRE CET^U per bucket for a categorical SA.");
  m.def(
      "bucket_emd_ordered",
      [](const CArray<int64_t>& counts, const CArray<int64_t>& totals, const CArray<int32_t>& lo,
         const CArray<int32_t>& hi, int64_t n_present, int n_threads) {
        auto cv = matrix_of(counts, "counts");
        auto tv = span_of(totals, "totals", cv.cols);
        auto lv = span_of(lo, "lo", cv.cols);
        auto hv = span_of(hi, "hi", cv.cols);
        CArray<double> out(cv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          distance::bucket_emd_ordered(cv, tv, lv, hv, n_present, ov, n_threads);
        }
        return out;
      },
      py::arg("counts").noconvert(), py::arg("totals").noconvert(), py::arg("lo").noconvert(),
      py::arg("hi").noconvert(), py::arg("n_present"), py::arg("n_threads") = 0,
      "SABRE bucket-level EMD per class, ordered SA (buckets are sorted rank intervals).");
  m.def(
      "bucket_emd_hierarchical",
      [](const CArray<int64_t>& counts, const CArray<int64_t>& totals, const CArray<int32_t>& bucket_node,
         const CArray<int32_t>& parent, const CArray<int32_t>& height, int64_t n_leaves, int n_threads) {
        auto cv = matrix_of(counts, "counts");
        auto tv = span_of(totals, "totals", cv.cols);
        auto bn = span_of(bucket_node, "bucket_node", cv.cols);
        auto h = hierarchy_view(parent, height, n_leaves);
        CArray<double> out(cv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          distance::bucket_emd_hierarchical(cv, tv, bn, h, ov, n_threads);
        }
        return out;
      },
      py::arg("counts").noconvert(), py::arg("totals").noconvert(), py::arg("bucket_node").noconvert(),
      py::arg("parent").noconvert(), py::arg("height").noconvert(), py::arg("n_leaves"), py::arg("n_threads") = 0,
      "SABRE bucket-level EMD per class, categorical SA (bucket nodes form an antichain).");
  m.def(
      "emd_general",
      [](const CArray<int64_t>& counts, const CArray<int64_t>& totals, const CArray<double>& ground, int n_threads) {
        auto cv = matrix_of(counts, "counts");
        auto tv = span_of(totals, "totals", cv.cols);
        auto gv = matrix_of(ground, "ground", cv.cols, cv.cols);
        CArray<double> out(cv.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          distance::emd_general(cv, tv, gv, ov, n_threads);
        }
        return out;
      },
      py::arg("counts").noconvert(), py::arg("totals").noconvert(), py::arg("ground").noconvert(),
      py::arg("n_threads") = 0, "Exact EMD per class under an arbitrary metric ground distance (transportation).");
}

}  // namespace

void bind_distance(py::module_ m) {
  m.doc() = "distance kernels: EMD, Hellinger, KL, JS, SABRE bucket bounds";
  bind_class_kernels(m);
  bind_row_kernels(m);
  bind_pair_kernels(m);
  bind_bucket_kernels(m);
}

}  // namespace anoncore::bindings

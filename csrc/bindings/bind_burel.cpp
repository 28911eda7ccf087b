// Bindings for BUREL (anoncore::twophase burel.hpp): DPpartition, biSplit, BUREL end to end, merge
// post-processing for semantic / range-based beta-likeness.
#include <pybind11/stl.h>

#include "anoncore/twophase/burel.hpp"
#include "common.hpp"
#include "twophase_args.hpp"

namespace anoncore::bindings {
namespace {

py::dict burel_buckets_dict(const twophase::BurelBuckets& b) {
  py::dict d;
  d["order"] = to_numpy(std::vector<int32_t>(b.order));
  d["dp_n"] = to_numpy(std::vector<int64_t>(b.dp_n));
  d["dp_s"] = to_numpy(std::vector<int64_t>(b.dp_s));
  d["bucket_of"] = to_numpy(std::vector<int32_t>(b.bucket_of));
  d["size"] = to_numpy(std::vector<int64_t>(b.size));
  d["min_count"] = to_numpy(std::vector<int64_t>(b.min_count));
  d["bound"] = to_numpy(std::vector<double>(b.bound));
  return d;
}

}  // namespace

void bind_burel(py::module_ m) {
  m.doc() = "BUREL kernels: DPpartition, biSplit, BUREL end to end, extended beta-likeness merges";
  m.def("f", &twophase::burel_f, py::arg("p"), py::arg("beta"), py::arg("enhanced") = true,
        "The beta-likeness bound f(p) = p (1 + min{beta, -ln p}) (basic: p (1 + beta)).");
  m.def(
      "dp_partition",
      [](const CArray<int64_t>& reference, double beta, bool enhanced, bool strict) {
        auto ref = span_of(reference, "reference");
        twophase::BurelBuckets b;
        {
          py::gil_scoped_release nogil;
          b = twophase::dp_partition(ref, beta, enhanced, strict);
        }
        return burel_buckets_dict(b);
      },
      py::arg("reference").noconvert(), py::arg("beta"), py::arg("enhanced") = true, py::arg("strict") = false,
      "DPpartition: minimum number of frequency-contiguous buckets.");
  m.def(
      "ec_sizes",
      [](const CArray<int64_t>& sizes, const CArray<double>& bound, bool balanced) {
        twophase::BurelBuckets b;
        auto s = span_of(sizes, "sizes");
        auto f = span_of(bound, "bound", s.size);
        b.size.assign(s.begin(), s.end());
        b.bound.assign(f.begin(), f.end());
        twophase::EcLeaves leaves;
        {
          py::gil_scoped_release nogil;
          leaves = balanced ? twophase::burel_ec_sizes_balanced(b) : twophase::burel_ec_sizes(b);
        }
        return leaves_array(std::move(leaves));
      },
      py::arg("sizes").noconvert(), py::arg("bound").noconvert(), py::arg("balanced") = false,
      "biSplit (or the balanced split): EC-tree leaves in depth-first order.");
  m.def(
      "burel",
      [](const CArray<int32_t>& sa, int64_t m_codes, const CArray<int32_t>& qi, const CArray<double>& coord_values,
         const CArray<int64_t>& coord_offsets, int64_t max_card, double beta, bool enhanced, bool strict, int policy,
         uint64_t seed, int n_threads, bool balanced) {
        auto q = matrix_of(qi, "qi");
        auto s = span_of(sa, "sa", q.rows);
        twophase::CoordTables ct{span_of(coord_values, "coord_values"), span_of(coord_offsets, "coord_offsets", q.cols + 1)};
        twophase::BurelConfig cfg;
        cfg.beta = beta;
        cfg.enhanced = enhanced;
        cfg.strict = strict;
        cfg.balanced = balanced;
        cfg.slices = policy == 2;
        cfg.policy = static_cast<twophase::SeedPolicy>(policy == 2 ? 0 : policy);
        cfg.seed = seed;
        cfg.n_threads = n_threads;
        cfg.interrupt = python_interrupt_hook();
        twophase::BurelOutput o;
        {
          py::gil_scoped_release nogil;
          o = twophase::burel(s, m_codes, q, ct, max_card, cfg);
        }
        raise_for_status(o.status);
        py::dict buckets = burel_buckets_dict(o.buckets);
        return two_phase_result(std::move(o), std::move(buckets));
      },
      py::arg("sa").noconvert(), py::arg("m"), py::arg("qi").noconvert(), py::arg("coord_values").noconvert(),
      py::arg("coord_offsets").noconvert(), py::arg("max_card"), py::arg("beta"), py::arg("enhanced"),
      py::arg("strict"), py::arg("policy"), py::arg("seed"), py::arg("n_threads"), py::arg("balanced") = false,
      "BUREL end to end: row labels, buckets, EC recipes, timings.");
  m.def(
      "merge",
      [](const CArray<int64_t>& hist, const CArray<int64_t>& reference, const CArray<int32_t>& groups, double beta,
         const CArray<int32_t>& box_lo, const CArray<int32_t>& box_hi, const CArray<double>& coord_values,
         const CArray<int64_t>& coord_offsets, const CArray<uint8_t>& categorical, const CArray<int32_t>& parent,
         const CArray<int32_t>& leaf_start, const CArray<int32_t>& leaf_count, const CArray<int64_t>& node_offsets,
         const CArray<int32_t>& n_leaves) {
        twophase::MergeInput in;
        in.hist = matrix_of(hist, "hist");
        in.reference = span_of(reference, "reference", in.hist.cols);
        in.groups = matrix_of(groups, "groups", -1, 2);
        for (int64_t i = 0; i < in.groups.rows * 2; ++i)
          if (in.groups.data[i] < 0 || in.groups.data[i] >= in.hist.cols) throw std::invalid_argument("group out of range");
        in.beta = beta;
        in.box_lo = matrix_of(box_lo, "box_lo", in.hist.rows);
        const int64_t d = in.box_lo.cols;
        in.box_hi = matrix_of(box_hi, "box_hi", in.hist.rows, d);
        in.coords = {span_of(coord_values, "coord_values"), span_of(coord_offsets, "coord_offsets", d + 1)};
        in.categorical = span_of(categorical, "categorical", d);
        in.parent = span_of(parent, "parent");
        in.leaf_start = span_of(leaf_start, "leaf_start", in.parent.size);
        in.leaf_count = span_of(leaf_count, "leaf_count", in.parent.size);
        in.node_offsets = span_of(node_offsets, "node_offsets", d + 1);
        in.n_leaves = span_of(n_leaves, "n_leaves", d);
        in.interrupt = python_interrupt_hook();
        twophase::MergeOutput o;
        {
          py::gil_scoped_release nogil;
          o = twophase::burel_merge(in);
        }
        raise_for_status(o.status);
        py::dict out;
        out["class_map"] = to_numpy(std::move(o.class_map));
        out["n_classes"] = o.n_classes;
        out["n_merges"] = o.n_merges;
        out["n_violating"] = o.n_violating;
        out["n_evaluated"] = o.n_evaluated;
        return out;
      },
      py::arg("hist").noconvert(), py::arg("reference").noconvert(), py::arg("groups").noconvert(), py::arg("beta"),
      py::arg("box_lo").noconvert(), py::arg("box_hi").noconvert(), py::arg("coord_values").noconvert(),
      py::arg("coord_offsets").noconvert(), py::arg("categorical").noconvert(), py::arg("parent").noconvert(),
      py::arg("leaf_start").noconvert(), py::arg("leaf_count").noconvert(), py::arg("node_offsets").noconvert(),
      py::arg("n_leaves").noconvert(),
      "Merge post-processing for semantic / range-based beta-likeness: old class -> new class.");
}

}  // namespace anoncore::bindings

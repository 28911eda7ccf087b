// Bindings for SABRE (anoncore._core.sabre, used by anoncore.static.sabre): the two-phase kernels of
// anoncore::twophase (bucketization, EC-size tree, Hilbert keys, retrieval) and SABRE end to end.
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "anoncore/twophase/sabre.hpp"
#include "common.hpp"
#include "twophase_args.hpp"

namespace anoncore::bindings {
namespace {

using twophase::HierarchyView;

py::dict buckets_dict(const twophase::Buckets& b) {
  py::dict d;
  d["bucket_of"] = to_numpy(std::vector<int32_t>(b.bucket_of));
  d["node"] = to_numpy(std::vector<int32_t>(b.node));
  d["lo"] = to_numpy(std::vector<int32_t>(b.lo));
  d["hi"] = to_numpy(std::vector<int32_t>(b.hi));
  d["size"] = to_numpy(std::vector<int64_t>(b.size));
  d["cet"] = to_numpy(std::vector<double>(b.cet));
  d["u"] = b.u;
  d["root_cet"] = b.root_cet;
  d["u_trace"] = to_numpy(std::vector<double>(b.u_trace));
  d["n_present"] = b.n_present;
  return d;
}

/// SABRE's first phase: buckets, the EC-size tree, the bucket-level distance.
void bind_buckets(py::module_& m) {
  m.def(
      "bucketize",
      [](const CArray<int64_t>& reference, double t, const py::object& hierarchy, bool tight) {
        auto ref = span_of(reference, "reference");
        auto h = hierarchy_arg(hierarchy, ref.size);
        twophase::Buckets b;
        {
          py::gil_scoped_release nogil;
          b = h ? twophase::bucket_cat(ref, h->view, t, tight) : twophase::bucket_num(ref, t);
        }
        return buckets_dict(b);
      },
      py::arg("reference").noconvert(), py::arg("t"), py::arg("hierarchy") = py::none(), py::arg("tight") = false,
      "SABRE bucketCat (hierarchy given) or bucketNum.");
  m.def(
      "ec_sizes",
      [](const CArray<int64_t>& sizes, const CArray<int32_t>& node, const CArray<int32_t>& lo,
         const CArray<int32_t>& hi, int64_t n_present, double u, double t, int64_t k, const py::object& hierarchy,
         int64_t n_leaves) {
        twophase::Buckets b;
        auto s = span_of(sizes, "sizes");
        b.size.assign(s.begin(), s.end());
        auto nd = span_of(node, "node", s.size), l = span_of(lo, "lo", s.size), r = span_of(hi, "hi", s.size);
        b.node.assign(nd.begin(), nd.end());
        b.lo.assign(l.begin(), l.end());
        b.hi.assign(r.begin(), r.end());
        b.n_present = n_present;
        b.u = u;
        auto h = hierarchy_arg(hierarchy, n_leaves);
        twophase::EcLeaves leaves;
        {
          py::gil_scoped_release nogil;
          leaves = twophase::sabre_ec_sizes(b, h ? &h->view : nullptr, t, k, 1);
        }
        return leaves_array(std::move(leaves));
      },
      py::arg("sizes").noconvert(), py::arg("node").noconvert(), py::arg("lo").noconvert(), py::arg("hi").noconvert(),
      py::arg("n_present"), py::arg("u"), py::arg("t"), py::arg("k"), py::arg("hierarchy") = py::none(),
      py::arg("n_leaves") = 0, "SABRE ECSize/dichotomize: leaf arrays in depth-first order.");
  m.def(
      "bucket_distance",
      [](const CArray<int64_t>& counts, const CArray<int64_t>& sizes, const CArray<int32_t>& node,
         const CArray<int32_t>& lo, const CArray<int32_t>& hi, int64_t n_present, const py::object& hierarchy,
         int64_t n_leaves) {
        auto c = matrix_of(counts, "counts");
        auto s = span_of(sizes, "sizes", c.cols);
        auto h = hierarchy_arg(hierarchy, n_leaves);
        CArray<double> out(c.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          if (h)
            twophase::bucket_emd_hierarchical(c, s, span_of(node, "node", c.cols), h->view, ov, 1);
          else
            twophase::bucket_emd_ordered(c, s, span_of(lo, "lo", c.cols), span_of(hi, "hi", c.cols), n_present, ov, 1);
        }
        return out;
      },
      py::arg("counts").noconvert(), py::arg("sizes").noconvert(), py::arg("node").noconvert(),
      py::arg("lo").noconvert(), py::arg("hi").noconvert(), py::arg("n_present"), py::arg("hierarchy") = py::none(),
      py::arg("n_leaves") = 0, "Bucket-level EMD D(G) of each row of counts (closed forms of spec §3.3).");
}

/// The second phase's pieces: Hilbert keys, the (bucket, key, row) sort, the Hilbert-neighbour retrieval.
void bind_retrieval(py::module_& m) {
  m.def(
      "hilbert_index",
      [](const CArray<uint32_t>& cells, int bits) {
        auto c = matrix_of(cells, "cells");
        if (bits < 1 || c.cols * bits > 64) throw std::invalid_argument("need 1 <= bits and n_dims * bits <= 64");
        CArray<uint64_t> out(c.rows);
        auto ov = mut_span_of(out, "out");
        std::vector<uint32_t> buf(static_cast<size_t>(c.cols));
        for (int64_t r = 0; r < c.rows; ++r) {
          std::copy(c.row(r), c.row(r) + c.cols, buf.begin());
          ov[r] = twophase::hilbert_index(buf.data(), c.cols, bits);
        }
        return out;
      },
      py::arg("cells").noconvert(), py::arg("bits"), "Hilbert index of grid cells (n, d).");
  m.def(
      "hilbert_keys",
      [](const CArray<int32_t>& qi, const CArray<double>& coord_values, const CArray<int64_t>& coord_offsets, int bits,
         int n_threads) {
        auto q = matrix_of(qi, "qi");
        auto ct = coord_tables(coord_values, coord_offsets, q.cols);
        CArray<uint64_t> out(q.rows);
        auto ov = mut_span_of(out, "out");
        {
          py::gil_scoped_release nogil;
          twophase::hilbert_keys(q, ct, bits, ov, n_threads);
        }
        return out;
      },
      py::arg("qi").noconvert(), py::arg("coord_values").noconvert(), py::arg("coord_offsets").noconvert(),
      py::arg("bits"), py::arg("n_threads") = 1, "Hilbert key of every row over normalised QI coordinates.");
  m.def("hilbert_bits", &twophase::hilbert_bits, py::arg("n_dims"), py::arg("max_card"));
  m.def(
      "sort_bucket_key_row",
      [](const CArray<int32_t>& bucket_of_row, int64_t n_buckets, const CArray<uint64_t>& keys, int n_threads) {
        auto bo = span_of(bucket_of_row, "bucket_of_row");
        auto ks = span_of(keys, "keys", bo.size);
        for (int64_t i = 0; i < bo.size; ++i)
          if (bo[i] < 0 || bo[i] >= n_buckets) throw std::invalid_argument("bucket_of_row out of range");
        core::RawVec<int64_t> rows;
        core::RawVec<uint64_t> sorted_keys;
        {
          py::gil_scoped_release nogil;
          twophase::sort_bucket_key_row(bo, n_buckets, ks, n_threads, rows, sorted_keys);
        }
        return py::make_tuple(to_numpy(std::move(rows)), to_numpy(std::move(sorted_keys)));
      },
      py::arg("bucket_of_row").noconvert(), py::arg("n_buckets"), py::arg("keys").noconvert(),
      py::arg("n_threads") = 1, "Rows ordered by (bucket, key, row) and their keys (the retrieval's radix sort).");
  m.def(
      "retrieve_hilbert",
      [](const CArray<int32_t>& bucket_of_row, int64_t n_buckets, const CArray<int64_t>& leaves,
         const CArray<uint64_t>& keys, uint64_t seed, int policy, int n_threads) {
        twophase::RetrieveInput in;
        in.bucket_of_row = span_of(bucket_of_row, "bucket_of_row");
        in.n_buckets = n_buckets;
        in.leaves = matrix_of(leaves, "leaves", -1, n_buckets);
        in.keys = span_of(keys, "keys", in.bucket_of_row.size);
        in.seed = seed;
        in.policy = static_cast<twophase::SeedPolicy>(policy);
        in.n_threads = n_threads;
        in.interrupt = python_interrupt_hook();
        CArray<int64_t> labels(in.bucket_of_row.size);
        auto lv = mut_span_of(labels, "labels");
        Status s;
        {
          py::gil_scoped_release nogil;
          s = twophase::retrieve_hilbert(in, lv);
        }
        raise_for_status(s);
        return labels;
      },
      py::arg("bucket_of_row").noconvert(), py::arg("n_buckets"), py::arg("leaves").noconvert(),
      py::arg("keys").noconvert(), py::arg("seed"), py::arg("policy") = 0, py::arg("n_threads") = 1,
      "Hilbert-neighbour materialization of EC recipes (SABRE-AK, BUREL).");
}

/// SABRE end to end.
void bind_sabre_run(py::module_& m) {
  m.def(
      "sabre",
      [](const CArray<int32_t>& sa, int64_t m_codes, const CArray<int32_t>& qi, const CArray<double>& coord_values,
         const CArray<int64_t>& coord_offsets, int64_t max_card, double t, int64_t k, bool tight, bool knn,
         int policy, uint64_t seed, int n_threads, const py::object& hierarchy) {
        auto q = matrix_of(qi, "qi");
        auto s = span_of(sa, "sa", q.rows);
        auto ct = coord_tables(coord_values, coord_offsets, q.cols);
        auto h = hierarchy_arg(hierarchy, m_codes);
        twophase::SabreConfig cfg;
        cfg.t = t;
        cfg.k = k;
        cfg.tight_bound = tight;
        cfg.knn = knn;
        set_retrieval(cfg, policy, seed, n_threads);
        twophase::SabreOutput o;
        {
          py::gil_scoped_release nogil;
          o = twophase::sabre(s, m_codes, h ? &h->view : nullptr, q, ct, max_card, cfg);
        }
        raise_for_status(o.status);
        py::dict buckets = buckets_dict(o.buckets);
        return two_phase_result(std::move(o), std::move(buckets));
      },
      py::arg("sa").noconvert(), py::arg("m"), py::arg("qi").noconvert(), py::arg("coord_values").noconvert(),
      py::arg("coord_offsets").noconvert(), py::arg("max_card"), py::arg("t"), py::arg("k"), py::arg("tight"),
      py::arg("knn"), py::arg("policy"), py::arg("seed"), py::arg("n_threads"), py::arg("hierarchy") = py::none(),
      "SABRE end to end: row labels, buckets, EC recipes, timings.");
}

}  // namespace

void bind_sabre(py::module_ m) {
  m.doc() = "twophase kernels: SABRE bucketization, EC-size tree, Hilbert keys, retrieval";
  bind_two_phase_result(m);
  bind_buckets(m);
  bind_retrieval(m);
  bind_sabre_run(m);
}

}  // namespace anoncore::bindings

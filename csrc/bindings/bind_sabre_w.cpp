// Bindings for anoncore::stream SABRE_W kernels (_core.sabre_w): the per-window SABRE call, the person merge,
// the stream Hilbert keys and the global ordered bucketization (for tests).
#include <memory>

#include "anoncore/stream/sabre_w.hpp"
#include "common.hpp"
#include "twophase_args.hpp"

namespace anoncore::bindings {

void bind_sabre_w(py::module_ m) {
  m.doc() = "SABRE_W kernels: SABRE on a window under the global ground distance, person merge, Hilbert keys";
  m.def(
      "window_sabre",
      [](const CArray<int32_t>& sa, int64_t m_values, const py::object& hierarchy, const CArray<uint64_t>& keys,
         const CArray<int64_t>& pids, double t, int64_t k, uint64_t seed, bool slices, const CArray<double>& coords,
         bool knn) {
        const Span<int32_t> s = span_of(sa, "sa");
        const Span<uint64_t> kk = span_of(keys, "keys", s.size);
        const Span<int64_t> p = span_of(pids, "pids", s.size);
        auto h = hierarchy_arg(hierarchy, m_values);
        for (int64_t r = 0; r < s.size; ++r)
          if (s[r] < 0 || s[r] >= m_values) throw std::invalid_argument("sa code out of range");
        if (!(t > 0.0) || k < 1) throw std::invalid_argument("need t > 0 and k >= 1");
        stream::WindowSabreConfig cfg;
        cfg.t = t;
        cfg.k = k;
        cfg.seed = seed;
        cfg.slices = slices;
        cfg.knn = knn;
        const Matrix<double> c = matrix_of(coords, "coords");
        if (knn && c.rows != s.size) throw std::invalid_argument("coords must have one row per tuple");
        stream::WindowSabreOutput out;
        {
          const py::gil_scoped_release nogil;
          out = stream::window_sabre(s, m_values, h ? &h->view : nullptr, kk, p, c, cfg);
        }
        py::dict d;
        d["feasible"] = out.status == Status::Ok;
        d["labels"] = to_numpy(std::move(out.labels));
        d["n_classes"] = out.n_classes;
        d["n_recipes"] = out.n_recipes;
        d["n_buckets"] = out.n_buckets;
        d["u"] = out.u;
        return d;
      },
      py::arg("sa").noconvert(), py::arg("m"), py::arg("hierarchy"), py::arg("keys").noconvert(),
      py::arg("pids").noconvert(), py::arg("t"), py::arg("k"), py::arg("seed"), py::arg("slices"), py::arg("coords").noconvert(), py::arg("knn"),
      "SABRE on one window's not-yet-output tuples under the global metric, then the person merge.");
  m.def(
      "merge_for_persons",
      [](CArray<int64_t>& labels, int64_t n_labels, const CArray<int64_t>& pids, int64_t k) {
        const MutSpan<int64_t> l = mut_span_of(labels, "labels");
        const Span<int64_t> p = span_of(pids, "pids", l.size);
        for (int64_t r = 0; r < l.size; ++r)
          if (l[r] < 0 || l[r] >= n_labels) throw std::invalid_argument("label out of range");
        const py::gil_scoped_release nogil;
        return stream::merge_for_persons(l, n_labels, p, k);
      },
      py::arg("labels").noconvert(), py::arg("n_labels"), py::arg("pids").noconvert(), py::arg("k"),
      "Merge consecutive classes until each covers k distinct pids (in place); -1 if impossible.");
  m.def(
      "hilbert_keys",
      [](const CArray<double>& coords, int bits) {
        const Matrix<double> c = matrix_of(coords, "coords");
        if (bits < 1 || bits > 32 || std::min<int64_t>(c.cols, 64) * bits > 64)
          throw std::invalid_argument("bits out of range");
        py::array_t<uint64_t> keys(c.rows);
        const MutSpan<uint64_t> k{keys.mutable_data(), c.rows};
        {
          const py::gil_scoped_release nogil;
          stream::stream_hilbert_keys(c, bits, k);
        }
        return keys;
      },
      py::arg("coords").noconvert(), py::arg("bits"), "Hilbert key of every row of normalised coordinates.");
  m.def(
      "bucket_num_global",
      [](const CArray<int64_t>& reference, double t) {
        const twophase::Buckets b = stream::bucket_num_global(span_of(reference, "reference"), t);
        py::dict d;
        d["bucket_of"] = to_numpy(std::vector<int32_t>(b.bucket_of));
        d["lo"] = to_numpy(std::vector<int32_t>(b.lo));
        d["hi"] = to_numpy(std::vector<int32_t>(b.hi));
        d["size"] = to_numpy(std::vector<int64_t>(b.size));
        d["cet"] = to_numpy(std::vector<double>(b.cet));
        d["u"] = b.u;
        return d;
      },
      py::arg("reference").noconvert(), py::arg("t"), "Global-metric bucketNum (ordered SA).");
}

}  // namespace anoncore::bindings

// Bindings for anoncore._core.workload (used by anoncore.workload): the utility measures of the SABRE/BUREL
// experiments, COUNT-query answers and the OLAP cube divergence (kernels in anoncore/metrics/workload.hpp).
#include "anoncore/metrics/workload.hpp"
#include "common.hpp"

namespace anoncore::bindings {

void bind_workload(py::module_ m) {
  m.def(
      "count_queries",
      [](const CArray<int32_t>& qi, const CArray<int32_t>& sa, const CArray<int32_t>& gen_lo,
         const CArray<int32_t>& gen_hi, const CArray<int64_t>& sa_prefix, const CArray<int32_t>& dims,
         const CArray<int32_t>& lo, const CArray<int32_t>& hi, const CArray<int32_t>& sa_lo,
         const CArray<int32_t>& sa_hi, int n_threads) {
        auto q = matrix_of(qi, "qi");
        auto s = span_of(sa, "sa", q.rows);
        auto gl = matrix_of(gen_lo, "gen_lo", -1, q.cols);
        auto gh = matrix_of(gen_hi, "gen_hi", gl.rows, q.cols);
        auto pre = matrix_of(sa_prefix, "sa_prefix", gl.rows);
        metrics::CountQueries cq{matrix_of(dims, "dims"), {}, {}, {}, {}};
        cq.lo = matrix_of(lo, "lo", cq.dims.rows, cq.dims.cols);
        cq.hi = matrix_of(hi, "hi", cq.dims.rows, cq.dims.cols);
        cq.sa_lo = span_of(sa_lo, "sa_lo", cq.dims.rows);
        cq.sa_hi = span_of(sa_hi, "sa_hi", cq.dims.rows);
        CArray<int64_t> exact(cq.dims.rows);
        CArray<double> est(cq.dims.rows);
        auto ev = mut_span_of(exact, "exact");
        auto sv = mut_span_of(est, "est");
        {
          py::gil_scoped_release nogil;
          metrics::count_exact(q, s, cq, ev, n_threads);
          metrics::count_estimate(gl, gh, pre, cq, sv, n_threads);
        }
        return py::make_tuple(exact, est);
      },
      py::arg("qi").noconvert(), py::arg("sa").noconvert(), py::arg("gen_lo").noconvert(),
      py::arg("gen_hi").noconvert(), py::arg("sa_prefix").noconvert(), py::arg("dims").noconvert(),
      py::arg("lo").noconvert(), py::arg("hi").noconvert(), py::arg("sa_lo").noconvert(),
      py::arg("sa_hi").noconvert(), py::arg("n_threads") = 1, "Exact and estimated answers of COUNT queries.");
  m.def(
      "olap_kl",
      [](const CArray<int32_t>& qi, const CArray<int32_t>& sa, int64_t m_codes, const CArray<int32_t>& dims,
         const CArray<int64_t>& cards, const CArray<int32_t>& gen_lo, const CArray<int32_t>& gen_hi,
         const CArray<int64_t>& hist) {
        auto q = matrix_of(qi, "qi");
        auto d = span_of(dims, "dims");
        auto c = span_of(cards, "cards", d.size);
        auto gl = matrix_of(gen_lo, "gen_lo", -1, q.cols);
        auto gh = matrix_of(gen_hi, "gen_hi", gl.rows, q.cols);
        auto h = matrix_of(hist, "hist", gl.rows, m_codes);
        auto s = span_of(sa, "sa", q.rows);
        double out;
        {
          py::gil_scoped_release nogil;
          out = metrics::olap_kl(q, s, m_codes, d, c, gl, gh, h);
        }
        return out;
      },
      py::arg("qi").noconvert(), py::arg("sa").noconvert(), py::arg("m"), py::arg("dims").noconvert(),
      py::arg("cards").noconvert(), py::arg("gen_lo").noconvert(), py::arg("gen_hi").noconvert(),
      py::arg("hist").noconvert(), "KL(alpha || beta) between original and anonymized OLAP count cubes.");
}

}  // namespace anoncore::bindings

// Bindings for anoncore::temporal: the reposition window driver (P-TEMP). Validation lives in Python.
#include <utility>

#include "anoncore/temporal/reposition.hpp"
#include "common.hpp"

namespace anoncore::bindings {
using temporal::CostModel;
using temporal::Mode;
using temporal::MuKind;
using temporal::Stream;

namespace {
template <class T>
std::vector<T> to_vector(const CArray<T>& a, const char* name) {
  auto sp = span_of(a, name);
  return std::vector<T>(sp.begin(), sp.end());
}
}  // namespace

void bind_temporal(py::module_ m) {
  m.doc() = "temporal kernels: reposition model and OptimalReposition window driver";
  m.def(
      "eligible_level",
      [](const CArray<int64_t>& counts, int64_t l) { return temporal::eligible_level(span_of(counts, "counts"), l); },
      py::arg("counts").noconvert(), py::arg("l"), "Largest L with sum_s min(c_s, L) >= l*L (minimum suppression).");

  py::class_<Stream>(m, "Stream")
      .def(py::init([](int64_t l, int64_t w, int32_t n_sa, int32_t kind, double c, double p,
                       const CArray<double>& table, const CArray<double>& beta, int32_t mode) {
             CostModel cm;
             cm.kind = static_cast<MuKind>(kind);
             cm.c = c;
             cm.p = p;
             cm.table = to_vector(table, "table");
             cm.beta = to_vector(beta, "beta");
             return new Stream(l, w, n_sa, std::move(cm), static_cast<Mode>(mode));
           }),
           py::arg("l"), py::arg("w"), py::arg("n_sa"), py::arg("kind"), py::arg("c"), py::arg("p"),
           py::arg("table").noconvert(), py::arg("beta").noconvert(), py::arg("mode"))
      .def("start_at", &Stream::start_at, py::arg("t"), "Start an empty window at time t.")
      .def(
          "load",
          [](Stream& st, int64_t lo, int64_t hi, const CArray<int64_t>& ids, const CArray<int64_t>& ts,
             const CArray<int32_t>& sa, const CArray<int64_t>& slot, const CArray<bool>& suppressed) {
            auto iv = span_of(ids, "ids");
            auto tv = span_of(ts, "ts", iv.size);
            auto sv = span_of(sa, "sa", iv.size);
            auto slv = span_of(slot, "slot", iv.size);
            if (suppressed.ndim() != 1 || suppressed.shape(0) != iv.size)
              throw std::invalid_argument("suppressed has the wrong length");
            Span<uint8_t> sup{reinterpret_cast<const uint8_t*>(suppressed.data()), iv.size};
            st.load(lo, hi, iv, tv, sv, slv, sup);
          },
          py::arg("lo"), py::arg("hi"), py::arg("ids").noconvert(), py::arg("ts").noconvert(),
          py::arg("sa").noconvert(), py::arg("slot").noconvert(), py::arg("suppressed").noconvert(),
          "Replace the window by an optimised state of slots [lo, hi].")
      .def(
          "push",
          [](Stream& st, const CArray<int32_t>& sa, const CArray<int64_t>& ids) {
            auto sv = span_of(sa, "sa");
            auto iv = span_of(ids, "ids", sv.size);
            py::gil_scoped_release nogil;
            st.push(sv, iv);
          },
          py::arg("sa").noconvert(), py::arg("ids").noconvert(), "Push the next snapshot.")
      .def(
          "run",
          [](Stream& st, const CArray<int64_t>& ts, const CArray<int32_t>& sa, int64_t id_offset,
             CArray<int64_t>& out_slot, bool flush) {
            auto tv = span_of(ts, "ts");
            auto sv = span_of(sa, "sa", tv.size);
            auto ov = mut_span_of(out_slot, "out_slot");
            if (id_offset < 0 || id_offset + tv.size > ov.size) throw std::invalid_argument("out_slot too short");
            py::gil_scoped_release nogil;
            st.run(tv, sv, id_offset, ov, flush);
          },
          py::arg("ts").noconvert(), py::arg("sa").noconvert(), py::arg("id_offset"), py::arg("out_slot").noconvert(),
          py::arg("flush"), "Whole-stream loop in C++; out_slot[id] = published slot (untouched if suppressed).")
      .def("flush", &Stream::flush, "Pop every remaining slot.")
      .def(
          "take_popped",
          [](Stream& st) {
            auto r = py::make_tuple(to_numpy(std::move(st.popped_ids)), to_numpy(std::move(st.popped_ts)),
                                    to_numpy(std::move(st.popped_sa)), to_numpy(std::move(st.popped_slot)));
            st.clear_popped();
            return r;
          },
          "Popped records since the last call: (ids, ts, sa, slot); slot -1 means suppressed.")
      .def(
          "state",
          [](const Stream& st) {
            std::vector<int64_t> ids, ts, slot;
            std::vector<int32_t> sa;
            std::vector<uint8_t> sup;
            st.export_state(ids, ts, sa, slot, sup);
            CArray<bool> supa(static_cast<py::ssize_t>(sup.size()));
            for (size_t k = 0; k < sup.size(); ++k) supa.mutable_data()[k] = sup[k] != 0;
            return py::make_tuple(to_numpy(std::move(ids)), to_numpy(std::move(ts)), to_numpy(std::move(sa)),
                                  to_numpy(std::move(slot)), supa);
          },
          "Window records: (ids, ts, sa, slot, suppressed).")
      .def("window_il", &Stream::window_il, "IL of the current window (Eq. 1-2).")
      .def_property_readonly("lo", &Stream::lo)
      .def_property_readonly("hi", &Stream::hi)
      .def_property_readonly("n_records", &Stream::n_records)
      .def_readwrite("trace_enabled", &Stream::trace_enabled)
      .def_readwrite("track_il", &Stream::track_il)
      .def_readonly("last_il_initial", &Stream::last_il_initial)
      .def_readonly("last_il_final", &Stream::last_il_final)
      .def_property_readonly("counters",
                             [](const Stream& st) {
                               py::dict d;
                               d["windows"] = st.counters.windows;
                               d["initially_suppressed"] = st.counters.initially_suppressed;
                               d["relays"] = st.counters.relays;
                               d["rolled_back"] = st.counters.rolled_back;
                               d["iterations"] = st.counters.iterations;
                               d["total_gain"] = st.counters.total_gain;
                               return d;
                             })
      .def_property_readonly("last_trace", [](const Stream& st) {
        py::list out;
        for (const auto& e : st.last_trace)
          out.append(py::make_tuple(e.iteration, e.phase, e.id, e.sa, e.from_slot, e.gain, e.rolled_back != 0));
        return out;
      });
}

}  // namespace anoncore::bindings

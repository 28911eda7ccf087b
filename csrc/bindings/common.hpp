// Glue shared by the bind_<concern>.cpp files: array -> view conversion with shape/dtype checks (done with
// the GIL held), the interrupt hook, and Status mapping. No algorithm logic lives here.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"

namespace anoncore::bindings {
namespace py = pybind11;

template <class T>
using CArray = py::array_t<T, py::array::c_style>;

/// The array, or a copy of it whose data is aligned for T: a NumPy array rebuilt over a byte buffer (one that
/// dask or pickle moved between processes) can start at any byte, and reading T through it is undefined.
template <class T>
CArray<T> aligned(const CArray<T>& a) {
  if (reinterpret_cast<std::uintptr_t>(a.data()) % alignof(T) == 0) return a;
  CArray<T> out(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  if (a.size() > 0) std::memcpy(out.mutable_data(), a.data(), static_cast<size_t>(a.size()) * sizeof(T));
  return out;
}

template <class T>
Span<T> span_of(const CArray<T>& a, const char* name, int64_t expected = -1) {
  if (a.ndim() != 1) throw std::invalid_argument(std::string(name) + " must be 1-D");
  if (expected >= 0 && a.shape(0) != expected)
    throw std::invalid_argument(std::string(name) + " has length " + std::to_string(a.shape(0)) +
                                ", expected " + std::to_string(expected));
  return Span<T>{a.data(), static_cast<int64_t>(a.shape(0))};
}

template <class T>
MutSpan<T> mut_span_of(CArray<T>& a, const char* name, int64_t expected = -1) {
  if (a.ndim() != 1) throw std::invalid_argument(std::string(name) + " must be 1-D");
  if (expected >= 0 && a.shape(0) != expected)
    throw std::invalid_argument(std::string(name) + " has length " + std::to_string(a.shape(0)) +
                                ", expected " + std::to_string(expected));
  return MutSpan<T>{a.mutable_data(), static_cast<int64_t>(a.shape(0))};
}

template <class T>
Matrix<T> matrix_of(const CArray<T>& a, const char* name, int64_t rows = -1, int64_t cols = -1) {
  if (a.ndim() != 2) throw std::invalid_argument(std::string(name) + " must be 2-D");
  if ((rows >= 0 && a.shape(0) != rows) || (cols >= 0 && a.shape(1) != cols))
    throw std::invalid_argument(std::string(name) + " has the wrong shape");
  return Matrix<T>{a.data(), static_cast<int64_t>(a.shape(0)), static_cast<int64_t>(a.shape(1))};
}

template <class T>
MutMatrix<T> mut_matrix_of(CArray<T>& a, const char* name) {
  if (a.ndim() != 2) throw std::invalid_argument(std::string(name) + " must be 2-D");
  return MutMatrix<T>{a.mutable_data(), static_cast<int64_t>(a.shape(0)), static_cast<int64_t>(a.shape(1))};
}

/// Hand a vector (any allocator: a core::RawVec too) to NumPy without copying: the capsule owns it.
template <class T, class A>
py::array_t<T> to_numpy(std::vector<T, A>&& v) {
  auto* owner = new std::vector<T, A>(std::move(v));
  py::capsule cap(owner, [](void* p) { delete static_cast<std::vector<T, A>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(owner->size())}, {sizeof(T)}, owner->data(), cap);
}

/// Interrupt hook for kernels running without the GIL: reacquires it and checks for signals.
inline InterruptHook python_interrupt_hook() {
  return []() {
    py::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
  };
}

/// Map an expected-outcome status to a Python exception (Infeasible is reported by the caller).
inline void raise_for_status(Status s) {
  if (s == Status::Interrupted) {
    if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
}

}  // namespace anoncore::bindings

// Non-owning views over caller memory (STYLE.md §2.4). A kernel receives views, never a py::array.
#pragma once
#include <cstdint>
#include <cstddef>

namespace anoncore {

/// Read-only 1-D view: `size` elements starting at `data`.
template <class T>
struct Span {
  const T* data = nullptr;
  int64_t size = 0;
  const T& operator[](int64_t i) const { return data[i]; }
  const T* begin() const { return data; }
  const T* end() const { return data + size; }
};

/// Writable 1-D view.
template <class T>
struct MutSpan {
  T* data = nullptr;
  int64_t size = 0;
  T& operator[](int64_t i) const { return data[i]; }
  T* begin() const { return data; }
  T* end() const { return data + size; }
};

/// Read-only C-contiguous 2-D view of shape (rows, cols).
template <class T>
struct Matrix {
  const T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  const T& operator()(int64_t r, int64_t c) const { return data[r * cols + c]; }
  const T* row(int64_t r) const { return data + r * cols; }
};

/// Writable C-contiguous 2-D view of shape (rows, cols).
template <class T>
struct MutMatrix {
  T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  T& operator()(int64_t r, int64_t c) const { return data[r * cols + c]; }
  T* row(int64_t r) const { return data + r * cols; }
};

}  // namespace anoncore

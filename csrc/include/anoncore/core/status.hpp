// Expected outcomes come back as a Status; exceptions are only for bugs and resource failures (STYLE.md §2.6).
#pragma once
#include <functional>
#include <stdexcept>
#include <string>

namespace anoncore {

enum class Status : int { Ok = 0, Infeasible = 1, Interrupted = 2 };

/// A broken invariant inside a kernel: surfaces in Python as RuntimeError "internal error ... please report".
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what)
      : std::logic_error("anoncore internal error: " + what + " (please report this bug)") {}
};

/// Interrupt hook polled by long kernels once per unit of work; returns true when the caller asked to stop.
/// An empty hook never interrupts. Bindings implement it with PyErr_CheckSignals under the GIL.
using InterruptHook = std::function<bool()>;

inline bool interrupted(const InterruptHook& hook) { return hook && hook(); }

}  // namespace anoncore

// Where a lattice search spends its time (issue 16): seconds per phase of the engine, read after a search as
// Engine.phase_seconds (lattice_search's stats["phase_seconds"]). A PhaseScope on the stack adds the steady
// clock's time between its construction and destruction to one phase, less the time of the scopes opened
// inside it on the same thread (a judge's deferred merges count as merging, not judging). Scopes opened on the
// threads of a parallel batch of nodes add their threads' times, so the phases may then sum to more than the
// search's wall time; a phase that runs its own parallel region is timed once, on the calling thread. Each
// phase but the build has a "_par" twin: the calls that ran on several threads (large sets), so that the
// serial remainder of a many-thread search shows (a set below the parallel grain is always serial).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace anoncore::lattice::detail {

enum class Phase : int {
  kBuild = 0, kGroup, kGroupPar, kMasks, kMasksPar, kMerge, kMergePar, kJudge, kJudgePar, kCount
};

inline constexpr const char* kPhaseNames[] = {"build", "group", "group_par", "masks", "masks_par",
                                              "merge", "merge_par", "judge", "judge_par"};

/// The phase's twin for a call on several threads (p one of kGroup, kMasks, kMerge, kJudge).
constexpr Phase on_threads(Phase p, bool par) { return par ? static_cast<Phase>(static_cast<int>(p) + 1) : p; }

struct PhaseClock {
  std::array<std::atomic<int64_t>, static_cast<size_t>(Phase::kCount)> ns{};
  double seconds(Phase p) const {
    return static_cast<double>(ns[static_cast<size_t>(p)].load(std::memory_order_relaxed)) * 1e-9;
  }
};

class PhaseScope {
 public:
  PhaseScope(PhaseClock& clock, Phase phase) : clock_(clock), phase_(phase), parent_(top()), t0_(now()) {
    top() = this;
  }
  ~PhaseScope() {
    const int64_t el = now() - t0_;
    clock_.ns[static_cast<size_t>(phase_)].fetch_add(el - inner_, std::memory_order_relaxed);
    if (parent_ != nullptr) parent_->inner_ += el;
    top() = parent_;
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  static int64_t now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static PhaseScope*& top() {
    thread_local PhaseScope* t = nullptr;
    return t;
  }
  PhaseClock& clock_;
  Phase phase_;
  PhaseScope* parent_;
  int64_t t0_;
  int64_t inner_ = 0;
};

}  // namespace anoncore::lattice::detail

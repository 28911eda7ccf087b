// Strict multidimensional Mondrian (LeFevre et al., ICDE 2006) over any monotone class model: the baselines
// tMondrian (k + t-closeness, spec sabre-burel.md §6.3), LMondrian and DMondrian (§6.4) are this one search with
// different models. Choices (spec §8 item 21): split the dimension with the widest normalised range at its
// median (left = codes <= median; when that leaves the right side empty, left = codes < median); if the split
// is refused by a model, try the next widest dimension; a partition no dimension can split is a class.
// Option (not the default): hierarchy-based categorical splits. A categorical dimension given a HierarchySplit
// is cut into the children of the lowest common ancestor of its present values (a multiway split, all parts
// must satisfy every model), as in the hierarchy-aware Mondrian variants; other dimensions keep median cuts.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/twophase/distance_adapter.hpp"
#include "anoncore/twophase/hilbert.hpp"

namespace anoncore::mondrian {

/// A privacy model checked on candidate classes from their sizes and sensitive-value histograms. Mondrian
/// assumes it is monotone: the union of two accepted classes is accepted.
class ClassModel {
 public:
  virtual ~ClassModel() = default;
  /// ok[c] = 1 when class c (row c of hist (C, m), sizes[c] tuples) satisfies the model.
  virtual void check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const = 0;
};

/// |G| >= k.
class KAnonymityModel final : public ClassModel {
 public:
  explicit KAnonymityModel(int64_t k) : k_(k) {}
  void check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const override;

 private:
  int64_t k_;
};

/// EMD(P, Q_G) <= t (+1e-12) with ordered ground distance (h null) or hierarchical ground distance.
class TClosenessModel final : public ClassModel {
 public:
  TClosenessModel(std::vector<int64_t> reference, double t, const twophase::HierarchyView* h)
      : reference_(std::move(reference)), t_(t), h_(h) {}
  void check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const override;

 private:
  std::vector<int64_t> reference_;
  double t_;
  const twophase::HierarchyView* h_;
};

/// beta-likeness (spec §2.3): per class, the criteria kernel's max relative gain, accepted when <= beta
/// (enhanced: a gain above -ln p is +inf). The model of the LMondrian baseline (§6.4).
class BetaLikenessModel final : public ClassModel {
 public:
  BetaLikenessModel(std::vector<int64_t> reference, double beta, bool enhanced)
      : reference_(std::move(reference)), beta_(beta), enhanced_(enhanced) {}
  void check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const override;

 private:
  std::vector<int64_t> reference_;
  double beta_;
  bool enhanced_;
};

/// delta-disclosure (Brickell & Shmatikov): |ln(q/p)| < delta for every value of the table. The model of the
/// DMondrian baseline (§6.4) with delta = ln(1 + min{beta, -ln max p}).
class DeltaDisclosureModel final : public ClassModel {
 public:
  DeltaDisclosureModel(std::vector<int64_t> reference, double delta)
      : reference_(std::move(reference)), delta_(delta) {}
  void check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const override;

 private:
  std::vector<int64_t> reference_;
  double delta_;
};

/// Enhanced beta-likeness over groups of sensitive codes (semantic: hierarchy nodes; range-based: runs of values
/// within epsilon; spec §4.5): for every inclusive code range [lo, hi], (rho2 - rho1)/rho1 <= min{beta, -ln rho1}.
class GroupBetaLikenessModel final : public ClassModel {
 public:
  GroupBetaLikenessModel(std::vector<int64_t> reference, double beta, std::vector<int32_t> ranges);
  void check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const override;

 private:
  std::vector<int64_t> prefix_;
  double beta_;
  std::vector<int32_t> ranges_;  // lo0, hi0, lo1, hi1, ...
  std::vector<double> bound_;
};

/// The hierarchy of one categorical QI for hierarchy-based splits. Leaves are nodes 0..n_leaves-1 and a leaf's
/// id is its code (pre-order leaf rank); every node covers the codes [leaf_start, leaf_start + leaf_count).
struct HierarchySplit {
  std::vector<int32_t> parent, leaf_start, leaf_count;  // per node (root: parent -1)
  std::vector<int64_t> child_offset;                    // CSR of the children, sorted by leaf_start
  std::vector<int32_t> child;
  bool enabled() const { return !parent.empty(); }
};

/// Build a HierarchySplit (children lists) from the flat hierarchy arrays.
HierarchySplit make_hierarchy_split(Span<int32_t> parent, Span<int32_t> leaf_start, Span<int32_t> leaf_count);

struct MondrianInput {
  Matrix<int32_t> qi;             // (n, d) codes
  twophase::CoordTables coords;   // normalised coordinate of every code (for the widest-dimension choice)
  Span<int32_t> sa;               // sensitive codes (n,)
  int64_t m = 0;                  // number of sensitive codes
  std::vector<const ClassModel*> models;  // all must accept both halves of a split
  std::vector<HierarchySplit> hierarchy_split;  // empty (all median cuts) or one per QI (disabled: median cut)
  InterruptHook interrupt;
};

struct MondrianOutput {
  Status status = Status::Ok;
  std::vector<int64_t> labels;  // class per row, numbered in depth-first order
  int64_t n_classes = 0;
  int64_t n_splits = 0;
  int64_t n_refused = 0;  // candidate splits refused by a model
};

/// Run the search from the whole table (which the caller has checked against the models). O(n d log n) splits
/// plus the model checks.
MondrianOutput mondrian(const MondrianInput& in);

}  // namespace anoncore::mondrian

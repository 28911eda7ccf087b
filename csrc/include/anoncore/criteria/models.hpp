// The privacy models' metadata, in one table (names as the Python model classes, STYLE.md §2.2): the kernel
// id of each model, the class statistics it needs (as ARX's REQUIREMENT_COUNTER / REQUIREMENT_DISTRIBUTION),
// its monotonicity, its parameters, and whether the lattice engine judges it. Exported to Python as
// `_core.criteria.models` (the lattice reads its model ids and parameters from there) and
// `_core.criteria.criteria_info` (the audit's view).
#pragma once
#include <cstdint>

namespace anoncore::criteria {

/// Kernel id of a model (the index of its row in kModels).
enum class Model : int {
  kKAnonymity = 0,
  kDistinctL = 1,
  kEntropyL = 2,
  kRecursiveCL = 3,
  kEqualT = 4,
  kOrderedT = 5,
  kHierarchicalT = 6,
  kHellingerT = 7,
  kBasicBeta = 8,
  kEnhancedBeta = 9,
  kDeltaDisclosure = 10,
  kSemanticBeta = 11,
  kRangeBeta = 12,
};

/// The per-class statistics a model needs.
enum class Requirement : int { Count = 0, Histogram = 1 };

/// What a model declares about itself.
struct ModelInfo {
  const char* name;              // the Python model class
  Model id;
  Requirement requirement;
  bool monotone_generalization;  // merging classes never turns passing classes into a failing one
  bool monotone_suppression;     // the outlier count never grows when going up the lattice
  const char* param_a;           // the main parameter (k, l, t, beta, delta)
  const char* param_b;           // the second one (c of recursive (c, l)-diversity) or nullptr
  bool needs_sensitive;          // judged on a sensitive attribute's histogram
  bool lattice;                  // judged by the lattice engine (criteria core, class_criteria.hpp)
};

/// Every model, in kernel-id order.
inline constexpr ModelInfo kModels[] = {
    {"KAnonymity", Model::kKAnonymity, Requirement::Count, true, true, "k", nullptr, false, true},
    {"DistinctLDiversity", Model::kDistinctL, Requirement::Histogram, true, true, "l", nullptr, true, true},
    {"EntropyLDiversity", Model::kEntropyL, Requirement::Histogram, true, false, "l", nullptr, true, true},
    {"RecursiveCLDiversity", Model::kRecursiveCL, Requirement::Histogram, true, false, "l", "c", true, true},
    {"EqualDistanceTCloseness", Model::kEqualT, Requirement::Histogram, true, false, "t", nullptr, true, true},
    {"OrderedDistanceTCloseness", Model::kOrderedT, Requirement::Histogram, true, false, "t", nullptr, true, true},
    {"HierarchicalDistanceTCloseness", Model::kHierarchicalT, Requirement::Histogram, true, false, "t", nullptr, true,
     true},
    {"HellingerTCloseness", Model::kHellingerT, Requirement::Histogram, true, false, "t", nullptr, true, true},
    {"BasicBetaLikeness", Model::kBasicBeta, Requirement::Histogram, true, false, "beta", nullptr, true, true},
    {"EnhancedBetaLikeness", Model::kEnhancedBeta, Requirement::Histogram, true, false, "beta", nullptr, true, true},
    {"DeltaDisclosure", Model::kDeltaDisclosure, Requirement::Histogram, true, false, "delta", nullptr, true, true},
    // Evaluated in Python (audit.py) from the class histograms; merging keeps them (Lemma 4.2).
    {"SemanticBetaLikeness", Model::kSemanticBeta, Requirement::Histogram, true, false, "beta", nullptr, true, false},
    {"RangeBetaLikeness", Model::kRangeBeta, Requirement::Histogram, true, false, "beta", nullptr, true, false},
};

inline constexpr int kNumModels = static_cast<int>(sizeof(kModels) / sizeof(kModels[0]));

/// One model instance as the kernels take it: a = k / l / t / beta / delta, b = c of recursive (c, l)-diversity,
/// the estimator of entropy l-diversity (0 Shannon, 1 Grassberger) or delta-disclosure's reading of a value
/// absent from a class (0 violates, 1 ignored: ARX).
struct Criterion {
  Model kind = Model::kKAnonymity;
  double a = 0.0;
  double b = 0.0;
};

}  // namespace anoncore::criteria

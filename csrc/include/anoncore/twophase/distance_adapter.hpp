// The interface through which twophase/ and mondrian/ use the EMD kernels and the SABRE bucket-level distance
// (spec sabre-burel.md §2.2, §3.3): the criteria concern's anoncore::distance kernels, re-exported here so the
// two-phase code depends on one small header.
#pragma once
#include "anoncore/distance/emd.hpp"
#include "anoncore/distance/sabre_bounds.hpp"

namespace anoncore::twophase {

using distance::HierarchyView;
using distance::bucket_emd_hierarchical;
using distance::bucket_emd_ordered;
using distance::emd_hierarchical_classes;
using distance::emd_ordered_classes;

}  // namespace anoncore::twophase

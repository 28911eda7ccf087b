// The globally optimal search of the lattice engine as a class (one object per Engine::optimal call): minimal
// objective among feasible nodes, ties -> lexicographically smallest levels. Best-first over the canonical
// spanning tree of the lattice (key: a monotone lower bound of the objective), with predictive tagging
// (antichains of minimal feasible / maximal infeasible nodes), Flash-style probes, the sweep (the same visits
// without a queue on small lattices with a monotone predicate and metric), the walk of inferred-infeasible
// subtrees, and the incumbent's cuts (Loss with suppression, DM / DM*).
// Internal to the lattice.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "anoncore/lattice/engine_impl.hpp"
#include "anoncore/lattice/node_index.hpp"

namespace anoncore::lattice::detail {

class OptimalSearch {
 public:
  OptimalSearch(Engine::Impl& impl, const InterruptHook& hook, std::vector<TraceEntry>* trace, bool allow_sweep);
  ~OptimalSearch();
  OptimalSearch(const OptimalSearch&) = delete;
  OptimalSearch& operator=(const OptimalSearch&) = delete;
  SearchResult run();

 private:
  static std::vector<int32_t> heights_of(const Engine::Impl& impl);
  // tags (antichains of minimal feasible / maximal infeasible nodes)
  bool tag_leq(const Tag& a, const Tag& b) const;
  bool dominated_by_feasible(const std::vector<int32_t>& x) const;
  bool below_infeasible(const std::vector<int32_t>& x);
  void add_feasible(const std::vector<int32_t>& x);
  void add_infeasible(const std::vector<int32_t>& x);
  // the incumbent, evaluations, bounds, probes
  void consider(const std::vector<int32_t>& x, const NodeResult& res);
  NodeResult eval_node(const std::vector<int32_t>& x, bool may_cut = true);
  double known_bound(std::vector<int32_t>& x);
  bool probe(const std::vector<int32_t>& start, bool start_known);
  bool poll_interrupt();
  bool expand_below(const QItem& x, uint64_t tag);
  // the sweep
  bool sweep_applies() const;
  SearchResult sweep();
  void refold(int64_t from, const std::vector<int32_t>& x, std::vector<double>& pf, std::vector<uint64_t>& pc) const;
  void sweep_keys(size_t n_nodes);
  void sweep_buckets(size_t n_nodes);
  size_t bucket_of(double k) const;
  bool decided(uint64_t c) const;
  // the queue
  bool next_batch();
  SearchResult queue_search();

  Engine::Impl& I;
  const InterruptHook& hook;
  std::vector<TraceEntry>* trace;
  bool allow_sweep_;
  int64_t r;
  std::vector<int32_t> H;
  std::vector<Tag> feasible_tags, infeasible_tags;
  NodeCodec codec;
  NodeQueue pq;
  KnownMap<NodeResult> known;  // evaluated nodes (lookups only: order never used)
  SearchResult out;
  double best = std::numeric_limits<double>::infinity();
  bool have_best = false;
  int64_t eval0;
  bool grouped_bound;
  bool early;
  bool probe_first;
  bool eager;
  uint64_t below_tag = 0;  // packed: the code of the tag found by the last below_infeasible that held
  int64_t since_poll = 0;  // the interrupt hook is polled every 64 nodes taken
  // inferred-infeasible subtrees (expand_below)
  struct Frame {
    double key;
    uint64_t code;
    int32_t first;
  };
  std::vector<Frame> stack;
  std::vector<int32_t> stack_lv;  // r levels per frame
  // the sweep: evaluated nodes flagged by their mixed-radix index (QI 0 most significant), keys, codes, buckets
  std::vector<uint8_t> sweep_known;
  std::vector<int64_t> sweep_stride;
  std::vector<double> nkey;
  std::vector<uint64_t> ncode;
  size_t NB = 1;
  double kmin = 0.0, scale = 0.0;
  std::vector<uint32_t> bstart, order;
  std::vector<uint64_t> field_mask;
  // the queue's current node: batch[0, nb) with nb <= 1, reused (its levels vector keeps its storage)
  std::vector<QItem> batch;
  size_t nb = 0, bpos = 0;
};

}  // namespace anoncore::lattice::detail

// The globally optimal search of the lattice (branch and bound with predictive tagging, Flash-style probes,
// the sweep): the class OptimalSearch, one per Engine::optimal call.
#include "anoncore/lattice/search.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

namespace anoncore::lattice::detail {

OptimalSearch::OptimalSearch(Engine::Impl& impl, const InterruptHook& hook, std::vector<TraceEntry>* trace,
                             bool allow_sweep)
    : I(impl),
      hook(hook),
      trace(trace),
      allow_sweep_(allow_sweep),
      r(impl.r),
      H(heights_of(impl)),
      codec(H),
      pq(impl.r, codec.on),
      known(impl.r, codec),
      eval0(impl.n_eval),
      grouped_bound(impl.metric.kind == MetricKind::kDM || impl.metric.kind == MetricKind::kDMStar),
      early(trace == nullptr),  // a trace records exact suppressed counts of every evaluated node
      // Probe before grouping a popped undecided node when infeasibility can propagate down (a monotone
      // predicate, or a monotone part: a minimal class size from k-anonymity / l-diversity) and an evaluation
      // would not tighten the node's bound (every metric but DM / DM*, where the grouping's Σ n_E² bounds the
      // children: probing first was measured worse there).
      probe_first(!grouped_bound && (impl.p_monotone || impl.min_size > 1 || impl.support_mono)),
      // Inferred-infeasible subtrees without the queue. A popped node x below an infeasible tag T only generates
      // its children. Its spanning-tree descendants y <= T that are not evaluated would be popped later in the
      // same way (inferred infeasible: nothing below a tag is ever evaluated once the tag exists), with key
      // max(parent key, cheap bound), and do nothing but generate their children. So they are walked here at
      // once (depth first) and only the children that leave T's down-set (or are already evaluated) enter the
      // queue, with the keys they would have had. Best-first pops in the global (key, levels) order (a child
      // follows its parent in it), so every other node is popped, and every evaluation done, in the same order
      // as before: the same result, evaluations and incumbents; only fewer queue operations (and fewer nodes
      // counted as popped / inferred). Descendants whose key is already above the incumbent would never be
      // popped and are dropped; those walked while the incumbent is still worse than the final one may be nodes
      // the queue would not have reached (a cost only; measured 89 of 6,181 walked on Adult 1, <= 4 on the other
      // ARX rows). Interrupts are polled every 4096 nodes walked. Not with DM / DM* (a popped node's key may be
      // raised from its predecessors' evaluations first), unpacked levels or a trace (which lists every
      // inferred node).
      eager(trace == nullptr && !grouped_bound && codec.on) {
  I.cut_on = I.dm_cut_on = false;
}

OptimalSearch::~OptimalSearch() { I.cut_on = I.dm_cut_on = false; }  // (also on an interrupted return)

std::vector<int32_t> OptimalSearch::heights_of(const Engine::Impl& impl) {
  std::vector<int32_t> h(static_cast<size_t>(impl.r));
  for (int64_t j = 0; j < impl.r; ++j) h[static_cast<size_t>(j)] = impl.qi[static_cast<size_t>(j)].h;
  return h;
}

bool OptimalSearch::tag_leq(const Tag& a, const Tag& b) const {
  return codec.on ? codec.leq(a.code, b.code) : leq(a.lv, b.lv);
}

// ---- antichains of minimal feasible / maximal infeasible nodes ------------------------------------------------

// antichains of minimal feasible / maximal infeasible nodes
bool OptimalSearch::dominated_by_feasible(const std::vector<int32_t>& x) const {
  const Tag t{{}, codec.encode(x)};
  if (codec.on) {
    for (const auto& f : feasible_tags)
      if (codec.leq(f.code, t.code)) return true;
    return false;
  }
  for (const auto& f : feasible_tags)
    if (leq(f.lv, x)) return true;
  return false;
}

bool OptimalSearch::below_infeasible(const std::vector<int32_t>& x) {
  const Tag t{{}, codec.encode(x)};
  if (codec.on) {
    for (const auto& f : infeasible_tags)
      if (codec.leq(t.code, f.code)) {
        below_tag = f.code;
        return true;
      }
    return false;
  }
  for (const auto& f : infeasible_tags)
    if (leq(x, f.lv)) return true;
  return false;
}

void OptimalSearch::add_feasible(const std::vector<int32_t>& x) {
  const Tag t{x, codec.encode(x)};
  for (const auto& f : feasible_tags)
    if (tag_leq(f, t)) return;
  feasible_tags.erase(std::remove_if(feasible_tags.begin(), feasible_tags.end(),
                                     [&](const Tag& f) { return tag_leq(t, f); }),
                      feasible_tags.end());
  feasible_tags.push_back(t);
}

void OptimalSearch::add_infeasible(const std::vector<int32_t>& x) {
  const Tag t{x, codec.encode(x)};
  for (const auto& f : infeasible_tags)
    if (tag_leq(t, f)) return;
  infeasible_tags.erase(std::remove_if(infeasible_tags.begin(), infeasible_tags.end(),
                                       [&](const Tag& f) { return tag_leq(f, t); }),
                        infeasible_tags.end());
  infeasible_tags.push_back(t);
}

void OptimalSearch::consider(const std::vector<int32_t>& x, const NodeResult& res) {
  if (!res.feasible) return;
  if (!have_best || res.metric < best || (res.metric == best && x < out.best)) {
    best = res.metric;
    out.best = x;
    out.best_result = res;
    have_best = true;
    // suppression-aware cut (Impl::beats_cut): only when feasibility is not upward closed, so that a cut
    // node (reported infeasible) is never used to tag its specializations
    I.cut_on = early && !I.p_monotone && I.metric.kind == MetricKind::kLoss;
    I.cut_value = best;
    // DM / DM* cut (Impl::evaluate_dm_bounded): k-anonymity-only problems with packed keys
    I.dm_cut_on = early && grouped_bound && I.packed && !I.needs_hist;
    I.dm_cut_value = best;
  }
}

NodeResult OptimalSearch::eval_node(const std::vector<int32_t>& x, bool may_cut) {
  if (const NodeResult* kr = known.find(x.data())) return *kr;
  const NodeResult res = I.dm_cut_on && may_cut ? I.evaluate_dm_bounded(x.data()) : I.evaluate(x.data(), early);
  known.emplace(x.data(), res);
  if (!sweep_known.empty()) {
    int64_t idx = 0;
    for (int64_t j = 0; j < r; ++j) idx += x[static_cast<size_t>(j)] * sweep_stride[static_cast<size_t>(j)];
    sweep_known[static_cast<size_t>(idx)] = 1;
  }
  if (trace) trace->push_back({x, res, 0});
  consider(x, res);
  if (res.partial) return res;  // feasibility unknown: no tag
  if (res.feasible) {
    if (I.p_monotone) add_feasible(x);
  } else if (I.p_monotone || res.suppressed_size > I.limit) {
    add_infeasible(x);
  }
  return res;
}

// A lower bound of a node's objective from what is known: the cheap bound, its own evaluation, and for
// DM / DM* (monotone Σ n_E²) the evaluated direct predecessors.
double OptimalSearch::known_bound(std::vector<int32_t>& x) {
  double b = I.cheap_lb(x.data());
  if (const NodeResult* self = known.find(x.data())) return std::max(b, self->lower_bound);
  if (grouped_bound) {
    for (int64_t j = 0; j < r; ++j) {
      if (x[static_cast<size_t>(j)] == 0) continue;
      x[static_cast<size_t>(j)]--;
      if (const NodeResult* f = known.find(x.data())) b = std::max(b, f->lower_bound);
      x[static_cast<size_t>(j)]++;
    }
  }
  return b;
}

// Flash-style probe: from an infeasible node, walk a greedy path upward (successor with the smallest cheap
// lower bound, or for DM / DM* the smallest one-QI DM* step, Impl::dm_step; ties -> lowest index) and
// binary-search the highest infeasible node on it. With a monotone predicate it tags a whole down-set at
// the cost of O(log path) evaluations, and finds feasible nodes early.
// start_known: `start` is known to be infeasible. Otherwise (only with a monotone predicate) its status is
// unknown: the binary search then runs over the nodes above it, and when one of them is infeasible `start`
// is infeasible too (it lies below), which the search learns without grouping the (large) node itself.
// Returns whether an infeasible node was found on the path (always true when start_known).
bool OptimalSearch::probe(const std::vector<int32_t>& start, bool start_known) {
  std::vector<std::vector<int32_t>> path{start};
  std::vector<int32_t> cur = start;
  while (true) {
    int64_t bj = -1;
    double bk = 0;
    for (int64_t j = 0; j < r; ++j) {
      if (cur[static_cast<size_t>(j)] >= H[static_cast<size_t>(j)]) continue;
      double k;
      if (grouped_bound) {
        k = I.dm_step(cur.data(), j);
      } else {
        cur[static_cast<size_t>(j)]++;
        k = I.cheap_lb(cur.data());
        cur[static_cast<size_t>(j)]--;
      }
      if (bj < 0 || k < bk) {
        bj = j;
        bk = k;
      }
    }
    if (bj < 0) break;
    cur[static_cast<size_t>(bj)]++;
    if (dominated_by_feasible(cur)) break;
    path.push_back(cur);
  }
  // path[0] is infeasible; find the last infeasible index
  size_t lo = 0, hi = path.size();  // invariant: path[lo] infeasible, path[hi..] feasible or unknown beyond
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    bool feas;
    if (below_infeasible(path[mid])) {
      feas = false;
    } else if (grouped_bound && have_best && known_bound(path[mid]) > best) {
      // cannot hold the optimum: treated as "not known infeasible" without an evaluation (the tag then
      // covers a smaller down-set; path[lo] stays a node known to be infeasible)
      feas = true;
    } else {
      // (evaluated in full even under the DM / DM* cut: a probe's infeasible node tags a whole down-set,
      // which a partial evaluation would lose; measured: Adult 2 904 -> 704 evaluations)
      const NodeResult pr = eval_node(path[mid], false);
      // monotone predicate: full feasibility; otherwise only its monotone part (class size, distinct-l);
      // a partial evaluation (DM / DM* cut) is above the incumbent: as in the branch above
      feas = pr.partial || (I.p_monotone ? pr.feasible : pr.suppressed_size <= I.limit);
    }
    if (feas) hi = mid;
    else lo = mid;
  }
  if (lo == 0 && !start_known) return false;
  add_infeasible(path[lo]);
  return true;
}

// the interrupt hook is polled every 64 nodes taken
bool OptimalSearch::poll_interrupt() {
  if (++since_poll < 64) return false;
  since_poll = 0;
  return interrupted(hook);
}

// Returns false when interrupted (polled every 4096 nodes walked).
bool OptimalSearch::expand_below(const QItem& x, uint64_t tag) {
  int64_t walked = 0;
  stack.assign(1, Frame{x.key, x.code, x.first});
  stack_lv.assign(x.lv.begin(), x.lv.end());
  std::vector<int32_t> y(static_cast<size_t>(r));
  while (!stack.empty()) {
    const Frame f = stack.back();
    stack.pop_back();
    std::copy(stack_lv.end() - r, stack_lv.end(), y.begin());
    stack_lv.resize(stack_lv.size() - static_cast<size_t>(r));
    for (int64_t j = f.first; j < r; ++j) {
      if (y[static_cast<size_t>(j)] >= H[static_cast<size_t>(j)]) continue;
      y[static_cast<size_t>(j)]++;
      const uint64_t cc = f.code + (uint64_t{1} << codec.shift[static_cast<size_t>(j)]);
      const double ck = std::max(f.key, I.cheap_lb(y.data()));
      if (codec.leq(cc, tag) && !known.contains(y.data())) {
        if (!(have_best && (ck > best || (ck == best && y > out.best)))) {
          stack.push_back(Frame{ck, cc, static_cast<int32_t>(j)});
          stack_lv.insert(stack_lv.end(), y.begin(), y.end());
          if ((++walked & 4095) == 0 && interrupted(hook)) return false;
        }
      } else {
        const int32_t id = pq.alloc();
        std::copy(y.begin(), y.end(), pq.slot(id));
        pq.push_id(ck, cc, static_cast<int32_t>(j), id);
      }
      y[static_cast<size_t>(j)]--;
    }
  }
  return true;
}

// ---- the sweep ------------------------------------------------------------------------------------------------
bool OptimalSearch::sweep_applies() const {
  if (!(allow_sweep_ && trace == nullptr && !grouped_bound && codec.on && I.p_monotone && I.m_monotone)) return false;
  int64_t size = 1;
  for (int64_t j = 0; j < r && size <= kSweepMaxNodes; ++j) size *= H[static_cast<size_t>(j)] + 1;
  return size <= kSweepMaxNodes;
}

  // ------------------------------------------------------------------------------------ the sweep
  // With a monotone predicate and metric and a bound that an evaluation does not raise (every metric but
  // DM / DM*: a node's key is max(parent key, cheap bound) along its spanning-tree path), the queue above
  // pops nodes in the global (key, levels) order: keys never decrease from a node to its children and a
  // child's levels follow its parent's, so a popped node precedes everything queued after it. The nodes it
  // never pops are below the stop or above a feasible node (generated only through a feasible or
  // dominated ancestor, never expanded), i.e. dominated by a feasible tag, which the sweep skips too.
  // The nodes it pops and decides by a tag (below an infeasible one, above a feasible one) change
  // nothing. So visiting every node in (key, levels) order, skipping the nodes a tag decides, and
  // treating the others exactly as a pop does (probe first, evaluate, probe from an infeasible node)
  // performs the same evaluations and probes in the same order: the same incumbents, optimum and
  // evaluation count, without a queue. Tags only grow (a tag leaves its antichain only for a larger
  // one), so a node decided when its bucket is filtered stays decided. Evaluated nodes are never
  // skipped: a pop of an evaluated infeasible node probes from it again (as the queue does; such a node
  // has only infeasible ancestors, so the queue generates it). Keys: the same doubles as the queue's
  // (the same folds in the same order; the max over the spanning-tree parent). Cost: O(lattice) to
  // compute the keys and bucket them by value (sorted within a bucket, candidates only), then a tag scan
  // per node up to the stop; hence the size limit (the queue touches only what it pops).
SearchResult OptimalSearch::sweep() {
  size_t n_nodes = 1;
  for (int64_t j = 0; j < r; ++j) n_nodes *= static_cast<size_t>(H[static_cast<size_t>(j)] + 1);
  sweep_keys(n_nodes);
  sweep_buckets(n_nodes);
  field_mask.assign(static_cast<size_t>(r), 0);
  for (int64_t j = 0; j < r; ++j) {
    uint32_t b = 0;
    while ((int64_t{1} << b) <= H[static_cast<size_t>(j)]) ++b;
    field_mask[static_cast<size_t>(j)] = (uint64_t{1} << b) - 1;
  }
  std::vector<uint32_t> cand;
  std::vector<int32_t> lv(static_cast<size_t>(r));
  int64_t walked = 0;
  bool stop = false;
  for (size_t b = 0; b < NB && !stop; ++b) {
    cand.clear();
    for (uint32_t i = bstart[b]; i < bstart[b + 1]; ++i) {
      const uint32_t id = order[i];
      if ((++walked & 4095) == 0 && interrupted(hook)) {
        out.status = Status::Interrupted;
        return out;
      }
      const uint64_t c = ncode[id];
      if (!decided(c)) {
        cand.push_back(id);
        continue;
      }
      if (sweep_known[id]) cand.push_back(id);
      else ++out.inferred;
    }
    std::sort(cand.begin(), cand.end(), [&](uint32_t a, uint32_t bb) {
      return nkey[a] != nkey[bb] ? nkey[a] < nkey[bb] : ncode[a] < ncode[bb];
    });
    for (const uint32_t id : cand) {
      const double k = nkey[id];
      const uint64_t c = ncode[id];
      for (int64_t j = 0; j < r; ++j)
        lv[static_cast<size_t>(j)] = static_cast<int32_t>((c >> codec.shift[static_cast<size_t>(j)]) & field_mask[static_cast<size_t>(j)]);
      if (have_best && (k > best || (k == best && lv > out.best))) {
        stop = true;
        break;
      }
      ++out.popped;
      if (poll_interrupt()) {
        out.status = Status::Interrupted;
        return out;
      }
      const bool is_known = known.contains(lv.data());
      if (!is_known && decided(c)) {
        ++out.inferred;
      } else if (!is_known && probe_first && probe(lv, false)) {
        ++out.inferred;
      } else {
        const NodeResult res = eval_node(lv);
        if (!res.feasible) probe(lv, true);  // (p_monotone)
      }
    }
  }
  I.cut_on = I.dm_cut_on = false;
  out.evaluated = I.n_eval - eval0;
  out.swept = true;
  if (!have_best) out.status = Status::Infeasible;
  return out;
}

/// Prefix folds of the Loss bound (loss_lb's operations, in its order) and of the code, from position `from`.
void OptimalSearch::refold(int64_t from, const std::vector<int32_t>& x, std::vector<double>& pf,
                           std::vector<uint64_t>& pc) const {
  const bool loss = I.metric.kind == MetricKind::kLoss;
  const auto agg = I.metric.aggregate;
  for (int64_t j = from; j < r; ++j) {
    const auto l = static_cast<size_t>(x[static_cast<size_t>(j)]);
    const auto ju = static_cast<size_t>(j);
    double v = pf[ju];
    if (loss) {
      switch (agg) {
        case Aggregate::kGeometricMean: v *= I.lb_pow[ju][l]; break;
        case Aggregate::kArithmeticMean: v += I.lb_x[ju][l]; break;
        case Aggregate::kSum: v += I.lb_x[ju][l]; break;
        case Aggregate::kMax: v = std::max(v, I.lb_x[ju][l]); break;
      }
    }
    pf[ju + 1] = v;
    pc[ju + 1] = pc[ju] | (static_cast<uint64_t>(x[ju]) << codec.shift[ju]);
  }
}

/// The sweep's keys (the queue's: max over the spanning-tree parent of the cheap bound) and codes of every node.
void OptimalSearch::sweep_keys(size_t n_nodes) {
  nkey.assign(n_nodes, 0.0);
  ncode.assign(n_nodes, 0);
  sweep_stride.assign(static_cast<size_t>(r), 1);
  for (int64_t j = r - 2; j >= 0; --j)
    sweep_stride[static_cast<size_t>(j)] = sweep_stride[static_cast<size_t>(j + 1)] * (H[static_cast<size_t>(j + 1)] + 1);
  sweep_known.assign(n_nodes, 0);  // (nothing is evaluated yet)
  const std::vector<int64_t>& stride = sweep_stride;
  std::vector<int32_t> x(static_cast<size_t>(r), 0);
  const bool loss = I.metric.kind == MetricKind::kLoss;
  const auto agg = I.metric.aggregate;
  std::vector<double> pf(static_cast<size_t>(r + 1));
  std::vector<uint64_t> pc(static_cast<size_t>(r + 1), 0);
  pf[0] = agg == Aggregate::kGeometricMean ? 1.0 : 0.0;
  refold(0, x, pf, pc);
  int64_t last_nz = -1;  // position of the last nonzero level (the spanning-tree parent lowers it)
  for (size_t idx = 0;;) {
    double lb;
    if (loss) lb = agg == Aggregate::kGeometricMean ? pf[static_cast<size_t>(r)] - 1.0 : pf[static_cast<size_t>(r)];
    else lb = I.cheap_lb(x.data());
    nkey[idx] = last_nz < 0 ? lb : std::max(nkey[idx - static_cast<size_t>(stride[static_cast<size_t>(last_nz)])], lb);
    ncode[idx] = pc[static_cast<size_t>(r)];
    if (++idx == n_nodes) break;
    int64_t p = r - 1;  // odometer: raise the last position that can be raised, reset those after it
    while (x[static_cast<size_t>(p)] == H[static_cast<size_t>(p)]) x[static_cast<size_t>(p--)] = 0;
    x[static_cast<size_t>(p)]++;
    last_nz = p;
    refold(p, x, pf, pc);
  }
}

/// Bucket the nodes by key (monotone map of the key onto [0, NB)), counting sort.
void OptimalSearch::sweep_buckets(size_t n_nodes) {
  NB = std::max<size_t>(1, n_nodes / 8);
  double kmax = nkey[0];
  kmin = nkey[0];
  for (double k : nkey) {
    kmin = std::min(kmin, k);
    kmax = std::max(kmax, k);
  }
  scale = kmax > kmin ? static_cast<double>(NB) / (kmax - kmin) : 0.0;
  bstart.assign(NB + 1, 0);
  for (double k : nkey) bstart[bucket_of(k) + 1]++;
  for (size_t b = 0; b < NB; ++b) bstart[b + 1] += bstart[b];
  order.assign(n_nodes, 0);
  {
    std::vector<uint32_t> pos(bstart.begin(), bstart.end() - 1);
    for (size_t i = 0; i < n_nodes; ++i) order[pos[bucket_of(nkey[i])]++] = static_cast<uint32_t>(i);
  }
}

size_t OptimalSearch::bucket_of(double k) const {
  const double b = (k - kmin) * scale;
  return b >= static_cast<double>(NB - 1) ? NB - 1 : static_cast<size_t>(b);
}

bool OptimalSearch::decided(uint64_t c) const {  // a tag decides the node (evaluated nodes never count as decided)
  for (const auto& f : infeasible_tags)
    if (codec.leq(c, f.code)) return true;
  for (const auto& f : feasible_tags)
    if (codec.leq(f.code, c)) return true;
  return false;
}

// ---- the queue ------------------------------------------------------------------------------------------------
/// The next node (batch[0]); false when the search is over (no node left at or below the incumbent).
// The search takes one node at a time at any thread count: threads work inside a node's evaluation (the
// roll-up's grouping, the histogram merges and the judge of a large frequency set, freqset_par.cpp), never on
// nodes ahead in the queue. Speculative batches of queued nodes, judged in parallel, were measured to lose:
// a node taken later is often decided by a tag or a probe that an earlier one creates, so a batch evaluates
// nodes the serial search never needs (2M-row synthetic census, k=5 + distinct-3 + equal t=0.3, 2 %: 382 ->
// 445 evaluations and 2.4x the time with 2 threads; 776 -> 980 evaluations on 20M rows with 16 threads), and
// the threads wait at the join. So the evaluations, their order and every statistic are the serial search's.
bool OptimalSearch::next_batch() {
  nb = 0;
  bpos = 0;
  if (pq.empty()) return false;
  const auto& top = pq.top();
  if (have_best && (top.key > best || (top.key == best && std::lexicographical_compare(
                                                             out.best.begin(), out.best.end(),
                                                             pq.levels(top), pq.levels(top) + r))))
    return false;
  if (batch.empty()) batch.emplace_back();
  pq.pop_into(batch[nb++]);
  return true;
}

SearchResult OptimalSearch::queue_search() {
  while (true) {
    if (bpos == nb && !next_batch()) break;
    QItem& it = batch[bpos++];
    if (have_best && (it.key > best || (it.key == best && it.lv > out.best))) {
      // children pushed while this batch was processed may precede it: hand the rest back to the queue,
      // whose head decides whether the search is over
      pq.push(it);
      for (; bpos < nb; ++bpos) pq.push(batch[bpos]);
      continue;
    }
    if (grouped_bound) {
      // DM / DM*: the bound is the grouping's Σ n_E², monotone upward, so any evaluated direct predecessor
      // bounds the node (not only its generator). A node whose tightened bound rises goes back to the queue.
      if (!known.contains(it.lv.data())) {
        double kmax = it.key;
        std::vector<int32_t>& pl = it.lv;
        for (int64_t j = 0; j < r; ++j) {
          if (pl[static_cast<size_t>(j)] == 0) continue;
          pl[static_cast<size_t>(j)]--;
          if (const NodeResult* f = known.find(pl.data())) kmax = std::max(kmax, f->lower_bound);
          pl[static_cast<size_t>(j)]++;
        }
        if (kmax > it.key) {
          it.key = kmax;
          pq.push(it);
          continue;
        }
      }
    }
    ++out.popped;
    if (poll_interrupt()) {
      out.status = Status::Interrupted;
      return out;
    }
    double child_key = it.key;
    bool expand = true;
    const bool is_known = known.contains(it.lv.data());
    if (!is_known && I.p_monotone && dominated_by_feasible(it.lv)) {
      ++out.inferred;
      if (trace) trace->push_back({it.lv, NodeResult{true, 0, 0, 0, 0, 0}, 1});
      if (I.m_monotone) continue;  // every node above is feasible and no better
      NodeResult res = eval_node(it.lv);
      child_key = std::max(child_key, res.lower_bound);
    } else if (!is_known && below_infeasible(it.lv)) {
      ++out.inferred;
      if (trace) trace->push_back({it.lv, NodeResult{}, 2});
      if (eager) {
        if (!expand_below(it, below_tag)) {
          out.status = Status::Interrupted;
          return out;
        }
        continue;
      }
    } else if (!is_known && probe_first && probe(it.lv, false)) {
      // Probe first (see probe_first): a popped node that is not yet decided is usually low in the lattice,
      // so its own grouping is the most expensive of its path; an infeasible node above it (with a
      // non-monotone predicate: one violating the monotone part) decides it for free.
      ++out.inferred;
      if (trace) trace->push_back({it.lv, NodeResult{}, 2});
    } else {
      NodeResult res = eval_node(it.lv);
      child_key = std::max(child_key, res.lower_bound);
      if (res.partial) continue;  // it and every node above it are worse than the incumbent
      if (res.feasible && I.m_monotone) expand = false;
      if (!res.feasible && (I.p_monotone || res.suppressed_size > I.limit)) probe(it.lv, true);
    }
    if (!expand) continue;
    for (int64_t j = it.first; j < r; ++j) {
      if (it.lv[static_cast<size_t>(j)] >= H[static_cast<size_t>(j)]) continue;
      const uint64_t cc = codec.on ? it.code + (uint64_t{1} << codec.shift[static_cast<size_t>(j)]) : 0;
      const int32_t id = pq.alloc();
      int32_t* c = pq.slot(id);
      std::copy(it.lv.begin(), it.lv.end(), c);
      c[j]++;
      pq.push_id(std::max(child_key, I.cheap_lb(c)), cc, static_cast<int32_t>(j), id);
    }
  }
  I.cut_on = I.dm_cut_on = false;
  out.evaluated = I.n_eval - eval0;
  if (!have_best) out.status = Status::Infeasible;
  return out;
}

SearchResult OptimalSearch::run() {
  std::vector<int32_t> bottom(static_cast<size_t>(r), 0);
  pq.push({I.cheap_lb(bottom.data()), bottom, 0, codec.encode(bottom)});
  if (sweep_applies()) return sweep();
  return queue_search();
}

}  // namespace anoncore::lattice::detail

namespace anoncore::lattice {

SearchResult Engine::optimal(const InterruptHook& hook, std::vector<TraceEntry>* trace, bool allow_sweep) {
  detail::OptimalSearch search(*impl_, hook, trace, allow_sweep);
  return search.run();
}

}  // namespace anoncore::lattice

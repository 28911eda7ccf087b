// Brandes betweenness and distance sums per source (see anoncore/graph/paths.hpp).
#include "anoncore/graph/paths.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <exception>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "anoncore/core/parallel.hpp"

#ifdef ANONCORE_HAVE_OPENMP
#include <omp.h>
#endif

namespace anoncore::graph {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Per-node state of one source's search, kept together so that an edge touches one cache line: distance,
// shortest-path count, dependency, and (1 + dependency) / count, the term every predecessor adds.
struct NodeState {
  double dist = kInf;
  double sigma = 0.0;
  double delta = 0.0;
  double ratio = 0.0;
};

// Per-thread scratch: node states and the reached nodes in settling order.
struct Workspace {
  std::vector<NodeState> st;
  std::vector<int64_t> order;
  explicit Workspace(int64_t n) : st(static_cast<size_t>(n)) { order.reserve(static_cast<size_t>(n)); }
};

void bfs(const CsrView& g, int64_t s, Workspace& ws) {
  ws.order.clear();
  NodeState* st = ws.st.data();
  st[s].dist = 0.0;
  st[s].sigma = 1.0;
  ws.order.push_back(s);
  for (size_t head = 0; head < ws.order.size(); ++head) {
    const int64_t v = ws.order[head];
    const double dv = st[v].dist + 1.0;
    const double sv = st[v].sigma;
    for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
      const int64_t w = g.targets[e];
      NodeState& sw = st[w];
      if (sw.dist == kInf) {
        sw.dist = dv;
        ws.order.push_back(w);
      }
      if (sw.dist == dv) sw.sigma += sv;
    }
  }
}

void dijkstra(const CsrView& g, int64_t s, Workspace& ws) {
  using Item = std::pair<double, int64_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  ws.order.clear();
  NodeState* st = ws.st.data();
  st[s].dist = 0.0;
  st[s].sigma = 1.0;
  heap.emplace(0.0, s);
  // delta doubles as the "settled" mark during the search (reset to 0 before accumulation)
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    if (st[v].delta != 0.0 || d > st[v].dist) continue;
    st[v].delta = 1.0;
    ws.order.push_back(v);
    const double sv = st[v].sigma;
    for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
      const int64_t w = g.targets[e];
      NodeState& sw = st[w];
      if (sw.delta != 0.0) continue;
      const double nd = d + g.lengths[e];
      if (nd < sw.dist) {
        sw.dist = nd;
        sw.sigma = sv;
        heap.emplace(nd, w);
      } else if (nd == sw.dist) {
        sw.sigma += sv;
      }
    }
  }
  for (const int64_t v : ws.order) st[v].delta = 0.0;
}

// Dependencies in reverse settling order: delta(v) = sigma(v) * sum over successors w of (1 + delta(w)) / sigma(w).
void accumulate(const CsrView& g, Workspace& ws) {
  NodeState* st = ws.st.data();
  const bool weighted = g.weighted();
  for (size_t i = ws.order.size(); i-- > 0;) {
    const int64_t v = ws.order[i];
    const double dv = st[v].dist;
    double acc = 0.0;
    if (weighted) {
      for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
        const NodeState& sw = st[g.targets[e]];
        if (sw.dist == dv + g.lengths[e]) acc += sw.ratio;
      }
    } else {
      const double next = dv + 1.0;
      for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
        const NodeState& sw = st[g.targets[e]];
        if (sw.dist == next) acc += sw.ratio;
      }
    }
    st[v].delta = st[v].sigma * acc;
    st[v].ratio = (1.0 + st[v].delta) / st[v].sigma;
  }
}

void clear(Workspace& ws) {
  for (const int64_t v : ws.order) ws.st[static_cast<size_t>(v)] = NodeState{};
}

// One source: search, distance sums, dependencies (left in the workspace for the ordered fold).
void run_source(const CsrView& g, Span<int64_t> sources, int64_t i, const SweepOutputs& out, Workspace& w) {
  const int64_t s = sources[i];
  if (g.weighted()) dijkstra(g, s, w); else bfs(g, s, w);
  if (out.dist_sum.size > 0 || out.harmonic.size > 0 || out.reach.size > 0) {
    double ds = 0.0, hs = 0.0;
    for (size_t j = 1; j < w.order.size(); ++j) {
      const double d = w.st[static_cast<size_t>(w.order[j])].dist;
      ds += d;
      hs += 1.0 / d;
    }
    if (out.reach.size > 0) out.reach[i] = static_cast<int64_t>(w.order.size()) - 1;
    if (out.dist_sum.size > 0) out.dist_sum[i] = ds;
    if (out.harmonic.size > 0) out.harmonic[i] = hs;
  }
  if (out.betweenness.size > 0) accumulate(g, w);
}

// Add the source's dependencies (order[0] is the source itself) and reset the workspace.
void fold(const SweepOutputs& out, Workspace& w) {
  if (out.betweenness.size > 0)
    for (size_t j = 1; j < w.order.size(); ++j) {
      const int64_t v = w.order[j];
      out.betweenness[v] += w.st[static_cast<size_t>(v)].delta;
    }
  clear(w);
}

// Worker loop: take the next source from a shared counter, run it, wait (sleeping, not spinning: the machine may
// be oversubscribed) for its turn, fold it, pass the turn on. The fold happens in source order, so the sums (and
// the output bits) do not depend on the thread count, and the threads never meet at a barrier between sources.
struct Scheduler {
  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  int64_t turn = 0;
  std::exception_ptr error = nullptr;
};

void worker(const CsrView& g, Span<int64_t> sources, const SweepOutputs& out, Workspace& w, Scheduler& sch,
            const InterruptHook& hook) {
  constexpr int64_t kPoll = 64;  // sources between interrupt polls
  for (;;) {
    const int64_t i = sch.next.fetch_add(1);
    if (i >= sources.size) return;
    bool ok = !sch.stop.load();
    if (ok) {
      try {
        run_source(g, sources, i, out, w);
      } catch (...) {
        std::lock_guard<std::mutex> lk(sch.mu);
        if (!sch.error) sch.error = std::current_exception();
        sch.stop.store(true);
        ok = false;
      }
    }
    {
      std::unique_lock<std::mutex> lk(sch.mu);
      sch.cv.wait(lk, [&] { return sch.turn == i; });
    }
    if (ok) fold(out, w); else clear(w);
    if (i % kPoll == kPoll - 1 && !sch.stop.load() && interrupted(hook)) sch.stop.store(true);
    {
      std::lock_guard<std::mutex> lk(sch.mu);
      sch.turn = i + 1;
    }
    sch.cv.notify_all();
  }
}

}  // namespace

Status path_sweep(const CsrView& g, Span<int64_t> sources, const SweepOutputs& out, int n_threads,
                  const InterruptHook& hook) {
  const int64_t n = g.n();
  const int64_t k = sources.size;
  if (out.betweenness.size > 0) std::fill(out.betweenness.begin(), out.betweenness.end(), 0.0);
  if (k == 0) return Status::Ok;
  const int threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(k, resolve_threads(n_threads))));
  std::vector<Workspace> ws;
  ws.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) ws.emplace_back(n);
  Scheduler sch;
#ifdef ANONCORE_HAVE_OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
  worker(g, sources, out, ws[static_cast<size_t>(omp_get_thread_num())], sch, hook);
#else
  worker(g, sources, out, ws[0], sch, hook);
#endif
  if (sch.error) std::rethrow_exception(sch.error);
  if (sch.stop.load()) return Status::Interrupted;
  return Status::Ok;
}

}  // namespace anoncore::graph

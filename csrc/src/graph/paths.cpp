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

// Per-slot scratch: distances, shortest-path counts, dependencies and the nodes in settling order.
struct Workspace {
  std::vector<double> dist, sigma, delta;
  std::vector<int64_t> order;
  explicit Workspace(int64_t n)
      : dist(static_cast<size_t>(n), kInf), sigma(static_cast<size_t>(n), 0.0), delta(static_cast<size_t>(n), 0.0) {
    order.reserve(static_cast<size_t>(n));
  }
};

void bfs(const CsrView& g, int64_t s, Workspace& ws) {
  ws.order.clear();
  ws.dist[static_cast<size_t>(s)] = 0.0;
  ws.sigma[static_cast<size_t>(s)] = 1.0;
  ws.order.push_back(s);
  for (size_t head = 0; head < ws.order.size(); ++head) {
    const int64_t v = ws.order[head];
    const double dv = ws.dist[static_cast<size_t>(v)] + 1.0;
    const double sv = ws.sigma[static_cast<size_t>(v)];
    for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
      const auto w = static_cast<size_t>(g.targets[e]);
      if (ws.dist[w] == kInf) {
        ws.dist[w] = dv;
        ws.order.push_back(g.targets[e]);
      }
      if (ws.dist[w] == dv) ws.sigma[w] += sv;
    }
  }
}

void dijkstra(const CsrView& g, int64_t s, Workspace& ws) {
  using Item = std::pair<double, int64_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  ws.order.clear();
  ws.dist[static_cast<size_t>(s)] = 0.0;
  ws.sigma[static_cast<size_t>(s)] = 1.0;
  heap.emplace(0.0, s);
  // delta doubles as the "settled" mark during the search (reset to 0 before accumulation)
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    const auto vi = static_cast<size_t>(v);
    if (ws.delta[vi] != 0.0 || d > ws.dist[vi]) continue;
    ws.delta[vi] = 1.0;
    ws.order.push_back(v);
    const double sv = ws.sigma[vi];
    for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
      const auto w = static_cast<size_t>(g.targets[e]);
      if (ws.delta[w] != 0.0) continue;
      const double nd = d + g.lengths[e];
      if (nd < ws.dist[w]) {
        ws.dist[w] = nd;
        ws.sigma[w] = sv;
        heap.emplace(nd, g.targets[e]);
      } else if (nd == ws.dist[w]) {
        ws.sigma[w] += sv;
      }
    }
  }
  for (const int64_t v : ws.order) ws.delta[static_cast<size_t>(v)] = 0.0;
}

// Dependencies in reverse settling order: delta(v) = sum over successors w of sigma(v)/sigma(w) (1 + delta(w)).
void accumulate(const CsrView& g, Workspace& ws) {
  const bool weighted = g.weighted();
  for (size_t i = ws.order.size(); i-- > 0;) {
    const int64_t v = ws.order[i];
    const auto vi = static_cast<size_t>(v);
    const double dv = ws.dist[vi];
    double acc = 0.0;
    for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
      const auto w = static_cast<size_t>(g.targets[e]);
      const double len = weighted ? g.lengths[e] : 1.0;
      if (ws.dist[w] == dv + len) acc += (1.0 + ws.delta[w]) / ws.sigma[w];
    }
    ws.delta[vi] = ws.sigma[vi] * acc;
  }
}

void clear(Workspace& ws) {
  for (const int64_t v : ws.order) {
    const auto vi = static_cast<size_t>(v);
    ws.dist[vi] = kInf;
    ws.sigma[vi] = 0.0;
    ws.delta[vi] = 0.0;
  }
}

// One source: search, distance sums, dependencies (left in the workspace for the ordered fold).
void run_source(const CsrView& g, Span<int64_t> sources, int64_t i, const SweepOutputs& out, Workspace& w) {
  const int64_t s = sources[i];
  if (g.weighted()) dijkstra(g, s, w); else bfs(g, s, w);
  if (out.dist_sum.size > 0 || out.harmonic.size > 0 || out.reach.size > 0) {
    double ds = 0.0, hs = 0.0;
    for (size_t j = 1; j < w.order.size(); ++j) {
      const double d = w.dist[static_cast<size_t>(w.order[j])];
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
      out.betweenness[v] += w.delta[static_cast<size_t>(v)];
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

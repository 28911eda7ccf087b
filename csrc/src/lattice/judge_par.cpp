// The class-by-class passes of judge on several threads (issue 16): the monotone part by value masks (pass 1)
// and the other criteria (pass 2, with histograms merged on the fly for a deferred set), over chunks of a
// large set's classes. Every class's verdict depends on that class alone, so the flags are the serial ones;
// what the serial loop adds is its early stop: it flags classes in order and stops at the first class where
// the rows flagged exceed the suppression limit. The chunks reproduce that exactly:
//  - each chunk judges its classes in order, keeps the rows it flagged (its running sum), and publishes that
//    sum now and then; with an early stop it stops, or is skipped, once its own sum plus the sums published
//    by the chunks before it exceed the room left (those sums only grow, so this is a lower bound of the serial
//    running sum at that class: the serial loop has stopped at or before it);
//  - then the chunks are walked in order with the serial running sum: the chunk where it passes the room is
//    walked class by class to the serial stop, and every flag after it is cleared. A chunk that stopped or was
//    skipped is never passed whole (its stop proves the serial stop at or before it).
// So flags, suppressed rows and the stop are the serial ones at any thread count; threads change only how
// many classes past the stop are judged and thrown away (at most about a poll interval per thread).
#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <vector>

#include "anoncore/core/parallel.hpp"
#include "anoncore/lattice/engine_impl.hpp"

namespace anoncore::lattice {
namespace {

/// The chunks of a parallel pass over C classes (64, fixed by C alone) and the sums they publish every
/// `poll` classes (1,024, or a quarter chunk).
struct ClassChunks {
  int64_t C, chunk, K, poll;
  std::vector<int64_t> end, sum;  // per chunk: its classes judged [lo, end), the rows they flagged
  std::unique_ptr<std::atomic<int64_t>[]> part;  // per chunk: rows flagged so far (published)

  explicit ClassChunks(int64_t n_classes)
      : C(n_classes), chunk(std::max<int64_t>(1, (n_classes + 63) / 64)), K((n_classes + chunk - 1) / chunk),
        poll(std::clamp<int64_t>(chunk / 4, 1, 1024)),
        end(static_cast<size_t>(K), 0), sum(static_cast<size_t>(K), 0),
        part(new std::atomic<int64_t>[static_cast<size_t>(K)]) {
    for (int64_t k = 0; k < K; ++k) part[k].store(0, std::memory_order_relaxed);
  }
  int64_t lo(int64_t k) const { return k * chunk; }
  int64_t hi(int64_t k) const { return std::min(C, (k + 1) * chunk); }
  /// Whether the rows chunk k has flagged (own) and those published by the chunks before it exceed room.
  bool beyond(int64_t k, int64_t own, int64_t room) const {
    int64_t t = own;
    for (int64_t j = 0; j < k && t <= room; ++j) t += part[j].load(std::memory_order_relaxed);
    return t > room;
  }
  /// Chunk k's classes judged in order by judge_one(c) (rows flagged, 0 when none) until, with stop, its rows
  /// and those published before it exceed room; its end and sum recorded.
  template <class JudgeOne>
  void run(int64_t k, bool stop, int64_t room, JudgeOne&& judge_one) {
    int64_t own = 0, c = lo(k);
    const int64_t h = hi(k);
    if (!(stop && beyond(k, 0, room))) {
      int64_t next_poll = c + poll;
      while (c < h) {
        own += judge_one(c++);
        if (stop && own > room) break;
        if (c == next_poll) {
          next_poll += poll;
          part[k].store(own, std::memory_order_relaxed);
          if (stop && beyond(k, own, room)) break;
        }
      }
    }
    part[k].store(own, std::memory_order_relaxed);
    end[static_cast<size_t>(k)] = c;
    sum[static_cast<size_t>(k)] = own;
  }
};

/// The scratch of the calling thread in a parallel judge: the caller's for thread 0, else the engine's own
/// scratch of that thread (criteria workspace prepared, its memo of mask verdicts kept; free outside the
/// parallel batches, and par_threads keeps a judge serial inside them).
Scratch& thread_scratch(Scratch& s, std::vector<Scratch>& per_thread) {
  const int t = thread_index();
  return t == 0 ? s : per_thread[static_cast<size_t>(t)];
}

/// The engine's per-thread scratches for a parallel judge on T threads, checked to be free of the caller's.
std::vector<Scratch>& judge_scratches(const std::vector<Scratch>& scratch, const Scratch& s, int T) {
  auto& all = const_cast<std::vector<Scratch>&>(scratch);
  if (static_cast<int>(all.size()) < T) throw std::logic_error("parallel judge: fewer scratches than threads");
  for (int t = 1; t < T; ++t)
    if (&all[static_cast<size_t>(t)] == &s) throw std::logic_error("parallel judge: the caller's scratch is a thread's");
  return all;
}

[[noreturn]] void lost_stop() {
  throw std::logic_error("parallel judge: a chunk stopped before the serial stop");
}

}  // namespace

int64_t Engine::Impl::judge_monotone_par(int T, const FreqSet& f, Scratch& s, bool stop) const {
  const detail::PhaseScope timed(phases, detail::Phase::kJudgePar);
  const int64_t C = f.n_classes;
  std::vector<Scratch>& per_thread = judge_scratches(scratch, s, T);
  const int64_t* cnt = f.count.data();
  const uint64_t* vm = f.vmask.data();
  uint8_t* viol = s.viol.data();
  uint8_t* viol_m = s.viol_m.data();
  ClassChunks ch(C);
  parallel_chunks(C, ch.chunk, T, [&](int64_t k, int64_t, int64_t) {
    Scratch& ts = thread_scratch(s, per_thread);
    ch.run(k, stop, limit, [&](int64_t c) -> int64_t {
      if (cnt[c] >= min_size && !mask_violates(vm[c], ts)) return 0;
      viol[c] = viol_m[c] = 1;
      return cnt[c];
    });
  });
  int64_t SM = 0;
  for (int64_t k = 0; k < ch.K; ++k) {
    const int64_t e = ch.end[static_cast<size_t>(k)];
    if (!stop || SM + ch.sum[static_cast<size_t>(k)] <= limit) {
      if (e != ch.hi(k)) lost_stop();
      SM += ch.sum[static_cast<size_t>(k)];
      continue;
    }
    int64_t c = ch.lo(k);
    for (; c < e; ++c)
      if (viol[c] && (SM += cnt[c]) > limit) break;
    if (c == e) lost_stop();
    std::fill(viol + c + 1, viol + C, uint8_t{0});  // (the serial loop stops at c)
    std::fill(viol_m + c + 1, viol_m + C, uint8_t{0});
    return SM;
  }
  return SM;
}

bool Engine::Impl::judge_rest_par(int T, const FreqSet& f, Scratch& s, bool early, bool lazy, bool two, int64_t& S,
                                  int64_t& SM) const {
  const detail::PhaseScope timed(phases, detail::Phase::kJudgePar);
  const int64_t C = f.n_classes;
  std::vector<Scratch>& per_thread = judge_scratches(scratch, s, T);
  for (int t = 1; t < T; ++t) {
    auto& acc = per_thread[static_cast<size_t>(t)].lz_acc;
    if (lazy && static_cast<int64_t>(acc.size()) < m) acc.assign(static_cast<size_t>(m), 0);
  }
  const int64_t* cnt = f.count.data();
  uint8_t* viol = s.viol.data();
  uint8_t* viol_m = s.viol_m.data();
  const int64_t room = limit - S;  // (early: the serial loop stops once the rows flagged here exceed it)
  ClassChunks ch(C);
  std::vector<std::vector<int64_t>> flagged(static_cast<size_t>(ch.K));  // per chunk: the classes it flagged
  parallel_chunks(C, ch.chunk, T, [&](int64_t k, int64_t, int64_t) {
    Scratch& ts = thread_scratch(s, per_thread);
    auto& fl = flagged[static_cast<size_t>(k)];
    ch.run(k, early, room, [&](int64_t c) -> int64_t {
      if (viol[c]) return 0;
      uint8_t v = 0, vm = 0;
      check_one(f, s, ts, c, lazy, two, v, vm);
      if (!v) return 0;
      viol[c] = 1;
      viol_m[c] = vm;
      fl.push_back(c);
      return cnt[c];
    });
  });
  int64_t added = 0;
  for (int64_t k = 0; k < ch.K; ++k) {
    const auto& fl = flagged[static_cast<size_t>(k)];
    if (!early || added + ch.sum[static_cast<size_t>(k)] <= room) {
      if (ch.end[static_cast<size_t>(k)] != ch.hi(k)) lost_stop();
      added += ch.sum[static_cast<size_t>(k)];
      for (const int64_t c : fl) SM += viol_m[c] ? cnt[c] : 0;
      continue;
    }
    size_t x = 0;
    for (; x < fl.size(); ++x) {
      const int64_t c = fl[x];
      added += cnt[c];
      if (viol_m[c]) SM += cnt[c];
      if (added > room) break;
    }
    if (x == fl.size()) lost_stop();
    auto unflag = [viol, viol_m](int64_t c) { viol[c] = viol_m[c] = 0; };  // (the serial loop stops at fl[x])
    for (size_t y = x + 1; y < fl.size(); ++y) unflag(fl[y]);
    for (int64_t j = k + 1; j < ch.K; ++j)
      for (const int64_t c : flagged[static_cast<size_t>(j)]) unflag(c);
    S += added;
    return true;
  }
  S += added;
  return false;
}

}  // namespace anoncore::lattice

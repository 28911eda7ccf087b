#include "anoncore/mondrian/mondrian.hpp"

#include "anoncore/criteria/criteria.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace anoncore::mondrian {

void KAnonymityModel::check(Matrix<int64_t>, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  for (int64_t c = 0; c < sizes.size; ++c) ok[c] = sizes[c] >= k_ ? 1 : 0;
}

void TClosenessModel::check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  std::vector<double> d(static_cast<size_t>(hist.rows));
  const Span<int64_t> ref{reference_.data(), static_cast<int64_t>(reference_.size())};
  const MutSpan<double> out{d.data(), hist.rows};
  if (h_ != nullptr)
    twophase::emd_hierarchical_classes(hist, sizes, ref, *h_, out, 1);
  else
    twophase::emd_ordered_classes(hist, sizes, ref, out, 1);
  for (int64_t c = 0; c < hist.rows; ++c) ok[c] = (sizes[c] > 0 && d[static_cast<size_t>(c)] <= t_ + 1e-12) ? 1 : 0;
}

void BetaLikenessModel::check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  std::vector<double> v(static_cast<size_t>(hist.rows));
  criteria::beta_likeness(hist, sizes, Span<int64_t>{reference_.data(), static_cast<int64_t>(reference_.size())},
                          enhanced_, MutSpan<double>{v.data(), hist.rows}, 1);
  for (int64_t c = 0; c < hist.rows; ++c) ok[c] = (sizes[c] > 0 && v[static_cast<size_t>(c)] <= beta_) ? 1 : 0;
}

void DeltaDisclosureModel::check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  std::vector<double> v(static_cast<size_t>(hist.rows));
  criteria::delta_disclosure(hist, sizes, Span<int64_t>{reference_.data(), static_cast<int64_t>(reference_.size())},
                             MutSpan<double>{v.data(), hist.rows}, 1);
  for (int64_t c = 0; c < hist.rows; ++c) ok[c] = (sizes[c] > 0 && v[static_cast<size_t>(c)] < delta_) ? 1 : 0;
}

GroupBetaLikenessModel::GroupBetaLikenessModel(std::vector<int64_t> reference, double beta, std::vector<int32_t> ranges)
    : prefix_(reference.size() + 1, 0), beta_(beta), ranges_(std::move(ranges)) {
  for (size_t v = 0; v < reference.size(); ++v) prefix_[v + 1] = prefix_[v] + reference[v];
  const double P = static_cast<double>(prefix_.back());
  for (size_t g = 0; g + 1 < ranges_.size(); g += 2) {
    const int64_t r = prefix_[static_cast<size_t>(ranges_[g + 1] + 1)] - prefix_[static_cast<size_t>(ranges_[g])];
    bound_.push_back(r > 0 ? std::min(beta_, -std::log(static_cast<double>(r) / P)) : 0.0);
  }
}

void GroupBetaLikenessModel::check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  const int64_t P = prefix_.back();
  for (int64_t c = 0; c < hist.rows; ++c) {
    const int64_t Q = sizes[c];
    bool good = Q > 0;
    const int64_t* h = hist.row(c);
    for (size_t g = 0; good && g + 1 < ranges_.size(); g += 2) {
      int64_t x = 0;
      for (int32_t v = ranges_[g]; v <= ranges_[g + 1]; ++v) x += h[v];
      const int64_t r = prefix_[static_cast<size_t>(ranges_[g + 1] + 1)] - prefix_[static_cast<size_t>(ranges_[g])];
      if (r == 0) {
        good = x == 0;
        continue;
      }
      const int64_t num = x * P - r * Q;
      if (num <= 0) continue;
      good = static_cast<double>(num) / (static_cast<double>(r) * static_cast<double>(Q)) <= bound_[g / 2];
    }
    ok[c] = good ? 1 : 0;
  }
}

HierarchySplit make_hierarchy_split(Span<int32_t> parent, Span<int32_t> leaf_start, Span<int32_t> leaf_count) {
  HierarchySplit h;
  const int64_t n = parent.size;
  h.parent.assign(parent.data, parent.data + n);
  h.leaf_start.assign(leaf_start.data, leaf_start.data + n);
  h.leaf_count.assign(leaf_count.data, leaf_count.data + n);
  h.child_offset.assign(static_cast<size_t>(n + 1), 0);
  for (int64_t v = 0; v < n; ++v)
    if (parent[v] >= 0) ++h.child_offset[static_cast<size_t>(parent[v] + 1)];
  for (int64_t v = 0; v < n; ++v) h.child_offset[static_cast<size_t>(v + 1)] += h.child_offset[static_cast<size_t>(v)];
  h.child.assign(static_cast<size_t>(h.child_offset.back()), 0);
  std::vector<int64_t> fill(h.child_offset.begin(), h.child_offset.end() - 1);
  for (int64_t v = 0; v < n; ++v)
    if (parent[v] >= 0) h.child[static_cast<size_t>(fill[static_cast<size_t>(parent[v])]++)] = static_cast<int32_t>(v);
  for (int64_t v = 0; v < n; ++v)
    std::sort(h.child.begin() + h.child_offset[static_cast<size_t>(v)], h.child.begin() + h.child_offset[static_cast<size_t>(v + 1)],
              [&](int32_t a, int32_t b) { return h.leaf_start[static_cast<size_t>(a)] < h.leaf_start[static_cast<size_t>(b)]; });
  return h;
}

MondrianOutput mondrian(const MondrianInput& in) {
  MondrianOutput out;
  const int64_t n = in.qi.rows, d = in.qi.cols, m = in.m;
  out.labels.assign(static_cast<size_t>(n), -1);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), int64_t{0});
  std::vector<std::pair<int64_t, int64_t>> stack{{0, n}};
  std::vector<int32_t> lo(static_cast<size_t>(d)), hi(static_cast<size_t>(d)), vals;
  std::vector<int64_t> order(static_cast<size_t>(d));
  std::vector<double> width(static_cast<size_t>(d));
  std::vector<int64_t> hist(static_cast<size_t>(2 * m)), sizes(2);
  std::vector<uint8_t> ok(2), all_ok(2);
  std::vector<int64_t> gsize, ghist, rgroup, tmp;  // hierarchy-based splits
  int64_t visited = 0;
  while (!stack.empty()) {
    if ((++visited & 0xFFF) == 0 && interrupted(in.interrupt)) {
      out.status = Status::Interrupted;
      return out;
    }
    const auto [b, e] = stack.back();
    stack.pop_back();
    std::fill(lo.begin(), lo.end(), INT32_MAX);
    std::fill(hi.begin(), hi.end(), -1);
    for (int64_t i = b; i < e; ++i) {
      const int32_t* row = in.qi.row(idx[static_cast<size_t>(i)]);
      for (int64_t j = 0; j < d; ++j) {
        lo[static_cast<size_t>(j)] = std::min(lo[static_cast<size_t>(j)], row[j]);
        hi[static_cast<size_t>(j)] = std::max(hi[static_cast<size_t>(j)], row[j]);
      }
    }
    for (int64_t j = 0; j < d; ++j)
      width[static_cast<size_t>(j)] = in.coords.at(hi[static_cast<size_t>(j)], j) - in.coords.at(lo[static_cast<size_t>(j)], j);
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t x, int64_t y) { return width[static_cast<size_t>(x)] > width[static_cast<size_t>(y)]; });
    bool split = false;
    for (int64_t j : order) {
      if (lo[static_cast<size_t>(j)] == hi[static_cast<size_t>(j)]) break;
      if (!in.hierarchy_split.empty() && in.hierarchy_split[static_cast<size_t>(j)].enabled()) {
        // Hierarchy-based split: the children of the LCA of the present codes (a contiguous leaf range).
        const HierarchySplit& hs = in.hierarchy_split[static_cast<size_t>(j)];
        const int32_t a = lo[static_cast<size_t>(j)], z = hi[static_cast<size_t>(j)];
        int32_t node = a;
        while (!(hs.leaf_start[static_cast<size_t>(node)] <= a &&
                 hs.leaf_start[static_cast<size_t>(node)] + hs.leaf_count[static_cast<size_t>(node)] > z))
          node = hs.parent[static_cast<size_t>(node)];
        const int32_t* ch = hs.child.data() + hs.child_offset[static_cast<size_t>(node)];
        const auto nch = static_cast<int64_t>(hs.child_offset[static_cast<size_t>(node + 1)] - hs.child_offset[static_cast<size_t>(node)]);
        const auto child_of = [&](int32_t code) {
          int64_t l = 0, r = nch - 1;  // last child with leaf_start <= code
          while (l < r) {
            const int64_t mid2 = (l + r + 1) / 2;
            if (hs.leaf_start[static_cast<size_t>(ch[mid2])] <= code) l = mid2; else r = mid2 - 1;
          }
          return l;
        };
        gsize.assign(static_cast<size_t>(nch), 0);
        ghist.assign(static_cast<size_t>(nch * m), 0);
        rgroup.resize(static_cast<size_t>(e - b));
        for (int64_t i = b; i < e; ++i) {
          const int64_t r = idx[static_cast<size_t>(i)];
          const int64_t g = child_of(in.qi(r, j));
          rgroup[static_cast<size_t>(i - b)] = g;
          ++gsize[static_cast<size_t>(g)];
          ++ghist[static_cast<size_t>(g * m + in.sa[r])];
        }
        // Compact the non-empty children (the models refuse empty classes).
        std::vector<int64_t> slot(static_cast<size_t>(nch), -1);
        int64_t C = 0;
        for (int64_t g = 0; g < nch; ++g) {
          if (gsize[static_cast<size_t>(g)] == 0) continue;
          slot[static_cast<size_t>(g)] = C;
          if (C != g) {
            std::copy(ghist.begin() + g * m, ghist.begin() + (g + 1) * m, ghist.begin() + C * m);
            gsize[static_cast<size_t>(C)] = gsize[static_cast<size_t>(g)];
          }
          ++C;
        }
        if (C < 2) continue;
        std::vector<uint8_t> one(static_cast<size_t>(C));
        bool good = true;
        for (const ClassModel* model : in.models) {
          model->check(Matrix<int64_t>{ghist.data(), C, m}, Span<int64_t>{gsize.data(), C}, MutSpan<uint8_t>{one.data(), C});
          for (int64_t c = 0; c < C; ++c) good = good && one[static_cast<size_t>(c)];
          if (!good) break;
        }
        if (!good) {
          ++out.n_refused;
          continue;
        }
        // Counting sort of [b, e) by child (stable), then push the parts so the first child is popped first.
        std::vector<int64_t> start(static_cast<size_t>(C + 1), 0);
        for (int64_t c = 0; c < C; ++c) start[static_cast<size_t>(c + 1)] = start[static_cast<size_t>(c)] + gsize[static_cast<size_t>(c)];
        tmp.resize(static_cast<size_t>(e - b));
        std::vector<int64_t> pos(start.begin(), start.end() - 1);
        for (int64_t i = b; i < e; ++i) {
          const int64_t c = slot[static_cast<size_t>(rgroup[static_cast<size_t>(i - b)])];
          tmp[static_cast<size_t>(pos[static_cast<size_t>(c)]++)] = idx[static_cast<size_t>(i)];
        }
        std::copy(tmp.begin(), tmp.end(), idx.begin() + b);
        out.n_splits += C - 1;
        for (int64_t c = C - 1; c >= 0; --c)
          stack.emplace_back(b + start[static_cast<size_t>(c)], b + start[static_cast<size_t>(c + 1)]);
        split = true;
        break;
      }
      vals.clear();
      for (int64_t i = b; i < e; ++i) vals.push_back(in.qi(idx[static_cast<size_t>(i)], j));
      const auto mid = static_cast<std::ptrdiff_t>((vals.size() - 1) / 2);
      std::nth_element(vals.begin(), vals.begin() + mid, vals.end());
      int32_t cut = vals[static_cast<size_t>(mid)];  // left: codes <= cut
      if (cut >= hi[static_cast<size_t>(j)]) {
        // Everything is <= the median: put the median's ties on the right instead (left: codes < median).
        int32_t below = INT32_MIN;
        for (int32_t v : vals)
          if (v < cut) below = std::max(below, v);
        cut = below;
      }
      std::fill(hist.begin(), hist.end(), 0);
      sizes[0] = sizes[1] = 0;
      for (int64_t i = b; i < e; ++i) {
        const int64_t r = idx[static_cast<size_t>(i)];
        const int side = in.qi(r, j) <= cut ? 0 : 1;
        ++sizes[static_cast<size_t>(side)];
        ++hist[static_cast<size_t>(side * m + in.sa[r])];
      }
      if (sizes[0] == 0 || sizes[1] == 0) continue;
      std::fill(all_ok.begin(), all_ok.end(), 1);
      for (const ClassModel* model : in.models) {
        model->check(Matrix<int64_t>{hist.data(), 2, m}, Span<int64_t>{sizes.data(), 2}, MutSpan<uint8_t>{ok.data(), 2});
        all_ok[0] = all_ok[0] && ok[0];
        all_ok[1] = all_ok[1] && ok[1];
        if (!(all_ok[0] && all_ok[1])) break;
      }
      if (!(all_ok[0] && all_ok[1])) {
        ++out.n_refused;
        continue;
      }
      const auto pivot = std::stable_partition(idx.begin() + b, idx.begin() + e,
                                               [&](int64_t r) { return in.qi(r, j) <= cut; });
      const auto m_ = static_cast<int64_t>(pivot - idx.begin());
      ++out.n_splits;
      stack.emplace_back(m_, e);
      stack.emplace_back(b, m_);
      split = true;
      break;
    }
    if (!split) {
      for (int64_t i = b; i < e; ++i) out.labels[static_cast<size_t>(idx[static_cast<size_t>(i)])] = out.n_classes;
      ++out.n_classes;
    }
  }
  return out;
}

}  // namespace anoncore::mondrian

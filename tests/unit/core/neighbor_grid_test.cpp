// The neighbour grid against an O(N^2) brute force: the same neighbour sets
// on random and degenerate inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

#include "eddy/core/cpu_executor.h"
#include "eddy/core/neighbor_grid.h"
#include "eddy/core/kernels.h"
#include "eddy/core/pair_batch.h"

namespace eddy {
namespace {

using Sets = std::vector<std::vector<uint32_t>>;

Sets brute_force(const std::vector<Vec3f>& x, float h) {
  Sets s(x.size());
  for (uint32_t i = 0; i < x.size(); ++i)
    for (uint32_t j = 0; j < x.size(); ++j)
      if (i != j && length2(x[i] - x[j]) < h * h) s[i].push_back(j);
  return s;
}

Sets from_grid(NeighborGrid<CpuExecutor>& g) {
  const NeighborView v = g.neighbors();
  Sets s(g.size());
  for (uint32_t i = 0; i < g.size(); ++i) {
    s[i].assign(v.indices + v.begin(i), v.indices + v.end(i));
    std::sort(s[i].begin(), s[i].end());
  }
  return s;
}

// The raw CSR lists, in their order (spare slots left out).
Sets lists_of(NeighborGrid<CpuExecutor>& g) {
  const NeighborView v = g.neighbors();
  Sets s(g.size());
  for (uint32_t i = 0; i < g.size(); ++i) s[i].assign(v.indices + v.begin(i), v.indices + v.end(i));
  return s;
}

// Both strategies (per cell: the CPU's; per particle: the GPU's, run here on
// the CPU) against the brute force, and against each other list for list,
// order included.
void expect_same(const std::vector<Vec3f>& x, float h, const char* what) {
  CpuExecutor ex;
  const Sets want = brute_force(x, h);
  Sets per_cell;
  for (NeighborStrategy s : {NeighborStrategy::PerCell, NeighborStrategy::PerParticle}) {
    NeighborGrid<CpuExecutor> g(ex);
    g.set_strategy(s);
    g.build(x.data(), uint32_t(x.size()), h);
    g.find_neighbors(x.data());
    const Sets got = from_grid(g);
    ASSERT_EQ(got.size(), want.size()) << what;
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << what << ": particle " << i << ", strategy " << int(s);
      pairs += want[i].size();
    }
    EXPECT_EQ(g.pair_count(), pairs) << what;
    if (s == NeighborStrategy::PerCell) per_cell = lists_of(g);
    else EXPECT_EQ(lists_of(g), per_cell) << what << ": the strategies' lists differ in order";
  }
}

std::vector<Vec3f> random_points(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<Vec3f> x(n);
  for (auto& p : x) p = vec3(u(rng), u(rng), u(rng));
  return x;
}

TEST(NeighborGrid, MatchesBruteForceOnRandomPoints) {
  expect_same(random_points(3000, -1.0f, 2.0f, 7), 0.15f, "random");
}

TEST(NeighborGrid, MatchesBruteForceWhenAllParticlesShareOneCell) {
  std::vector<Vec3f> x = random_points(400, 0.0f, 0.01f, 8);
  x.push_back(x[0]);  // a coincident pair
  expect_same(x, 0.5f, "one cell");
}

TEST(NeighborGrid, FindsNeighboursOfParticlesFarOutsideTheDomain) {
  std::vector<Vec3f> x = random_points(1000, 0.0f, 1.0f, 9);
  // Far away, beyond the 2^21-cell clamp, in small clusters.
  for (int k = 0; k < 5; ++k) {
    x.push_back(vec3(1e6f + 0.01f * k, -3e5f, 2.0f));
    x.push_back(vec3(-1e7f, 1e7f + 0.01f * k, 0.5f));
  }
  x.push_back(vec3(0.5f, 0.5f, 1e9f));
  expect_same(x, 0.1f, "far outside");
}

// Lists of outside points (fluid against boundary particles) against brute
// force, with queries inside, around and far outside the grid's particles,
// both through the dense cell table and through binary search, in both
// shapes: per cell (queries in runs sharing a cell's gathered candidates;
// here in random order, and sorted so that runs are long) and per particle,
// which must give the same lists in the same order. Queries whose `near`
// flag is 0 get empty lists.
TEST(NeighborGrid, ListsOfOutsidePointsMatchBruteForce) {
  for (float spread : {1.0f, 2000.0f}) {  // compact (dense table) and sparse (binary search)
    std::vector<Vec3f> grid_pts = random_points(1500, 0.0f, 1.0f, 21);
    for (std::size_t i = 0; i < grid_pts.size(); i += 7) grid_pts[i] = grid_pts[i] * spread;
    std::vector<Vec3f> q = random_points(800, -0.3f, 1.3f, 22);
    std::vector<Vec3f> sorted_q = q;
    std::sort(sorted_q.begin(), sorted_q.end(), [](Vec3f a, Vec3f b) {
      const auto key = [](Vec3f p) { return std::make_tuple(int(p.z / 0.09f), int(p.y / 0.09f), int(p.x / 0.09f)); };
      return key(a) < key(b);
    });
    std::vector<uint8_t> near(q.size());
    for (std::size_t i = 0; i < near.size(); ++i) near[i] = i % 5 != 0;
    const float h = 0.09f;
    for (const std::vector<Vec3f>* queries : {&q, &sorted_q})
      for (bool with_near : {false, true}) {
        std::vector<std::vector<uint32_t>> lists[2];
        for (NeighborStrategy shape : {NeighborStrategy::PerCell, NeighborStrategy::PerParticle}) {
          CpuExecutor ex;
          NeighborGrid<CpuExecutor> g(ex);
          g.set_strategy(shape);
          g.build(grid_pts.data(), uint32_t(grid_pts.size()), h);
          const uint8_t* flags = with_near ? near.data() : nullptr;
          for (int call = 0; call < 2; ++call)  // the second reads the kept sorted copy
            g.find_neighbors_of(grid_pts.data(), queries->data(), uint32_t(queries->size()), flags);
          const NeighborView v = g.neighbors();
          std::size_t pairs = 0;
          for (uint32_t i = 0; i < queries->size(); ++i) {
            std::vector<uint32_t> want, got(v.indices + v.begin(i), v.indices + v.end(i));
            lists[shape == NeighborStrategy::PerCell].push_back(got);
            if (!flags || flags[i])
              for (uint32_t j = 0; j < grid_pts.size(); ++j)
                if (length2((*queries)[i] - grid_pts[j]) < h * h) want.push_back(j);
            std::sort(got.begin(), got.end());
            ASSERT_EQ(got, want) << "spread " << spread << ", query " << i;
            pairs += want.size();
          }
          EXPECT_EQ(g.pair_count(), pairs);
          EXPECT_GT(pairs, 400u);
        }
        EXPECT_EQ(lists[0], lists[1]) << "the two shapes' lists differ in order";
      }
  }
}

TEST(NeighborGrid, HandlesZeroAndOneParticle) {
  expect_same({}, 0.1f, "N = 0");
  expect_same({vec3(0.3f, -2.0f, 5.0f)}, 0.1f, "N = 1");
}

TEST(NeighborGrid, MatchesBruteForceOnALatticeWithPointsOnCellFaces) {
  // Spacing h/2: many pairs at exactly h (excluded) and points on cell faces.
  std::vector<Vec3f> x;
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j)
      for (int k = 0; k < 12; ++k) x.push_back(vec3(0.05f * i, 0.05f * j, 0.05f * k));
  expect_same(x, 0.1f, "lattice");
}

TEST(NeighborGrid, MatchesBruteForceOnALatticeWithMoreCandidatesThanTheKeptHits) {
  // Spacing h/2.6: about 17 particles a cell, 300-500 candidates (27
  // cells): more than the count pass keeps as bits (256), fewer than a
  // cell's gathered buffer holds (512); the fill tests them again.
  std::vector<Vec3f> x;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      for (int k = 0; k < 16; ++k) x.push_back(vec3(0.1f / 2.6f * i, 0.1f / 2.6f * j, 0.1f / 2.6f * k));
  expect_same(x, 0.1f, "dense lattice");
}

TEST(NeighborGrid, SortedOrderIsZOrderAndReorderingKeepsTheSets) {
  const std::vector<Vec3f> x = random_points(2000, 0.0f, 1.0f, 10);
  CpuExecutor ex;
  NeighborGrid<CpuExecutor> g(ex);
  const float h = 0.08f;
  g.build(x.data(), uint32_t(x.size()), h);
  // Permute the positions into sorted order, as a solver does.
  std::vector<Vec3f> sorted(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) sorted[k] = x[g.sorted_order()[k]];
  // Z-order keeps consecutive particles close: far closer than in the input order.
  auto mean_step = [](const std::vector<Vec3f>& v) {
    double s = 0;
    for (std::size_t k = 1; k < v.size(); ++k) s += length(v[k] - v[k - 1]);
    return s / double(v.size() - 1);
  };
  EXPECT_LT(mean_step(sorted), 0.25 * mean_step(x));
  g.mark_reordered();
  g.find_neighbors(sorted.data());
  const Sets want = brute_force(sorted, h), got = from_grid(g);
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
}

TEST(NeighborGrid, MortonCodesRoundTrip) {
  for (uint32_t v : {0u, 1u, 2u, 1000u, grid::kMaxCoord}) EXPECT_EQ(grid::compact_bits(grid::spread_bits(v)), v);
  EXPECT_EQ(grid::morton(1, 0, 0), 1u);
  EXPECT_EQ(grid::morton(0, 1, 0), 2u);
  EXPECT_EQ(grid::morton(0, 0, 1), 4u);
  EXPECT_EQ(grid::morton(3, 3, 3), 63u);
}

}  // namespace
}  // namespace eddy

namespace eddy {
namespace {

// The batched reading of the lists (pair_batch.h) against the lists: every
// neighbour once, in list order, with its offset; the spare lanes hold the
// particle itself beyond the support, where the kernels are exactly 0.
// Random points in a unit slab 0.3 thick, with their neighbour lists at h.
struct SlabLists {
  std::vector<Vec3f> x;
  CpuExecutor ex;
  NeighborGrid<CpuExecutor> g{ex};
  SlabLists(size_t n, unsigned seed, float h) : x(n) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (auto& p : x) p = vec3(u(rng), u(rng), 0.3f * u(rng));
    g.build(x.data(), uint32_t(x.size()), h);
    g.find_neighbors(x.data());
  }
};

TEST(PairBatch, VisitsEachNeighbourOnceAndSpareLanesAddNothing) {
  const float h = 0.06f;
  const SlabLists lists(3000, 7, h);
  const std::vector<Vec3f>& x = lists.x;
  const NeighborView nb = lists.g.neighbors();
  const PairKernels K(h, 1);
  std::size_t batches = 0, spare = 0;
  for (uint32_t i = 0; i < x.size(); ++i) {
    std::vector<uint32_t> seen;
    for_pair_batches(nb, i, x[i], x.data(), h, [&](const PairBatch& b) {
      ++batches;
      ASSERT_EQ(b.q0, nb.begin(i) + uint32_t(seen.size()));
      ASSERT_GE(b.n, 1);
      float w[kPairLanes], gs[kPairLanes];
      K.scalars<kPairLanes>(b.r2, w, gs);
      for (int l = 0; l < kPairLanes; ++l) {
        if (l < b.n) {
          const Vec3f r = x[i] - x[b.j[l]];
          EXPECT_EQ(b.rx[l], r.x);
          EXPECT_EQ(b.ry[l], r.y);
          EXPECT_EQ(b.rz[l], r.z);
          EXPECT_EQ(b.r2[l], length2(r));
          seen.push_back(b.j[l]);
        } else {
          ++spare;
          EXPECT_EQ(b.j[l], i);
          EXPECT_GE(b.r2[l], h * h);
          EXPECT_EQ(w[l], 0.0f);
          EXPECT_EQ(gs[l], 0.0f);
        }
      }
    });
    ASSERT_EQ(seen, std::vector<uint32_t>(nb.indices + nb.begin(i), nb.indices + nb.end(i))) << "particle " << i;
  }
  EXPECT_GT(batches, x.size());  // lists longer than one batch were read
  EXPECT_GT(spare, 0u);
}

// The padded positions' batches: lane for lane the same bits as the Vec3f
// version's (offsets, r2, indices), with each neighbour's w beside it and 0
// in the spare lanes. Each batch as the lists' reader saw it.
struct SeenBatch {
  std::vector<float> rx, ry, rz, r2, w;
  std::vector<uint32_t> j;
  uint32_t q0;
  int n;
};
template <class X>
std::vector<SeenBatch> read_batches(const NeighborView& nb, uint32_t n, const X* x, float far) {
  std::vector<SeenBatch> out;
  for (uint32_t i = 0; i < n; ++i) {
    auto keep = [&](const PairBatch& b) {
      SeenBatch s{{b.rx, b.rx + kPairLanes}, {b.ry, b.ry + kPairLanes}, {b.rz, b.rz + kPairLanes},
                  {b.r2, b.r2 + kPairLanes}, {},                          {b.j, b.j + kPairLanes},
                  b.q0,                      b.n};
      if constexpr (std::is_same_v<X, Vec4f>) s.w.assign(b.w, b.w + kPairLanes);
      out.push_back(std::move(s));
    };
    if constexpr (std::is_same_v<X, Vec4f>) {
      for_pair_batches(nb, i, x, far, keep);
    } else {
      for_pair_batches(nb, i, x[i], x, far, keep);
    }
  }
  return out;
}
#if defined(__x86_64__) && defined(__GNUC__)
// The same compiled for AVX2, as the solvers' loops run (for_each_simd).
__attribute__((target("avx2"), noinline)) std::vector<SeenBatch> read_padded_avx2(const NeighborView& nb, uint32_t n,
                                                                                const Vec4f* x, float far) {
  return read_batches(nb, n, x, far);
}
#endif

TEST(PairBatch, PaddedPositionsGiveTheSameLanesWithTheirValues) {
  const float h = 0.07f;
  const SlabLists lists(2500, 11, h);
  const std::vector<Vec3f>& x = lists.x;
  const NeighborView nb = lists.g.neighbors();
  std::vector<Vec4f> x4(x.size());
  for (size_t i = 0; i < x.size(); ++i) x4[i] = vec4(x[i], 1.0f + float(i));  // w: a value of each particle's
  const std::vector<SeenBatch> plain = read_batches(nb, uint32_t(x.size()), x.data(), h);
  std::vector<std::vector<SeenBatch>> padded = {read_batches(nb, uint32_t(x.size()), x4.data(), h)};
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) padded.push_back(read_padded_avx2(nb, uint32_t(x.size()), x4.data(), h));
#endif
  size_t full = 0;
  for (const auto& p : padded) {
    ASSERT_EQ(p.size(), plain.size());
    for (size_t k = 0; k < p.size(); ++k) {
      const SeenBatch &a = plain[k], &b = p[k];
      ASSERT_EQ(b.q0, a.q0);
      ASSERT_EQ(b.n, a.n);
      full += a.n == kPairLanes;
      for (int l = 0; l < kPairLanes; ++l) {
        // (EXPECT_EQ on floats: the same bits, not merely close)
        EXPECT_EQ(b.j[l], a.j[l]);
        EXPECT_EQ(b.rx[l], a.rx[l]);
        EXPECT_EQ(b.ry[l], a.ry[l]);
        EXPECT_EQ(b.rz[l], a.rz[l]);
        EXPECT_EQ(b.r2[l], a.r2[l]);
        EXPECT_EQ(b.w[l], l < a.n ? 1.0f + float(a.j[l]) : 0.0f);
      }
    }
  }
  EXPECT_GT(full, x.size());  // the transposed full batches were read
}

}  // namespace
}  // namespace eddy

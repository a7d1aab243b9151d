// SmoothLiquidSDF: particles -> smooth narrow-band level set.
//
// The chain (after Museth's liquid surfacing and the node graphs of Zeno and
// Houdini that follow it):
//   1. rasterise spheres of the influence radius R = influence_scale * r,
//   2. renormalise (the union of spheres is not a distance function inside),
//   3. smooth (mean curvature flow, Gaussian or Laplacian, n iterations),
//   4. erode by R - surface_scale * r, so the surface returns to about one
//      particle radius from the outer particles' centres,
//   5. particles whose centre the eroded surface left outside (isolated
//      droplets) are rasterised as spheres of droplet_scale * r,
//   6. union, prune.
// Big spheres followed by erosion act as a morphological closing of the
// particles' own spheres: gaps narrower than the influence radius fill in
// and flat layers come out flat, while convex features stay where they are.
//
// The fast rasteriser below (rasterize_spheres) builds each OpenVDB leaf
// independently from the particles near it, skipping voxels deep inside a
// sphere; smooth_liquid_sdf_openvdb is the same chain with OpenVDB's
// ParticlesToLevelSet, the reference it is tested and benchmarked against.
#include <openvdb/tools/Composite.h>
#include <openvdb/tools/Interpolation.h>
#include <openvdb/tools/LevelSetFilter.h>
#include <openvdb/tools/LevelSetUtil.h>
#include <openvdb/tools/ParticlesToLevelSet.h>
#include <openvdb/tools/Prune.h>
#include <openvdb/tools/SignedFloodFill.h>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/surfacing/surfacing.h"
#include "vdb_internal.h"

namespace eddy {

using openvdb::FloatGrid;
using openvdb::FloatTree;

const char* to_string(Smoothing s) {
  switch (s) {
    case Smoothing::None: return "none";
    case Smoothing::Gaussian: return "gaussian";
    case Smoothing::MeanCurvature: return "mean_curvature";
    case Smoothing::Laplacian: return "laplacian";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Resolved {
  double dx, r, R, surface, droplet;
  int hw;
};

Resolved resolve(const Points& pts, const LiquidSdfParams& p) {
  Resolved s{};
  s.r = p.radius > 0 ? p.radius : pts.radius;
  if (!(s.r > 0))
    throw Error("the particles carry no radius; set the radius parameter (or emit them with FluidBox)");
  s.dx = p.dx > 0 ? p.dx : 0.5 * s.r;
  if (!(p.influence_scale >= 1.0))
    throw Error("influenceScale must be at least 1 (spheres smaller than the particles), got " +
                std::to_string(p.influence_scale));
  if (!(p.surface_scale > 0 && p.surface_scale <= p.influence_scale))
    throw Error("surfaceScale must be within (0, influenceScale], got " + std::to_string(p.surface_scale));
  if (!(p.droplet_scale > 0)) throw Error("dropletScale must be positive, got " + std::to_string(p.droplet_scale));
  if (p.half_width < 2) throw Error("the narrow band needs a half width of at least 2 voxels");
  if (p.iterations < 0) throw Error("iterations must not be negative");
  s.R = p.influence_scale * s.r;
  s.surface = p.surface_scale * s.r;
  s.droplet = p.droplet_scale * s.r;
  s.hw = p.half_width;
  return s;
}

// ParticleList for OpenVDB's ParticlesToLevelSet: positions with one radius.
struct ParticleList {
  using PosType = openvdb::Vec3R;
  const Vec3f* p;
  const uint32_t* index;  // subset, or null for all
  std::size_t n;
  double radius;
  std::size_t size() const { return n; }
  void getPos(std::size_t i, openvdb::Vec3R& x) const {
    const Vec3f q = p[index ? index[i] : i];
    x = openvdb::Vec3R(q.x, q.y, q.z);
  }
  void getPosRad(std::size_t i, openvdb::Vec3R& x, openvdb::Real& r) const {
    getPos(i, x);
    r = radius;
  }
};

FloatGrid::Ptr rasterize_openvdb(const Vec3f* P, const uint32_t* index, std::size_t n, double radius, double dx,
                                 int hw) {
  auto grid = openvdb::createLevelSet<FloatGrid>(dx, hw);
  if (n == 0) return grid;
  openvdb::tools::ParticlesToLevelSet<FloatGrid> raster(*grid);
  raster.setRmin(0.5);  // spheres down to half a voxel; the default 1.5 drops droplets silently
  raster.rasterizeSpheres(ParticleList{P, index, n, radius});
  raster.finalize(true);
  return grid;
}

// ---------------------------------------------------------------------------
// The fast rasteriser: per leaf, from the particles near it.
//
// A voxel's value is phi = min_j |x - x_j| - R (in voxels), the exact
// distance outside the union of spheres. Voxels within R - hw of some centre
// are "deep": their phi is below -hw, so they are inactive interior and need
// no distance; they are found first with a cheap bit mask per leaf row. Only
// the remaining voxels get the min over the candidate particles. Leaves are
// independent, so they are built in parallel without locks and added to the
// tree at the end; signedFloodFill marks the skipped interior.

constexpr int kLeaf = 8;

struct LeafKey {
  static uint64_t pack(int x, int y, int z) {
    return (uint64_t(uint32_t(x + (1 << 20)) & 0x1fffff) << 42) | (uint64_t(uint32_t(y + (1 << 20)) & 0x1fffff) << 21) |
           uint64_t(uint32_t(z + (1 << 20)) & 0x1fffff);
  }
  static void unpack(uint64_t k, int& x, int& y, int& z) {
    x = int((k >> 42) & 0x1fffff) - (1 << 20);
    y = int((k >> 21) & 0x1fffff) - (1 << 20);
    z = int(k & 0x1fffff) - (1 << 20);
  }
};

FloatGrid::Ptr rasterize_fast(const Vec3f* P, const uint32_t* index, std::size_t n, double radius, double dx, int hw) {
  auto grid = openvdb::createLevelSet<FloatGrid>(dx, hw);
  if (n == 0) return grid;
  const float inv_dx = float(1.0 / dx);
  const float Rv = float(radius / dx);           // sphere radius, voxels
  const float reach = Rv + float(hw);            // farthest voxel a particle affects
  const float deep = std::max(0.0f, Rv - float(hw));  // voxels nearer than this are interior
  const float background = float(hw * dx);

  // Index-space positions, binned by the leaf holding them.
  struct Item {
    uint64_t key;
    openvdb::Vec3f u;
  };
  std::vector<Item> items(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 8192), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      const Vec3f q = P[index ? index[i] : i];
      const openvdb::Vec3f u(q.x * inv_dx, q.y * inv_dx, q.z * inv_dx);
      const int lx = int(std::floor(u.x() / kLeaf)), ly = int(std::floor(u.y() / kLeaf)),
                lz = int(std::floor(u.z() / kLeaf));
      items[i] = {LeafKey::pack(lx, ly, lz), u};
    }
  });
  tbb::parallel_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  // Occupied leaves: key -> [begin, end) in items.
  std::vector<std::pair<uint64_t, std::pair<uint32_t, uint32_t>>> occupied;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && items[j].key == items[i].key) ++j;
    occupied.push_back({items[i].key, {uint32_t(i), uint32_t(j)}});
    i = j;
  }
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> bins(occupied.begin(), occupied.end());
  const int K = int(std::ceil(reach / kLeaf));  // leaf rings a particle reaches

  // Target leaves: those within reach of some particle's bounding box.
  std::vector<std::vector<uint64_t>> target_parts(occupied.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, occupied.size(), 64), [&](const auto& r) {
    for (std::size_t o = r.begin(); o != r.end(); ++o) {
      openvdb::Vec3f lo(1e30f), hi(-1e30f);
      for (uint32_t i = occupied[o].second.first; i < occupied[o].second.second; ++i) {
        lo = openvdb::math::minComponent(lo, items[i].u);
        hi = openvdb::math::maxComponent(hi, items[i].u);
      }
      const int x0 = int(std::floor((lo.x() - reach) / kLeaf)), x1 = int(std::floor((hi.x() + reach) / kLeaf));
      const int y0 = int(std::floor((lo.y() - reach) / kLeaf)), y1 = int(std::floor((hi.y() + reach) / kLeaf));
      const int z0 = int(std::floor((lo.z() - reach) / kLeaf)), z1 = int(std::floor((hi.z() + reach) / kLeaf));
      auto& out = target_parts[o];
      for (int z = z0; z <= z1; ++z)
        for (int y = y0; y <= y1; ++y)
          for (int x = x0; x <= x1; ++x) out.push_back(LeafKey::pack(x, y, z));
    }
  });
  std::vector<uint64_t> targets;
  {
    std::size_t total = 0;
    for (const auto& t : target_parts) total += t.size();
    targets.reserve(total);
    for (auto& t : target_parts) {
      targets.insert(targets.end(), t.begin(), t.end());
      std::vector<uint64_t>().swap(t);
    }
  }
  tbb::parallel_sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());

  using Leaf = FloatTree::LeafNodeType;
  std::vector<Leaf*> leaves(targets.size(), nullptr);
  struct Scratch {
    std::vector<openvdb::Vec3f> cand;
  };
  tbb::enumerable_thread_specific<Scratch> scratch;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, targets.size(), 16), [&](const auto& r) {
    auto& cand = scratch.local().cand;
    for (std::size_t t = r.begin(); t != r.end(); ++t) {
      int lx, ly, lz;
      LeafKey::unpack(targets[t], lx, ly, lz);
      const openvdb::Vec3f origin(float(lx * kLeaf), float(ly * kLeaf), float(lz * kLeaf));
      // Candidates: particles whose reach touches this leaf (coordinates relative to the leaf origin).
      cand.clear();
      for (int dz = -K; dz <= K; ++dz)
        for (int dy = -K; dy <= K; ++dy)
          for (int dxl = -K; dxl <= K; ++dxl) {
            auto it = bins.find(LeafKey::pack(lx + dxl, ly + dy, lz + dz));
            if (it == bins.end()) continue;
            for (uint32_t i = it->second.first; i < it->second.second; ++i) {
              const openvdb::Vec3f u = items[i].u - origin;
              // Distance from u to the leaf's voxel box [0, 7]^3.
              const float ex = std::max({0.0f, -u.x(), u.x() - 7.0f}), ey = std::max({0.0f, -u.y(), u.y() - 7.0f}),
                          ez = std::max({0.0f, -u.z(), u.z() - 7.0f});
              if (ex * ex + ey * ey + ez * ez <= reach * reach) cand.push_back(u);
            }
          }
      if (cand.empty()) continue;
      // Deep mask, one byte per (y, z) row of 8 voxels.
      uint8_t deep_rows[64] = {};
      if (deep > 0) {
        const float d2 = deep * deep;
        for (const auto& u : cand) {
          const int z0 = std::max(0, int(std::ceil(u.z() - deep))), z1 = std::min(7, int(std::floor(u.z() + deep)));
          for (int z = z0; z <= z1; ++z) {
            const float rz = d2 - (z - u.z()) * (z - u.z());
            if (rz < 0) continue;
            const float hy = std::sqrt(rz);
            const int y0 = std::max(0, int(std::ceil(u.y() - hy))), y1 = std::min(7, int(std::floor(u.y() + hy)));
            for (int y = y0; y <= y1; ++y) {
              const float ry = rz - (y - u.y()) * (y - u.y());
              if (ry < 0) continue;
              const float hx = std::sqrt(ry);
              const int x0 = std::max(0, int(std::ceil(u.x() - hx))), x1 = std::min(7, int(std::floor(u.x() + hx)));
              if (x0 > x1) continue;
              deep_rows[z * 8 + y] |= uint8_t(((1u << (x1 - x0 + 1)) - 1u) << x0);
            }
          }
        }
      }
      bool all_deep = true;
      for (uint8_t row : deep_rows) all_deep &= row == 0xff;
      if (all_deep) continue;  // interior: left to signedFloodFill
      // Exact distance for the other voxels (squared min first, one sqrt per voxel).
      float best[512];
      for (int v = 0; v < 512; ++v) best[v] = 1e30f;
      for (int z = 0; z < 8; ++z)
        for (int y = 0; y < 8; ++y) {
          const uint8_t row = deep_rows[z * 8 + y];
          if (row == 0xff) continue;
          for (const auto& u : cand) {
            const float dz2 = (z - u.z()) * (z - u.z()), dy2 = (y - u.y()) * (y - u.y());
            const float base = dz2 + dy2;
            if (base > reach * reach) continue;
            for (int x = 0; x < 8; ++x) {
              const float ddx = x - u.x();
              // OpenVDB leaf offset: x * 64 + y * 8 + z.
              float& slot = best[x * 64 + y * 8 + z];
              slot = std::min(slot, base + ddx * ddx);
            }
          }
        }
      auto* leaf = new Leaf(openvdb::Coord(lx * kLeaf, ly * kLeaf, lz * kLeaf), background, false);
      bool any_active = false;
      for (int x = 0; x < 8; ++x)
        for (int y = 0; y < 8; ++y)
          for (int z = 0; z < 8; ++z) {
            const int off = x * 64 + y * 8 + z;
            if (deep_rows[z * 8 + y] & (1u << x)) {
              leaf->setValueOff(off, -background);
              continue;
            }
            const float phi = std::sqrt(best[off]) - Rv;  // voxels
            if (phi < float(hw)) {
              leaf->setValueOn(off, std::max(phi, -float(hw)) * float(dx));
              any_active = true;
            }
          }
      if (!any_active) {
        delete leaf;  // all outside, or interior without band voxels: tiles do
        continue;
      }
      leaves[t] = leaf;
    }
  });
  auto& tree = grid->tree();
  for (Leaf* leaf : leaves)
    if (leaf) tree.addLeaf(leaf);
  openvdb::tools::signedFloodFill(tree);
  return grid;
}

using Rasterizer = FloatGrid::Ptr (*)(const Vec3f*, const uint32_t*, std::size_t, double, double, int);

Volume liquid_chain(const Points& pts, const LiquidSdfParams& p, LiquidSdfStats* stats, Rasterizer raster) {
  init_openvdb();
  const auto t0 = Clock::now();
  const Resolved s = resolve(pts, p);
  const double need = estimate_liquid_sdf_bytes(pts, p);
  const double have = physical_memory_bytes();
  if (need > 0.5 * have)
    throw Error("voxel size Dx " + std::to_string(s.dx) + " m would need about " + format_bytes(need) + " for " +
                std::to_string(pts.size()) + " particles, more than half of this machine's " + format_bytes(have) +
                "; use a larger Dx");
  LiquidSdfStats st;
  st.dx = s.dx;
  st.radius = s.r;
  st.particles = pts.size();
  const Vec3f* P = pts.P();
  auto t = Clock::now();
  FloatGrid::Ptr grid = raster(P, nullptr, pts.size(), s.R, s.dx, s.hw);
  st.rasterize_s = since(t);
  t = Clock::now();
  if (pts.size() > 0) {
    openvdb::tools::LevelSetFilter<FloatGrid> filter(*grid);
    // Four renormalisation passes bring the union of spheres to a distance
    // field; each filter pass after that renormalises once.
    filter.setNormCount(4);
    filter.normalize();
    filter.setNormCount(1);
    st.renormalize_s = since(t);
    const auto ts = Clock::now();
    for (int i = 0; i < p.iterations; ++i) {
      switch (p.smoothing) {
        case Smoothing::None: break;
        case Smoothing::Gaussian: filter.gaussian(1); break;
        case Smoothing::MeanCurvature: filter.meanCurvature(); break;
        case Smoothing::Laplacian: filter.laplacian(); break;
      }
    }
    st.smooth_s = since(ts);
    const auto te = Clock::now();
    const double dip = (2 * s.r) * (2 * s.r) / (12 * s.R);
    const double erode = s.R - s.surface - dip;
    if (erode > 0) filter.offset(float(erode));
    st.erode_s = since(te);
  }
  st.filter_s = since(t);
  t = Clock::now();
  if (pts.size() > 0) {
    // Droplets: particles whose centre the eroded surface no longer covers.
    std::vector<uint8_t> outside(pts.size(), 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, pts.size(), 4096), [&](const auto& r) {
      auto acc = grid->getConstAccessor();
      openvdb::tools::GridSampler<FloatGrid::ConstAccessor, openvdb::tools::BoxSampler> sampler(acc,
                                                                                               grid->transform());
      for (std::size_t i = r.begin(); i != r.end(); ++i)
        outside[i] = sampler.wsSample(openvdb::Vec3d(P[i].x, P[i].y, P[i].z)) > 0.0f;
    });
    std::vector<uint32_t> drops;
    for (std::size_t i = 0; i < pts.size(); ++i)
      if (outside[i]) drops.push_back(uint32_t(i));
    st.droplets = drops.size();
    if (!drops.empty()) {
      FloatGrid::Ptr d = raster(P, drops.data(), drops.size(), s.droplet, s.dx, s.hw);
      openvdb::tools::csgUnion(*grid, *d);
    }
    openvdb::tools::pruneLevelSet(grid->tree());
  }
  st.droplet_s = since(t);
  grid->setName("surface");
  grid->setGridClass(openvdb::GRID_LEVEL_SET);
  st.active_voxels = grid->activeVoxelCount();
  st.total_s = since(t0);
  if (stats) *stats = st;
  return make_volume(grid);
}

}  // namespace

double estimate_liquid_sdf_bytes(const Points& pts, const LiquidSdfParams& p) {
  const Resolved s = resolve(pts, p);
  // A lower bound: every particle's own leaf plus its band (8^3 floats and
  // masks per leaf); the positions' extent must fit OpenVDB's coordinates.
  const Vec3f* P = pts.P();
  const double leaf = 8.0 * s.dx;
  std::vector<uint64_t> keys(pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double c[3] = {std::floor(P[i].x / leaf), std::floor(P[i].y / leaf), std::floor(P[i].z / leaf)};
    for (double v : c)
      if (!(std::fabs(v) < double(1 << 19)))
        throw Error("voxel size Dx " + std::to_string(s.dx) + " m is too small for particles " +
                    std::to_string(std::fabs(v) * leaf) + " m from the origin");
    keys[i] = LeafKey::pack(int(c[0]), int(c[1]), int(c[2]));
  }
  tbb::parallel_sort(keys.begin(), keys.end());
  const double leaves = double(std::unique(keys.begin(), keys.end()) - keys.begin());
  return leaves * (512.0 * 4.0 + 128.0) + double(pts.size()) * 16.0;
}

Volume rasterize_spheres(const Points& pts, double radius, double dx, int half_width, bool openvdb_reference) {
  init_openvdb();
  auto grid = (openvdb_reference ? rasterize_openvdb : rasterize_fast)(pts.P(), nullptr, pts.size(), radius, dx,
                                                                     half_width);
  grid->setName("spheres");
  return make_volume(grid);
}

Volume smooth_liquid_sdf(const Points& pts, const LiquidSdfParams& p, LiquidSdfStats* stats) {
  return liquid_chain(pts, p, stats, &rasterize_fast);
}

Volume smooth_liquid_sdf_openvdb(const Points& pts, const LiquidSdfParams& p, LiquidSdfStats* stats) {
  return liquid_chain(pts, p, stats, &rasterize_openvdb);
}

}  // namespace eddy

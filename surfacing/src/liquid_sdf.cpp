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
//      droplets) are rasterised as spheres of droplet_scale * r (the band
//      engine: only those with fewer than three others within 3 r; its
//      shrink bound keeps the rest),
//   6. union, prune.
// Big spheres followed by erosion act as a morphological closing of the
// particles' own spheres: gaps narrower than the influence radius fill in
// and flat layers come out flat, while convex features stay where they are.
//
// The fast rasteriser (band::rasterize, band.h) builds each 8^3 brick
// independently from the particles near it, skipping voxels deep inside a
// sphere, and the bricks become OpenVDB leaves; smooth_liquid_sdf_openvdb is
// the same chain with OpenVDB's ParticlesToLevelSet, the reference it is
// tested and benchmarked against. Steps 2-4 run on OpenVDB's LevelSetFilter,
// or, with LiquidSdfEngine::Bands (experimental), on band.h (band_chain).
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

#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/surfacing/surfacing.h"
#include "band.h"
#include "vdb_internal.h"

namespace eddy {

using openvdb::FloatGrid;
using openvdb::FloatTree;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Resolved {
  double dx, r, R, surface, droplet;
  int hw;
};

Resolved resolve(const Points& pts, const LiquidSdfParams& p) {
  validate(p);
  Resolved s{};
  s.r = p.radius > 0 ? p.radius : pts.radius;
  if (!(s.r > 0))
    throw Error("the particles carry no radius; set the radius parameter (or emit them with FluidBox)");
  s.dx = p.dx > 0 ? p.dx : 0.5 * s.r;
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
// Bands (band.h) to OpenVDB grids.

// Active where |phi + add| < hw (voxels), stored in world units; the interior
// that no brick covers is marked by signedFloodFill.
FloatGrid::Ptr to_grid(const band::Bricks& B, double dx, int hw, float add) {
  auto grid = openvdb::createLevelSet<FloatGrid>(dx, hw);
  using Leaf = FloatTree::LeafNodeType;
  const float bg = float(hw * dx), h = float(hw);
  std::vector<Leaf*> leaves(B.size(), nullptr);
  tbb::parallel_for(std::size_t(0), B.size(), [&](std::size_t b) {
    const float* phi = B.values(b);
    bool any = false;
    for (int v = 0; v < band::kVoxels && !any; ++v) any = std::fabs(phi[v] + add) < h;
    if (!any) return;  // all outside, or interior without band voxels: tiles do
    const auto& c = B.coord[b];
    auto* leaf = new Leaf(openvdb::Coord(c[0] * band::kDim, c[1] * band::kDim, c[2] * band::kDim), bg, false);
    for (int v = 0; v < band::kVoxels; ++v) {
      const float p = phi[v] + add;
      if (std::fabs(p) < h) leaf->setValueOn(openvdb::Index(v), p * float(dx));
      else leaf->setValueOff(openvdb::Index(v), p < 0 ? -bg : bg);
    }
    leaves[b] = leaf;
  });
  auto& tree = grid->tree();
  for (Leaf* leaf : leaves)
    if (leaf) tree.addLeaf(leaf);
  openvdb::tools::signedFloodFill(tree);
  return grid;
}

std::vector<Vec3f> index_positions(const Vec3f* P, const uint32_t* index, std::size_t n, double dx) {
  std::vector<Vec3f> u;
  resize_on_huge_pages(u, n);
  const float inv = float(1.0 / dx);
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t i) { u[i] = P[index ? index[i] : i] * inv; });
  return u;
}

// The fast rasteriser (band::rasterize) as a level set of half width hw.
FloatGrid::Ptr rasterize_fast(const Vec3f* P, const uint32_t* index, std::size_t n, double radius, double dx, int hw) {
  if (n == 0) return openvdb::createLevelSet<FloatGrid>(dx, hw);
  const std::vector<Vec3f> u = index_positions(P, index, n, dx);
  band::RasterParams rp;
  rp.radius = float(radius / dx);
  rp.reach = float(hw);
  rp.deep = std::max(0.0f, rp.radius - float(hw));
  return to_grid(band::rasterize(u.data(), n, rp).bricks, dx, hw, 0.0f);
}

using Rasterizer = FloatGrid::Ptr (*)(const Vec3f*, const uint32_t*, std::size_t, double, double, int);

// Steps 1-4 on OpenVDB's LevelSetFilter (every smoothing method; the
// reference chain).
FloatGrid::Ptr filter_chain(const Points& pts, const Resolved& s, const LiquidSdfParams& p, double erode,
                            Rasterizer raster, LiquidSdfStats& st) {
  auto t = Clock::now();
  FloatGrid::Ptr grid = raster(pts.P(), nullptr, pts.size(), s.R, s.dx, s.hw);
  st.rasterize_s = since(t);
  if (pts.size() == 0) return grid;
  t = Clock::now();
  openvdb::tools::LevelSetFilter<FloatGrid> filter(*grid);
  // Four renormalisation passes bring the union of spheres to a distance
  // field; each filter pass after that renormalises once.
  filter.setNormCount(4);
  filter.normalize();
  filter.setNormCount(1);
  st.renormalize_s = since(t);
  t = Clock::now();
  for (int i = 0; i < p.iterations; ++i) {
    switch (p.smoothing) {
      case Smoothing::None: break;
      case Smoothing::Gaussian: filter.gaussian(1); break;
      case Smoothing::MeanCurvature: filter.meanCurvature(); break;
      case Smoothing::Laplacian: filter.laplacian(); break;
    }
  }
  st.smooth_s = since(t);
  t = Clock::now();
  if (erode > 0) filter.offset(float(erode));
  st.erode_s = since(t);
  return grid;
}

// Steps 1-4 on bands (band.h), for Gaussian smoothing or none, plus a bound
// on the smoothing's shrink:
//   1. rasterise a thin shell outside the spheres, exact, with each voxel's
//      closest point on them;
//   2. propagate closest points a band deep into and out of the union, so
//      the interior becomes a true distance (what renormalisation does);
//   3. smooth with the same Gaussian kernel as LevelSetFilter::gaussian,
//      then re-seed at the smoothed zero crossing and propagate again, so
//      creases and thin sheets keep their distances (what renormalising
//      does; at the output voxel after every pass, as LevelSetFilter does,
//      at twice the voxel once after one Gaussian of the same variance);
//   4. bound the smoothing's shrink: the smoothed surface may lie at most
//      kMaxShrink particle radii inside the unsmoothed one (step 2's union,
//      eroded alike), a union blended over kShrinkBlend radii. The Gaussian rounds
//      a convex corner in by sigma^2 / R, 1.8 voxels for the dilated corner
//      of a box at the defaults, where the true surface is the corner
//      particle's sphere; the bound keeps such corners and thin features,
//      while the bumps of a particle layer and the terraces of a lattice
//      sphere (under a voxel apart from the smoothed surface) are smoothed
//      as before. Measured on the box and sphere tests (liquid_test.cpp):
//      corners 1.84 -> 1.32 voxels in; a bound of 1.25 leaves the box's
//      faces 1.01 voxels off near the edges, one of 0.75 lets the sphere's
//      terraces through (1.09 voxels);
//   5. erode by adding a constant to that distance.
constexpr double kMaxShrink = 0.55, kShrinkBlend = 0.25;  // particle radii (1.1 and 0.5 voxels at Dx = r / 2)
// Anisotropic kernels: no final semi-axis under this many output voxels
// (a one-particle sheet jittered by r/4 tore at Dx = r with 0.7; 1.0 gives
// it the spheres' thickness).
constexpr double kMinAxis = 0.85;

FloatGrid::Ptr band_chain(const Points& pts, const Resolved& s, const LiquidSdfParams& p, double erode,
                          LiquidSdfStats& st, std::vector<uint8_t>& outside) {
  auto t = Clock::now();
  if (pts.size() == 0) {
    st.rasterize_s = since(t);
    return openvdb::createLevelSet<FloatGrid>(s.dx, s.hw);
  }
  const bool smooth = p.smoothing == Smoothing::Gaussian && p.iterations > 0;
  // With smoothing, steps 1-5 run at twice the voxel size: the Gaussian
  // (sigma >= 1.6 voxels) leaves nothing a grid of 2 Dx cannot carry, and the
  // eroded distance is upsampled to Dx (trilinear) at the end. Only while
  // 2 Dx is at most the particle radius: at Dx = r a grid of 2 Dx is the
  // particle spacing, too coarse for a film one or two particles thick (it
  // comes out terraced and dotted with droplets where the film thins).
  const int f = smooth && 2.0 * s.dx <= 1.001 * s.r ? std::clamp(p.band_coarsening, 1, 2) : 1;
  const double dxc = s.dx * f;
  const float e = float(erode / dxc), hw = float(s.hw) / float(f);  // in working voxels
  // Depth of the first band: the eroded band and, when smoothing, the
  // kernel's reach: at twice the voxel 2.5 sigma of the iterated kernel
  // (sigma^2 = 8/3 fine voxels^2 per pass); at the output voxel, where the
  // band is redistanced after every pass, one pass's support (4 voxels) and
  // one for the zero crossing's move.
  const float variance = smooth ? 8.0f / 3.0f * float(p.iterations) / float(f * f) : 0.0f;
  const float kernel = f == 1 ? (smooth ? 5.0f : 0.0f) : 2.5f * std::sqrt(variance);
  const float depth = std::max(e + hw + 1.0f, kernel);
  const float out = std::max(std::max(hw - e, 0.0f) + 1.0f, kernel);
  band::RasterParams rp;
  rp.radius = float(s.R / dxc);
  rp.reach = 2.0f;
  rp.deep = rp.radius;
  rp.closest = true;
  band::Ellipsoids ell;
  if (p.kernel == LiquidKernel::Anisotropic) {
    // Each particle's final shape (the sphere of surface + dip) stretched,
    // grown by the erosion that step 5 takes back.
    const auto ta = Clock::now();
    band::AnisotropyParams ap;
    ap.radius = p.aniso_radius * s.r;
    ap.lambda = p.aniso_smoothing;
    ap.max_ratio = p.aniso_max_ratio;
    ap.min_neighbours = p.aniso_min_neighbours;
    ap.grow = erode;
    ap.core = s.R - erode;
    ap.min_axis = kMinAxis * s.dx;
    ell = band::anisotropy(pts.P(), pts.size(), ap);
    rp.shape = ell.shape.data();
    st.anisotropic = ell.anisotropic;
    st.anisotropy_s = since(ta);
  }
  const std::vector<Vec3f> u =
      index_positions(ell.centre.empty() ? pts.P() : ell.centre.data(), nullptr, pts.size(), dxc);
  band::Raster r = band::rasterize(u.data(), u.size(), rp);
  st.rasterize_s = since(t);
  t = Clock::now();
  band::dilate(r.bricks, int(std::ceil(std::max(depth, out) / band::kDim)), &r.seeds);
  band::propagate(r.bricks, r.seeds, depth, out);
  st.renormalize_s = since(t);
  t = Clock::now();
  if (smooth) {
    outside.assign(pts.size(), 0);
    r.seeds = {};
    const band::Values unsmoothed = r.bricks.phi;
    const float cl = std::max(depth, out);
    band::clamp(r.bricks, cl);
    if (f == 1) {
      // At the output voxel: LevelSetFilter's passes, each followed by
      // redistancing, as LevelSetFilter renormalises after each. One
      // Gaussian of the total variance smooths a particle film's bumps
      // harder: at Dx = r it left particles of a film outside the eroded
      // surface, dotting it with droplets.
      for (int i = 0; i < p.iterations; ++i) {
        band::gaussian(r.bricks, 1, cl);
        if (i + 1 == p.iterations) break;
        band::Seeds pass = band::crossing_seeds(r.bricks);
        band::propagate(r.bricks, pass, depth, out);
        band::clamp(r.bricks, cl);
      }
    } else {
      band::gaussian_variance(r.bricks, variance, cl);
    }
    st.smooth_s = since(t);
    t = Clock::now();
    band::Seeds seeds = band::crossing_seeds(r.bricks);
    band::propagate(r.bricks, seeds, e + hw + 1.0f, std::max(hw - e, 0.0f) + 1.0f);
    // Droplets: particles the smoothed surface left outside that are
    // isolated, fewer than three others within three radii (a lone
    // particle, a pair, the ends of a short chain). The others are kept by
    // the bound below, which a droplet sphere on each would bead: at
    // Dx = r every particle on a box's edges is left outside.
    tbb::parallel_for(std::size_t(0), u.size(), [&](std::size_t i) {
      outside[i] = band::sample(r.bricks, u[i]) + e > 0.0f;
    });
    std::vector<uint32_t> left;
    for (std::size_t i = 0; i < u.size(); ++i)
      if (outside[i]) left.push_back(uint32_t(i));
    const std::vector<uint8_t> lone = band::isolated(pts.P(), pts.size(), left, 3.0 * s.r, 3);
    for (std::size_t k = 0; k < left.size(); ++k) outside[left[k]] = lone[k];
    band::bound_shrink(r.bricks, unsmoothed, float(kMaxShrink * s.r / dxc), float(kShrinkBlend * s.r / dxc));
  }
  FloatGrid::Ptr grid;
  if (f == 1) {
    grid = to_grid(r.bricks, s.dx, s.hw, e);
  } else {
    const float ef = float(erode / s.dx), hwf = float(s.hw);
    const band::Bricks fine = band::upsample(r.bricks, float(f), -ef - hwf - 2.0f, -ef + hwf + 2.0f);
    grid = to_grid(fine, s.dx, s.hw, ef);
  }
  st.erode_s = since(t);
  return grid;
}

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
  const auto t = Clock::now();
  FloatGrid::Ptr grid;
  const double dip = (2 * s.r) * (2 * s.r) / (12 * s.R);
  const double erode = std::max(0.0, s.R - s.surface - dip);
  const bool on_bands = raster == &rasterize_fast && p.engine == LiquidSdfEngine::Bands &&
                        (p.smoothing == Smoothing::Gaussian || p.smoothing == Smoothing::None);
  std::vector<uint8_t> outside;
  if (on_bands) grid = band_chain(pts, s, p, erode, st, outside);
  else grid = filter_chain(pts, s, p, erode, raster, st);
  st.filter_s = since(t) - st.rasterize_s;
  const auto td = Clock::now();
  if (pts.size() > 0) {
    // Droplets: particles whose centre the eroded surface no longer covers.
    if (outside.empty()) {
    outside.assign(pts.size(), 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, pts.size(), 4096), [&](const auto& r) {
      auto acc = grid->getConstAccessor();
      openvdb::tools::GridSampler<FloatGrid::ConstAccessor, openvdb::tools::BoxSampler> sampler(acc,
                                                                                               grid->transform());
      for (std::size_t i = r.begin(); i != r.end(); ++i)
        outside[i] = sampler.wsSample(openvdb::Vec3d(P[i].x, P[i].y, P[i].z)) > 0.0f;
    });
    }
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
  st.droplet_s = since(td);
  grid->setName("surface");
  grid->setGridClass(openvdb::GRID_LEVEL_SET);
  st.active_voxels = grid->activeVoxelCount();
  st.total_s = since(t0);
  if (stats) *stats = st;
  return make_volume(grid);
}

}  // namespace

Volume liquid_velocity(const Points& pts, const Volume& surface, double radius, double reach, double voxel) {
  init_openvdb();
  auto sdf = openvdb::GridBase::constGrid<FloatGrid>(surface.empty() ? nullptr : surface.impl().grid);
  if (!sdf || surface.grid_class() != GridClass::LevelSet)
    throw Error("the velocity grid needs a float level set of the liquid, got " +
                (surface.empty() ? std::string("nothing") : "'" + surface.name() + "' (" + surface.value_type() + ")"));
  if (!(radius > 0)) throw Error("the velocity kernel radius must be positive, got " + std::to_string(radius));
  if (!pts.has("v") || pts.find("v")->type != AttribType::Vec3)
    throw Error("the velocity grid needs particles with a vec3 attribute 'v'");
  const double vdx = std::max(voxel, sdf->voxelSize()[0]);
  // The voxels of the velocity grid: the one nearest to each voxel of the
  // level set within `reach` of its zero crossing.
  std::vector<const FloatTree::LeafNodeType*> leaves;
  sdf->tree().getNodes(leaves);
  const float band = float(reach);
  const openvdb::math::Transform& xform = sdf->transform();
  const double inv = 1.0 / vdx;
  // A grid of voxel size dx at the origin (as SmoothLiquidSDF makes): index
  // to velocity voxel by one multiplication, without the transform's
  // virtual call; rounded half away from zero, as lround.
  const bool plain = xform.isLinear() && xform.hasUniformScale() &&
                     xform.indexToWorld(openvdb::Vec3d(0.0)) == openvdb::Vec3d(0.0) &&
                     xform.indexToWorld(openvdb::Vec3d(1.0)) == openvdb::Vec3d(sdf->voxelSize()[0]);
  const double scale = sdf->voxelSize()[0] * inv;
  auto round_half_away = [](double x) { return long(x + (x >= 0 ? 0.5 : -0.5)); };
  tbb::enumerable_thread_specific<std::vector<uint64_t>> found_keys;
  tbb::parallel_for(std::size_t(0), leaves.size(), [&](std::size_t l) {
    uint64_t mine[FloatTree::LeafNodeType::SIZE];
    std::size_t n = 0;
    for (auto it = leaves[l]->cbeginValueOn(); it; ++it) {
      if (!(std::fabs(*it) <= band)) continue;
      const openvdb::Coord g = it.getCoord();
      const openvdb::Vec3d x = plain ? openvdb::Vec3d(g.x() * scale, g.y() * scale, g.z() * scale)
                                     : xform.indexToWorld(g) * inv;
      const long c[3] = {round_half_away(x.x()), round_half_away(x.y()), round_half_away(x.z())};
      for (long k : c)
        if (std::labs(k) >= (1L << 20))  // band::pack keeps 21 bits per axis
          throw Error("the velocity grid's voxel " + std::to_string(vdx) + " m is too small for a surface " +
                      std::to_string(double(std::labs(k)) * vdx) + " m from the origin");
      mine[n++] = band::pack(int(c[0]), int(c[1]), int(c[2]));
    }
    std::sort(mine, mine + n);  // a coarser voxel is shared by several of the leaf's
    auto& keys = found_keys.local();
    keys.insert(keys.end(), mine, std::unique(mine, mine + n));
  });
  std::vector<uint64_t> keys;
  for (auto& k : found_keys) keys.insert(keys.end(), k.begin(), k.end());
  tbb::parallel_sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const std::size_t m = keys.size();
  std::vector<Vec3f> at(m), v(m);
  std::vector<uint8_t> found(m);
  tbb::parallel_for(std::size_t(0), m, [&](std::size_t k) {
    int c[3];
    band::unpack(keys[k], c[0], c[1], c[2]);
    at[k] = vec3(float(c[0] * vdx), float(c[1] * vdx), float(c[2] * vdx));
  });
  band::kernel_average(pts.P(), pts.v(), pts.size(), at.data(), m, radius, v.data(), found.data());
  auto grid = openvdb::Vec3SGrid::create(openvdb::Vec3s(0.0f));
  grid->setTransform(openvdb::math::Transform::createLinearTransform(vdx));
  {
    auto acc = grid->getAccessor();
    for (std::size_t k = 0; k < m; ++k) {
      if (!found[k]) continue;
      int c[3];
      band::unpack(keys[k], c[0], c[1], c[2]);
      acc.setValueOn(openvdb::Coord(c[0], c[1], c[2]), openvdb::Vec3s(v[k].x, v[k].y, v[k].z));
    }
  }
  grid->setName("v");
  grid->setGridClass(openvdb::GRID_UNKNOWN);
  grid->setVectorType(openvdb::VEC_CONTRAVARIANT_RELATIVE);
  return make_volume(grid);
}

Volume liquid_velocity(const Points& pts, const Volume& surface, const LiquidSdfParams& p, const LiquidSdfStats& st) {
  const double voxel = std::max(st.radius, st.dx);
  return liquid_velocity(pts, surface, p.influence_scale * st.radius, std::min(p.half_width * st.dx, 2 * voxel), voxel);
}

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
    keys[i] = band::pack(int(c[0]), int(c[1]), int(c[2]));
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

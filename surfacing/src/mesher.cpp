// SDFToPrim (level set -> mesh), meshes -> level sets and sampled SDFs, and
// level set measures.
#include <openvdb/tools/Interpolation.h>
#include <openvdb/tools/LevelSetMeasure.h>
#include <openvdb/tools/MeshToVolume.h>
#include <openvdb/tools/VolumeToMesh.h>

#include <tbb/parallel_for.h>

#include <cmath>

#include "eddy/core/error.h"
#include "eddy/core/huge_pages.h"
#include "eddy/core/io.h"
#include "eddy/core/mesh_sdf.h"
#include "eddy/surfacing/surfacing.h"
#include "vdb_internal.h"

namespace eddy {

namespace {

openvdb::FloatGrid::ConstPtr level_set_of(const Volume& volume, const char* what) {
  if (volume.empty()) throw Error(std::string(what) + ": no volume given");
  auto grid = openvdb::GridBase::constGrid<openvdb::FloatGrid>(volume.impl().grid);
  if (!grid || volume.grid_class() != GridClass::LevelSet)
    throw Error(std::string(what) + ": grid '" + volume.name() + "' is a " + to_string(volume.grid_class()) + " (" +
                volume.value_type() + "), not a float level set (an SDF, e.g. from SmoothLiquidSDF)");
  return grid;
}

// Calls f(i, accessor, u) for every point of `points` in parallel, u its
// position in the grid's index space.
template <typename Grid, typename F>
void for_each_point(const Grid& grid, const std::vector<Vec3f>& points, F f) {
  const openvdb::math::Transform& xform = grid.transform();
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points.size(), 4096), [&](const auto& r) {
    auto acc = grid.getConstAccessor();
    for (std::size_t i = r.begin(); i != r.end(); ++i)
      f(i, acc, xform.worldToIndex(openvdb::Vec3d(points[i].x, points[i].y, points[i].z)));
  });
}

}  // namespace

void sample_velocity(Mesh& m, const Volume& volume) {
  init_openvdb();
  auto grid = openvdb::GridBase::constGrid<openvdb::Vec3SGrid>(volume.empty() ? nullptr : volume.impl().grid);
  if (!grid)
    throw Error("point velocities need a vec3s grid, got " +
                (volume.empty() ? std::string("nothing") : "'" + volume.name() + "' (" + volume.value_type() + ")"));
  resize_on_huge_pages(m.velocities, m.points.size());
  // Trilinear over the active corners only, renormalised, so that a cell
  // at the edge of the grid's active voxels does not pull towards zero.
  for_each_point(*grid, m.points, [&](std::size_t i, auto& acc, const openvdb::Vec3d& u) {
    const openvdb::Coord c0(int(std::floor(u.x())), int(std::floor(u.y())), int(std::floor(u.z())));
    const double t[3] = {u.x() - c0.x(), u.y() - c0.y(), u.z() - c0.z()};
    openvdb::Vec3d sum(0.0), nearest(0.0);
    double wsum = 0, best = 1e30;
    for (int k = 0; k < 8; ++k) {
      const int bx = k >> 2, by = (k >> 1) & 1, bz = k & 1;
      openvdb::Vec3s v;
      if (!acc.probeValue(c0.offsetBy(bx, by, bz), v)) continue;
      const double w = (bx ? t[0] : 1 - t[0]) * (by ? t[1] : 1 - t[1]) * (bz ? t[2] : 1 - t[2]);
      sum += w * openvdb::Vec3d(v);
      wsum += w;
      const double d2 = (bx - t[0]) * (bx - t[0]) + (by - t[1]) * (by - t[1]) + (bz - t[2]) * (bz - t[2]);
      if (d2 < best) {
        best = d2;
        nearest = openvdb::Vec3d(v);
      }
    }
    // On a cell face every active corner may have weight zero: the nearest one.
    sum = wsum > 0 ? sum / wsum : nearest;
    m.velocities[i] = vec3(float(sum.x()), float(sum.y()), float(sum.z()));
  });
}

Mesh sdf_to_mesh(const Volume& volume, const MeshingParams& p) {
  init_openvdb();
  auto grid = level_set_of(volume, "SDFToPrim");
  validate(p);
  std::vector<openvdb::Vec3s> pts;
  std::vector<openvdb::Vec3I> tris;
  std::vector<openvdb::Vec4I> quads;
  openvdb::tools::volumeToMesh(*grid, pts, tris, quads, p.iso, p.adaptivity);
  Mesh m;
  // Copied in parallel (millions of faces at fine voxels).
  auto each = [](std::size_t n, auto f) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14), [&](const auto& r) {
      for (std::size_t i = r.begin(); i != r.end(); ++i) f(i);
    });
  };
  resize_on_huge_pages(m.points, pts.size());
  each(pts.size(), [&](std::size_t i) { m.points[i] = vec3(pts[i].x(), pts[i].y(), pts[i].z()); });
  // OpenVDB winds its faces clockwise seen from outside (negative signed
  // volume); the faces are reversed here so the mesh is wound outward.
  resize_on_huge_pages(m.triangles, tris.size() + (p.allow_quads ? 0 : 2 * quads.size()));
  each(tris.size(), [&](std::size_t i) {
    m.triangles[i] = {int32_t(tris[i][0]), int32_t(tris[i][2]), int32_t(tris[i][1])};
  });
  if (p.allow_quads) {
    resize_on_huge_pages(m.quads, quads.size());
    each(quads.size(), [&](std::size_t i) {
      const auto& q = quads[i];
      m.quads[i] = {int32_t(q[0]), int32_t(q[3]), int32_t(q[2]), int32_t(q[1])};
    });
  } else {
    // Split along the shorter diagonal, which keeps the triangles fatter.
    each(quads.size(), [&](std::size_t i) {
      const auto& q = quads[i];
      const int32_t a = int32_t(q[0]), b = int32_t(q[3]), c = int32_t(q[2]), d = int32_t(q[1]);
      auto* t = &m.triangles[tris.size() + 2 * i];
      if (length2(m.points[a] - m.points[c]) <= length2(m.points[b] - m.points[d])) {
        t[0] = {a, b, c};
        t[1] = {a, c, d};
      } else {
        t[0] = {a, b, d};
        t[1] = {b, c, d};
      }
    });
  }
  // Normals: the level set's gradient at each point, which is smoother than
  // averaging facet normals.
  resize_on_huge_pages(m.normals, m.points.size());
  // Central differences of the trilinear field half a voxel either side:
  // the six samples read the 4^3 voxels around the point, fetched once.
  for_each_point(*grid, m.points, [&](std::size_t i, auto& acc, const openvdb::Vec3d& u) {
    const openvdb::Coord c0(int(std::floor(u.x())) - 1, int(std::floor(u.y())) - 1, int(std::floor(u.z())) - 1);
    float v[4][4][4];
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int c = 0; c < 4; ++c) v[a][b][c] = acc.getValue(c0.offsetBy(a, b, c));
    // Trilinear at (x, y, z) relative to c0 (within [0, 3]).
    auto at = [&](double x, double y, double z) {
      const int a = std::min(int(x), 2), b = std::min(int(y), 2), c = std::min(int(z), 2);
      const double tx = x - a, ty = y - b, tz = z - c;
      auto lerp = [](double p, double q, double t) { return p + (q - p) * t; };
      const double c00 = lerp(v[a][b][c], v[a][b][c + 1], tz), c01 = lerp(v[a][b + 1][c], v[a][b + 1][c + 1], tz);
      const double c10 = lerp(v[a + 1][b][c], v[a + 1][b][c + 1], tz);
      const double c11 = lerp(v[a + 1][b + 1][c], v[a + 1][b + 1][c + 1], tz);
      return lerp(lerp(c00, c01, ty), lerp(c10, c11, ty), tx);
    };
    const double x = u.x() - c0.x(), y = u.y() - c0.y(), z = u.z() - c0.z();
    const Vec3f g = vec3(float(at(x + 0.5, y, z) - at(x - 0.5, y, z)), float(at(x, y + 0.5, z) - at(x, y - 0.5, z)),
                         float(at(x, y, z + 0.5) - at(x, y, z - 0.5)));
    m.normals[i] = normalize_or(g, vec3(0, 1, 0));
  });
  return m;
}

namespace {

openvdb::FloatGrid::Ptr mesh_grid(const Mesh& mesh, double dx, float ex_band, float in_band) {
  init_openvdb();
  if (!(dx > 0)) throw Error("voxel size must be positive, got " + std::to_string(dx));
  if (mesh.face_count() == 0) throw Error("the mesh has no faces");
  check_mesh(mesh, "mesh");
  auto xform = openvdb::math::Transform::createLinearTransform(dx);
  std::vector<openvdb::Vec3s> pts(mesh.points.size());
  for (std::size_t i = 0; i < pts.size(); ++i)
    pts[i] = xform->worldToIndex(openvdb::Vec3d(mesh.points[i].x, mesh.points[i].y, mesh.points[i].z));
  // Quads go in as two triangles each, so mixed meshes convert as one list.
  std::vector<openvdb::Vec3I> tris;
  tris.reserve(mesh.triangles.size() + 2 * mesh.quads.size());
  for (const auto& t : mesh.triangles) tris.emplace_back(t[0], t[1], t[2]);
  for (const auto& q : mesh.quads) {
    tris.emplace_back(q[0], q[1], q[2]);
    tris.emplace_back(q[0], q[2], q[3]);
  }
  auto grid = openvdb::tools::meshToVolume<openvdb::FloatGrid>(
      openvdb::tools::QuadAndTriangleDataAdapter<openvdb::Vec3s, openvdb::Vec3I>(pts, tris), *xform, ex_band,
      in_band);
  return grid;
}

}  // namespace

Volume mesh_to_level_set(const Mesh& mesh, double dx, int half_width, const std::string& name) {
  auto grid = mesh_grid(mesh, dx, float(half_width), float(half_width));
  grid->setName(name);
  return make_volume(grid);
}

SampledSdf mesh_to_sdf_openvdb(const Mesh& mesh, double dx, double margin) {
  SampledSdf out = sdf_grid_over(mesh, dx, margin);
  // A band wide enough to reach every node of the box, sampled trilinearly between OpenVDB's own voxels.
  const float band = float(std::max({out.dims[0], out.dims[1], out.dims[2]}));
  auto grid = mesh_grid(mesh, dx, band, band);
  tbb::parallel_for(0, out.dims[2], [&](int k) {
    auto acc = grid->getConstAccessor();
    openvdb::tools::GridSampler<openvdb::FloatGrid::ConstAccessor, openvdb::tools::BoxSampler> s(acc, grid->transform());
    for (int j = 0; j < out.dims[1]; ++j)
      for (int i = 0; i < out.dims[0]; ++i) {
        const openvdb::Vec3d w(out.origin[0] + i * dx, out.origin[1] + j * dx, out.origin[2] + k * dx);
        out.values[(std::size_t(k) * out.dims[1] + j) * out.dims[0] + i] = float(s.wsSample(w));
      }
  });
  return out;
}

LevelSetMeasures measure_level_set(const Volume& volume) {
  auto grid = level_set_of(volume, "measure");
  openvdb::tools::LevelSetMeasure<openvdb::FloatGrid> m(*grid);
  LevelSetMeasures out;
  out.area = m.area(true);
  out.volume = m.volume(true);
  out.euler = m.eulerCharacteristic();
  return out;
}

double sample_level_set(const Volume& volume, float x, float y, float z) {
  auto grid = level_set_of(volume, "sample");
  openvdb::tools::GridSampler<openvdb::FloatGrid, openvdb::tools::BoxSampler> s(*grid);
  return s.wsSample(openvdb::Vec3d(x, y, z));
}

}  // namespace eddy

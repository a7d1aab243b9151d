// A mesh's exact signed distance (mesh_sdf.h) against the slow, obvious
// way (every triangle for the distance, the winding number for the sign),
// and a deforming mesh collider's surface velocity (mesh_velocity.h): the
// closest point on a triangle against a dense search; on a box sampled as a Grid
// collider, a translation gives every node near the surface exactly that
// velocity and a rotation gives w x (the node's closest surface point),
// since barycentric interpolation carries a linear field exactly; and
// collider_velocity turns the sampled velocity with the collider's pose.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "eddy/core/collider.h"
#include "eddy/core/cpu_executor.h"
#include "eddy/core/mat3.h"
#include "eddy/core/mesh_sdf.h"
#include "eddy/core/mesh_velocity.h"
#include "eddy/core/solver_buffers.h"

namespace eddy {
namespace {

TEST(MeshVelocity, ClosestPointOnATriangleBeatsADenseSearch) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto rnd = [&] { return vec3(u(rng), u(rng), u(rng)); };
  int regions[3] = {0, 0, 0};  // corner, edge, face
  for (int trial = 0; trial < 300; ++trial) {
    const Vec3f a = rnd(), b = rnd(), c = rnd(), p = rnd() * 2.0f;
    const Vec3f w = closest_on_triangle(p, a, b, c);
    EXPECT_NEAR(w.x + w.y + w.z, 1.0f, 1e-5f);
    EXPECT_GE(std::min(w.x, std::min(w.y, w.z)), -1e-6f);
    const float d = length(a * w.x + b * w.y + c * w.z - p);
    // Every point of a 200 x 200 barycentric lattice is at least as far.
    float best = 1e30f;
    const int n = 200;
    for (int i = 0; i <= n; ++i)
      for (int j = 0; i + j <= n; ++j) {
        const float s = float(i) / n, t = float(j) / n;
        best = std::min(best, length(a * (1 - s - t) + b * s + c * t - p));
      }
    EXPECT_LE(d, best + 1e-5f) << "trial " << trial;
    const int zeros = (w.x < 1e-6f) + (w.y < 1e-6f) + (w.z < 1e-6f);
    ++regions[zeros == 2 ? 0 : zeros == 1 ? 1 : 2];
  }
  // The trials reach every kind of region.
  for (int r = 0; r < 3; ++r) EXPECT_GT(regions[r], 10) << "region " << r;
}

// A torus about the y axis (radii R and r), wound outward: non-convex, with
// a hole, so a sign from the nearest face alone would go wrong in places.
Mesh torus(float R, float r, int nu, int nv) {
  Mesh m;
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < nv; ++j) {
      const float u = 2 * float(M_PI) * i / nu, v = 2 * float(M_PI) * j / nv;
      m.points.push_back(vec3((R + r * std::cos(v)) * std::cos(u), r * std::sin(v), (R + r * std::cos(v)) * std::sin(u)));
    }
  auto at = [&](int i, int j) { return (i % nu) * nv + (j % nv); };
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < nv; ++j) m.quads.push_back({at(i, j), at(i, j + 1), at(i + 1, j + 1), at(i + 1, j)});
  return m;
}

// The slow way: the nearest of every triangle, inside where the winding
// number (the solid angles the triangles subtend, over 4 pi; Van Oosterom &
// Strackee 1983) is one.
float brute_signed_distance(const Mesh& m, Vec3f p) {
  std::vector<std::array<int32_t, 3>> tris = m.triangles;
  for (const auto& q : m.quads) {
    tris.push_back({q[0], q[1], q[2]});
    tris.push_back({q[0], q[2], q[3]});
  }
  double best = 1e30, solid = 0;
  for (const auto& t : tris) {
    const Vec3f a = m.points[t[0]], b = m.points[t[1]], c = m.points[t[2]];
    const Vec3f w = closest_on_triangle(p, a, b, c);
    best = std::min(best, double(length(a * w.x + b * w.y + c * w.z - p)));
    const Vec3f x = a - p, y = b - p, z = c - p;
    const double lx = length(x), ly = length(y), lz = length(z);
    const double num = dot(x, cross(y, z));
    const double den = lx * ly * lz + dot(x, y) * lz + dot(y, z) * lx + dot(z, x) * ly;
    solid += 2.0 * std::atan2(num, den);
  }
  return float(solid / (4 * M_PI) > 0.5 ? -best : best);
}

// A prism whose cross-section has a 20 degree corner: beside its sharp edge
// the two faces' normals point 160 degrees apart, so a sign from either
// face alone is wrong on part of the edge's region (the edge's pseudonormal
// is right).
Mesh wedge(float L, float h) {
  const float w = L * std::tan(float(M_PI) / 18);
  Mesh m;
  m.points = {vec3(0, 0, -h), vec3(L, w, -h), vec3(L, -w, -h), vec3(0, 0, h), vec3(L, w, h), vec3(L, -w, h)};
  m.triangles = {{0, 1, 2}, {3, 5, 4}};
  m.quads = {{0, 3, 4, 1}, {0, 2, 5, 3}, {1, 4, 5, 2}};
  return m;
}

// Within three voxels of the surface every node is exact; beyond, where
// the distance is propagated from the neighbours' closest triangles, it is
// the distance to a triangle (never nearer than the true one), within a
// tenth of a voxel of it, and always of the right sign.
TEST(MeshSdf, EveryNodeIsTheNearestTriangleSignedByTheWindingNumber) {
  const Mesh meshes[] = {box_mesh(vec3(0.1f, 0.0f, -0.05f), vec3(0.3f, 0.1f, 0.2f)), sphere_mesh(0.25f, 12, 24),
                         torus(0.3f, 0.1f, 24, 12), wedge(0.5f, 0.1f)};
  const char* names[] = {"box", "sphere", "torus", "wedge"};
  for (int m = 0; m < 4; ++m) {
    const float dx = 0.0185f;
    const SampledSdf s = mesh_to_sdf(meshes[m], dx, 0.1, 2);
    float band_worst = 0, far_worst = 0, nearer = 0;
    int inside = 0, outside = 0, flipped = 0, far_nodes = 0;
    for (int k = 0; k < s.dims[2]; ++k)
      for (int j = 0; j < s.dims[1]; ++j)
        for (int i = 0; i < s.dims[0]; ++i) {
          const Vec3f p = vec3(s.origin[0] + float(i * s.dx), s.origin[1] + float(j * s.dx), s.origin[2] + float(k * s.dx));
          const float got = s.values[(std::size_t(k) * s.dims[1] + j) * s.dims[0] + i], want = brute_signed_distance(meshes[m], p);
          (want < 0 ? inside : outside)++;
          if (std::fabs(want) <= 3 * dx) {
            band_worst = std::max(band_worst, std::fabs(got - want));
            continue;
          }
          ++far_nodes;
          far_worst = std::max(far_worst, std::fabs(got - want));
          nearer = std::max(nearer, std::fabs(want) - std::fabs(got));
          flipped += (got < 0) != (want < 0);
        }
    std::printf("  %s: %d x %d x %d nodes (%d inside, %d beyond 3 voxels): largest difference %.2e m within, "
                "%.3f voxels beyond\n", names[m], s.dims[0], s.dims[1], s.dims[2], inside, far_nodes, band_worst,
                far_worst / dx);
    EXPECT_LT(band_worst, 1e-5f) << names[m];
    EXPECT_LT(far_worst, 0.1f * dx) << names[m];
    EXPECT_LT(nearer, 1e-5f) << names[m];
    EXPECT_EQ(flipped, 0) << names[m];
    EXPECT_GT(far_nodes, 1000) << names[m];
    EXPECT_GT(inside, 100) << names[m];
    EXPECT_GT(outside, inside) << names[m];
  }
}

// A box of half extents h sampled as a Grid collider with its exact
// distance, spacing dx, two voxels beyond it.
struct SampledBox {
  Mesh mesh;
  std::vector<float> values;
  Collider c;
  SampledBox(Vec3f h, float dx) : mesh(box_mesh(vec3(0.0f), h)) {
    c.type = ShapeType::Grid;
    c.grid_dx = dx;
    c.grid_origin = -h - vec3(2 * dx);
    for (int a = 0; a < 3; ++a) c.grid_dims[a] = int(std::ceil((2 * (&h.x)[a] + 4 * dx) / dx)) + 1;
    for (int k = 0; k < c.grid_dims[2]; ++k)
      for (int j = 0; j < c.grid_dims[1]; ++j)
        for (int i = 0; i < c.grid_dims[0]; ++i)
          values.push_back(detail::sdf_box(node(i, j, k), h).distance);
    c.grid = values.data();
  }
  Vec3f node(int i, int j, int k) const { return c.grid_origin + vec3(float(i), float(j), float(k)) * c.grid_dx; }
  Vec3f node(std::size_t n) const {
    const int nx = c.grid_dims[0], ny = c.grid_dims[1];
    return node(int(n % nx), int(n / nx % ny), int(n / (std::size_t(nx) * ny)));
  }
};

// The closest point of a box's surface: clamped into the box outside it,
// moved to the nearest face inside.
Vec3f closest_on_box(Vec3f p, Vec3f h) {
  if (detail::sdf_box(p, h).distance > 0) return vmin(vmax(p, -h), h);
  const Vec3f gap = h - vabs(p);
  Vec3f q = p;
  if (gap.x <= gap.y && gap.x <= gap.z) q.x = p.x < 0 ? -h.x : h.x;
  else if (gap.y <= gap.z) q.y = p.y < 0 ? -h.y : h.y;
  else q.z = p.z < 0 ? -h.z : h.z;
  return q;
}

TEST(MeshVelocity, ATranslatedOrTurnedBoxGivesItsRigidVelocityAtTheSurface) {
  const Vec3f h = vec3(0.3f, 0.1f, 0.2f);
  const float dx = 0.025f, band = 2.5f * dx;
  const SampledBox box(h, dx);
  const Vec3f u = vec3(0.5f, -0.25f, 0.125f), w = vec3(0.3f, 1.2f, -0.7f);
  std::vector<Vec3f> translate(box.mesh.points.size(), u), turn;
  for (const Vec3f& p : box.mesh.points) turn.push_back(cross(w, p));
  const auto vt = surface_velocity_on_grid(box.mesh, translate, box.c, band, 2);
  const auto vr = surface_velocity_on_grid(box.mesh, turn, box.c, band, 2);
  ASSERT_EQ(vt.size(), box.values.size());
  std::size_t near = 0;
  float worst_t = 0, worst_r = 0;
  for (std::size_t n = 0; n < vt.size(); ++n) {
    const Vec3f p = box.node(n);
    if (std::fabs(box.values[n]) > band) {
      EXPECT_EQ(length(vt[n]), 0.0f) << "a node beyond the band at " << p.x << " " << p.y << " " << p.z;
      continue;
    }
    ++near;
    worst_t = std::max(worst_t, length(vt[n] - u));
    // Where two faces are equally near (the box's medial planes) either
    // face's point is right; those nodes are left out of the rotation check.
    const Vec3f gap = vabs(h - vabs(p));
    const bool tie = box.values[n] < 0 && (std::fabs(gap.x - gap.y) < 1e-4f || std::fabs(gap.y - gap.z) < 1e-4f ||
                                           std::fabs(gap.x - gap.z) < 1e-4f);
    if (!tie) worst_r = std::max(worst_r, length(vr[n] - cross(w, closest_on_box(p, h))));
  }
  std::printf("  %zu nodes within %.3f m of the box: translation error %.2e m/s, rotation error %.2e m/s\n", near,
              band, worst_t, worst_r);
  EXPECT_GT(near, 1000u);
  EXPECT_LT(worst_t, 1e-6f);
  EXPECT_LT(worst_r, 1e-5f);
}

TEST(MeshVelocity, TheColliderTurnsItsSampledVelocityWithItsPlacement) {
  const SampledBox box(vec3(0.2f), 0.05f);
  const std::vector<Vec3f> local(box.values.size(), vec3(1.0f, 0.0f, 0.0f));
  Collider c = box.c;
  c.grid_velocity = local.data();
  c.center = vec3(1.0f, 2.0f, 3.0f);
  c.rotation = rotation_from_euler_degrees(vec3(0.0f, 90.0f, 0.0f));  // local x to world -z
  c.velocity = vec3(0.0f, 0.5f, 0.0f);
  const Vec3f u = collider_velocity(c, c.center + vec3(0.2f, 0.0f, 0.0f), 0.0f);
  EXPECT_LT(length(u - (c.rotation * vec3(1.0f, 0.0f, 0.0f) + c.velocity)), 1e-6f);
  EXPECT_LT(length(c.rotation * vec3(1.0f, 0.0f, 0.0f) - vec3(0.0f, 0.0f, -1.0f)), 1e-6f);
  c.grid_velocity = nullptr;  // rigid again
  EXPECT_LT(length(collider_velocity(c, c.center, 0.0f) - c.velocity), 1e-7f);
}

TEST(MeshVelocity, ASequenceGivesItsPointsMotionOnlyWithTheSameFaces) {
  const Mesh a = box_mesh(vec3(0.0f), vec3(0.1f));
  Mesh b = box_mesh(vec3(0.01f, 0.0f, 0.0f), vec3(0.1f));
  const auto v = sequence_velocities(b, a, 24.0);
  ASSERT_EQ(v.size(), a.points.size());
  for (const Vec3f& x : v) EXPECT_LT(length(x - vec3(0.24f, 0.0f, 0.0f)), 1e-5f);
  b.quads.pop_back();
  EXPECT_TRUE(sequence_velocities(b, a, 24.0).empty());
}

// A solver's colliders sampled from one grid (bodies made from one mesh)
// share one copy of its samples; each keeps its own placement, and reads
// the same distances as the host's colliders.
TEST(MeshSdf, CollidersSampledFromOneGridShareOneCopyOfIt) {
  const SampledSdf box = mesh_to_sdf(box_mesh(vec3(0.0f), vec3(0.1f, 0.05f, 0.08f)), 0.01, 0.03);
  const SampledSdf ball = mesh_to_sdf(box_mesh(vec3(0.0f), vec3(0.05f)), 0.01, 0.03);
  std::vector<Collider> cs = {grid_collider(box), grid_collider(box), grid_collider(ball)};
  cs[1].center = vec3(0.5f, 0.0f, 0.0f);
  cs[2].center = vec3(0.0f, 0.5f, 0.0f);
  const CpuExecutor ex(1);
  DeviceColliders<CpuExecutor> device;
  device.upload(ex, cs);
  ASSERT_EQ(device.size(), 3u);
  EXPECT_EQ(device.data()[0].grid, device.data()[1].grid);
  EXPECT_NE(device.data()[0].grid, device.data()[2].grid);
  EXPECT_NE(device.data()[0].grid, cs[0].grid);  // a copy, not the host's array
  for (int k = 0; k < 3; ++k)
    for (const Vec3f p : {vec3(0.02f, 0.07f, 0.0f), vec3(0.52f, -0.01f, 0.03f), vec3(0.01f, 0.46f, -0.02f)}) {
      const SdfSample a = collider_sdf(cs[std::size_t(k)], p, 0.0f), b = collider_sdf(device.data()[k], p, 0.0f);
      EXPECT_EQ(a.distance, b.distance) << "collider " << k;
    }
}

}  // namespace
}  // namespace eddy

// Collider signed distances and normals against analytic values, and the
// ellipsoid's exact distance against a dense sampling of its surface.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "eddy/core/collider.h"

namespace eddy {
namespace {

Collider make(ShapeType t, Vec3f center, Vec3f size) {
  Collider c;
  c.type = t;
  c.center = center;
  c.size = size;
  return c;
}

void expect_vec(Vec3f a, Vec3f b, float tol, const char* what) {
  EXPECT_NEAR(a.x, b.x, tol) << what;
  EXPECT_NEAR(a.y, b.y, tol) << what;
  EXPECT_NEAR(a.z, b.z, tol) << what;
}

TEST(Colliders, PlaneDistanceIsHeightAlongTheNormal) {
  Collider c = make(ShapeType::Plane, vec3(0, 1, 0), vec3(1));
  c.rotation = rotation_y_to(vec3(0, 0, 1));  // fluid side +z through (0, 1, 0)
  const SdfSample s = collider_sdf(c, vec3(3, -2, 0.25f), 0);
  EXPECT_NEAR(s.distance, 0.25f, 1e-6f);
  expect_vec(s.normal, vec3(0, 0, 1), 1e-6f, "plane normal");
  EXPECT_NEAR(collider_sdf(c, vec3(0, 0, -2), 0).distance, -2.0f, 1e-6f);
}

TEST(Colliders, BoxDistancesOutsideInsideAndAtCorners) {
  const Collider c = make(ShapeType::Box, vec3(1, 0, 0), vec3(1, 2, 3));  // half extents
  // Outside a face.
  SdfSample s = collider_sdf(c, vec3(2.5f, 0.5f, 0), 0);
  EXPECT_NEAR(s.distance, 0.5f, 1e-6f);
  expect_vec(s.normal, vec3(1, 0, 0), 1e-6f, "face");
  // Outside a corner: Euclidean distance to the corner.
  s = collider_sdf(c, vec3(3, 3, 4), 0);
  EXPECT_NEAR(s.distance, std::sqrt(1.0f + 1.0f + 1.0f), 1e-5f);
  expect_vec(s.normal, vec3(1, 1, 1) / std::sqrt(3.0f), 1e-5f, "corner");
  // Inside: minus the distance to the nearest face.
  s = collider_sdf(c, vec3(1.2f, 1.5f, 0), 0);
  EXPECT_NEAR(s.distance, -0.5f, 1e-6f);
  expect_vec(s.normal, vec3(0, 1, 0), 1e-6f, "inside");
}

TEST(Colliders, ContainerFlipsTheSignAndTheNormal) {
  Collider c = make(ShapeType::Box, vec3(0, 0, 0), vec3(1, 1, 1));
  c.inside = 1;
  const SdfSample s = collider_sdf(c, vec3(0.9f, 0, 0), 0);
  EXPECT_NEAR(s.distance, 0.1f, 1e-6f);  // fluid side: positive
  expect_vec(s.normal, vec3(-1, 0, 0), 1e-6f, "points into the box");
  EXPECT_LT(collider_sdf(c, vec3(1.5f, 0, 0), 0).distance, 0.0f);
}

TEST(Colliders, ContainerBoxReportsOneWallPerAxisForBoundaryDensity) {
  Collider c = make(ShapeType::Box, vec3(0, 0, 0), vec3(1, 1, 1));
  c.inside = 1;
  SdfSample w[3];
  ASSERT_EQ(collider_walls(c, vec3(0.9f, -0.8f, 0.0f), 0, w), 3);
  EXPECT_NEAR(w[0].distance, 0.1f, 1e-6f);
  expect_vec(w[0].normal, vec3(-1, 0, 0), 1e-6f, "x wall");
  EXPECT_NEAR(w[1].distance, 0.2f, 1e-6f);
  expect_vec(w[1].normal, vec3(0, 1, 0), 1e-6f, "y wall");
  EXPECT_NEAR(w[2].distance, 1.0f, 1e-6f);
}

TEST(Colliders, SphereAndCapsuleDistances) {
  const Collider s = make(ShapeType::Sphere, vec3(0, 1, 0), vec3(0.5f));
  SdfSample d = collider_sdf(s, vec3(0, 1, 2), 0);
  EXPECT_NEAR(d.distance, 1.5f, 1e-6f);
  expect_vec(d.normal, vec3(0, 0, 1), 1e-6f, "sphere");
  EXPECT_NEAR(collider_sdf(s, vec3(0.1f, 1, 0), 0).distance, -0.4f, 1e-6f);

  const Collider c = make(ShapeType::Capsule, vec3(0, 0, 0), vec3(0.25f, 1.0f, 0));  // radius, half length
  d = collider_sdf(c, vec3(1, 0.5f, 0), 0);  // beside the segment
  EXPECT_NEAR(d.distance, 0.75f, 1e-6f);
  expect_vec(d.normal, vec3(1, 0, 0), 1e-6f, "capsule side");
  d = collider_sdf(c, vec3(0, 3, 0), 0);  // beyond the cap
  EXPECT_NEAR(d.distance, 1.75f, 1e-6f);
  expect_vec(d.normal, vec3(0, 1, 0), 1e-6f, "capsule cap");
}

TEST(Colliders, RotationAndMotionPlaceTheShape) {
  Collider c = make(ShapeType::Capsule, vec3(0, 0, 0), vec3(0.1f, 1.0f, 0));
  c.rotation = rotation_from_euler_degrees(vec3(0, 0, 90));  // local y -> world -x
  EXPECT_NEAR(collider_sdf(c, vec3(1.5f, 0, 0), 0).distance, 0.4f, 1e-5f);  // beyond the cap, along x
  EXPECT_NEAR(collider_sdf(c, vec3(0, 1.5f, 0), 0).distance, 1.4f, 1e-5f);
  c.velocity = vec3(0, 2, 0);
  EXPECT_NEAR(collider_sdf(c, vec3(0, 1.5f, 0), 0.5f).distance, 0.4f, 1e-5f);  // moved up by 1 m
}

// Distance to an ellipsoid by brute force: the nearest of many surface samples.
float sampled_distance(Vec3f semi, Vec3f p) {
  double best = 1e30;
  const int nu = 800, nv = 400;
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j <= nv; ++j) {
      const double u = 2 * M_PI * i / nu, v = M_PI * j / nv;
      const double x = semi.x * std::cos(u) * std::sin(v), y = semi.y * std::sin(u) * std::sin(v),
                   z = semi.z * std::cos(v);
      best = std::min(best, std::hypot(x - p.x, y - p.y, z - p.z));
    }
  return float(best);
}

TEST(Colliders, EllipsoidDistanceMatchesSampledSurface) {
  const Vec3f semi = vec3(0.6f, 0.3f, 0.2f);
  const Collider c = make(ShapeType::Ellipsoid, vec3(0, 0, 0), semi);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Vec3f> pts = {vec3(0, 0, 0), vec3(0.3f, 0, 0), vec3(0, 0, 0.05f), vec3(1, 0, 0), vec3(0, 0.5f, 0),
                            vec3(0.2f, 0.1f, 0)};
  for (int k = 0; k < 40; ++k) pts.push_back(vec3(u(rng), u(rng) * 0.6f, u(rng) * 0.5f));
  // Sampling resolution bounds the brute force's own error: ~ semi-axis * (pi / 400)^2 / 2.
  const float tol = 2e-3f;
  for (const Vec3f p : pts) {
    const SdfSample s = collider_sdf(c, p, 0);
    const float inside = (p.x * p.x) / (semi.x * semi.x) + (p.y * p.y) / (semi.y * semi.y) +
                         (p.z * p.z) / (semi.z * semi.z);
    EXPECT_EQ(s.distance < 0, inside < 1) << p.x << " " << p.y << " " << p.z;
    EXPECT_NEAR(std::fabs(s.distance), sampled_distance(semi, p), tol) << p.x << " " << p.y << " " << p.z;
    EXPECT_NEAR(length(s.normal), 1.0f, 1e-5f);
  }
}

TEST(Colliders, EllipsoidNormalIsTheDistanceGradient) {
  const Collider c = make(ShapeType::Ellipsoid, vec3(0.1f, 0.2f, 0.3f), vec3(0.5f, 0.25f, 0.35f));
  for (const Vec3f p : {vec3(0.9f, 0.4f, 0.1f), vec3(0.2f, 0.3f, 0.35f), vec3(-0.5f, -0.2f, 0.8f)}) {
    const SdfSample s = collider_sdf(c, p, 0);
    const float e = 1e-3f;
    const Vec3f g = vec3(collider_sdf(c, p + vec3(e, 0, 0), 0).distance - collider_sdf(c, p - vec3(e, 0, 0), 0).distance,
                         collider_sdf(c, p + vec3(0, e, 0), 0).distance - collider_sdf(c, p - vec3(0, e, 0), 0).distance,
                         collider_sdf(c, p + vec3(0, 0, e), 0).distance - collider_sdf(c, p - vec3(0, 0, e), 0).distance) /
                    (2 * e);
    expect_vec(s.normal, g, 5e-3f, "gradient");
  }
}

TEST(Colliders, EllipsoidWithEqualAxesIsASphere) {
  const Collider e = make(ShapeType::Ellipsoid, vec3(0, 0, 0), vec3(0.5f));
  for (const Vec3f p : {vec3(1, 0, 0), vec3(0.1f, 0.2f, 0.05f), vec3(0.3f, -0.4f, 0.6f), vec3(0, 0, 0.2f)})
    EXPECT_NEAR(collider_sdf(e, p, 0).distance, length(p) - 0.5f, 1e-5f);
}

}  // namespace
}  // namespace eddy

// Colliders that turn: the signed distance of a spinning shape is that of
// the shape turned by w t, its surface moves at v + w x r, and each liquid
// solver is dragged round by a square tank spinning about its axis (and
// not at all by the same tank at rest).
#include <gtest/gtest.h>

#include <cmath>

#include "eddy/core/collider.h"
#include "eddy/core/mat3.h"
#include "eddy/core/mpm/mpm.h"
#include "eddy/core/pbf/pbf.h"
#include "eddy/core/sph/sph.h"
#include "scenes.h"

namespace eddy {
namespace {

TEST(SpinningCollider, DistanceIsTheTurnedShapesAndTheSurfaceMovesWithIt) {
  Collider c;
  c.type = ShapeType::Box;
  c.center = vec3(0.3f, 0.5f, -0.2f);
  c.size = vec3(0.4f, 0.1f, 0.2f);
  c.rotation = rotation_from_euler_degrees(vec3(10, 0, 20));
  c.velocity = vec3(0.1f, 0, 0);
  c.angular_velocity = vec3(0, 2.0f, 0);  // about y
  const float t = 0.4f;                    // turned by 0.8 rad = 45.8 degrees about y
  Collider fixed = c;
  fixed.velocity = fixed.angular_velocity = vec3(0.0f);
  fixed.center = c.center + c.velocity * t;
  fixed.rotation = rotation_from_euler_degrees(vec3(0, 0.8f * 180.0f / float(M_PI), 0)) * c.rotation;
  for (const Vec3f p : {vec3(0.3f, 0.5f, 0.2f), vec3(0.9f, 0.6f, -0.1f), vec3(0.2f, 0.45f, -0.25f), vec3(0, 0, 0)}) {
    const SdfSample a = collider_sdf(c, p, t), b = collider_sdf(fixed, p, 0.0f);
    EXPECT_NEAR(a.distance, b.distance, 1e-5f);
    EXPECT_NEAR(length(a.normal - b.normal), 0.0f, 1e-4f);
    // v + w x (p - c(t))
    const Vec3f r = p - fixed.center, u = collider_velocity(c, p, t);
    EXPECT_NEAR(u.x, 0.1f + 2.0f * r.z, 1e-6f);
    EXPECT_NEAR(u.y, 0.0f, 1e-6f);
    EXPECT_NEAR(u.z, -2.0f * r.x, 1e-6f);
  }
  EXPECT_TRUE(collider_moves(c));
  EXPECT_FALSE(collider_moves(fixed));
}

// A block of liquid in a square tank turning about its vertical axis at w:
// the walls sweep the liquid round, so after half a second it turns the
// same way at a good share of w; in the tank at rest it does not turn.
constexpr float kR = 0.02f, kW = 3.0f;
Collider spinning_tank(float w) {
  Collider t = test::tank(vec3(-0.2f, 0, -0.2f), vec3(0.2f, 0.4f, 0.2f));
  t.angular_velocity = vec3(0, w, 0);
  t.friction = 0.5f;
  return t;
}
Points liquid() { return test::block(8, 5, 8, kR, vec3(-0.16f, 0.0f, -0.16f)); }

// Mean angular velocity about the y axis: L_y / I_y.
float turn_rate(const Points& p) {
  double L = 0, I = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3f x = p.P()[i], v = p.v()[i];
    L += double(x.z) * v.x - double(x.x) * v.z;  // (r x v)_y
    I += double(x.x) * x.x + double(x.z) * x.z;
  }
  return float(L / I);  // turning about +y at w, v = w x r gives (r x v)_y = w (x^2 + z^2)
}

// The liquid's turn rate after half a second of frames, frame(f) advancing
// solver s from frame f to f + 1.
template <class Solver, class Frame>
float turn_after_half_a_second(Solver& s, Frame&& frame) {
  for (int f = 0; f < 12; ++f) frame(f);
  Points out;
  if constexpr (requires { s.store(out, false); })
    s.store(out, false);  // MPM: positions and velocities, without its state
  else
    s.store(out);
  return turn_rate(out);
}

template <class Run>
void expect_dragged_round(const char* method, Run run) {
  const float spun = run(kW), still = run(0.0f);
  std::printf("%s: liquid turns at %.3f rad/s in a tank turning at %.1f rad/s, %.4f rad/s in a tank at rest\n",
              method, spun, kW, still);
  EXPECT_GT(spun, 0.25f * kW) << method;
  EXPECT_LT(spun, 1.05f * kW) << method;
  EXPECT_LT(std::abs(still), 0.01f * kW) << method;
}

TEST(SpinningCollider, ATurningTankDragsPbfLiquidRound) {
  expect_dragged_round("PBF", [](float w) {
    auto s = make_pbf_solver_cpu(PbfParams{}, 2);
    s->set_colliders({spinning_tank(w)});
    s->load(liquid());
    return turn_after_half_a_second(
        *s, [&](int f) { pbf_advance_frame(*s, f / 24.0, 1 / 24.0, SubstepPolicy{}, f + 1, kR); });
  });
}

TEST(SpinningCollider, ATurningTankDragsSphLiquidRound) {
  expect_dragged_round("DFSPH", [](float w) {
    SphParams p;
    p.method = SphMethod::Dfsph;
    auto s = make_sph_solver_cpu(p, 2);
    s->set_colliders({spinning_tank(w)});
    s->load(liquid());
    return turn_after_half_a_second(*s, [&](int f) { sph_advance_frame(*s, f / 24.0, 1 / 24.0, 0.0f, f + 1); });
  });
}

TEST(SpinningCollider, ATurningTankDragsMpmWaterRound) {
  expect_dragged_round("MPM", [](float w) {
    MpmParams p;
    p.domain_min = vec3(-0.3f, -0.1f, -0.3f);
    p.domain_max = vec3(0.3f, 0.5f, 0.3f);
    auto s = make_mpm_solver_cpu(p, 2);
    s->set_colliders({spinning_tank(w)});
    s->load(liquid(), MpmMaterial::Water);
    return turn_after_half_a_second(*s, [&](int f) { mpm_advance_frame(*s, f / 24.0, 1 / 24.0, 0.0f, f + 1); });
  });
}

}  // namespace
}  // namespace eddy

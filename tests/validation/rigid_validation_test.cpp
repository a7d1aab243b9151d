// Rigid bodies against physical facts: Coulomb's law on an incline (stick
// below the friction angle, slide at g (sin - mu cos) above it), a sphere
// rolling without slipping at 5/7 g sin, a stack that stands, impacts that
// gain no energy, and SAP's two measured artefacts (creep in stiction,
// gliding while sliding) against their formulas (Castro et al. 2022).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "eddy/core/rigid/rigid.h"

namespace eddy {
namespace {

constexpr double kG = 9.81;

Collider floor_plane(float friction) {
  Collider c;
  c.type = ShapeType::Plane;
  c.friction = friction;
  return c;
}

BodyGeometry box(double hx, double hy, double hz) {
  BodyGeometry g;
  g.half = Vec3d(hx, hy, hz);
  return g;
}

// Gravity of magnitude g tilted by theta about z: the floor becomes an
// incline rising towards -x.
Vec3f tilted_gravity(double theta) { return vec3(float(kG * std::sin(theta)), float(-kG * std::cos(theta)), 0.0f); }

struct Incline {
  RigidSolver solver;
  Incline(double theta, double mu, const BodyGeometry& g, double y, float tau = 0.0f)
      : solver([&] {
          RigidParams p;
          p.gravity = tilted_gravity(theta);
          p.dissipation_time = tau;
          return p;
        }()) {
    Bodies b;
    b.add("body", g, 500.0, Vec3d(0, y, 0), Quatd::Identity(), Vec3d::Zero(), Vec3d::Zero(), mu);
    solver.load(b);
    solver.set_colliders({floor_plane(float(mu))});
  }
  // Steps of h for `seconds`, calling each(t) after each.
  template <class Each>
  void run(double seconds, double h, Each&& each) {
    const int n = int(std::lround(seconds / h));
    for (int k = 0; k < n; ++k) {
      solver.step(float(h), float(k * h));
      each((k + 1) * h);
    }
  }
  const Bodies& b() const { return solver.bodies(); }
};

TEST(RigidValidation, ABoxStaysPutBelowTheFrictionAngleAndCreepsAsSapPredicts) {
  // tan(theta) = 0.3 < mu = 0.5.
  const double theta = std::atan(0.3), h = 1e-3;
  Incline s(theta, 0.5, box(0.1, 0.1, 0.1), 0.1);
  double x_half = 0;
  s.run(1.0, h, [&](double t) {
    if (std::abs(t - 0.5) < 0.5 * h) x_half = s.b().x[0].x();
  });
  const double drift = s.b().x[0].x();
  // Creep: with every contact in stiction and R_t,i = sigma w_i, the
  // optimality of SAP's cost gives the steady tangential speed
  // v = h g_t / sum_i 1 / (m R_t,i) (m v = m v* + sum_i gamma_t,i,
  // gamma_t,i = -v / R_t,i): about sigma times h g_t, the speed one step
  // of the tangential load gives, shared among the contacts.
  double inv = 0;
  for (const auto& r : s.solver.regularisation()) inv += 1.0 / (s.b().mass[0] * r.Rt);
  const double g_t = kG * std::sin(theta);
  const double predicted = h * g_t / inv;
  const double measured = (drift - x_half) / 0.5;
  std::printf("stiction: drift %.3g mm in 1 s; creep %.4g mm/s, SAP predicts %.4g mm/s (sigma h g_t = %.4g mm/s, %zu "
              "contacts)\n",
              1e3 * drift, 1e3 * measured, 1e3 * predicted, 1e3 * 1e-3 * h * g_t, s.solver.contacts().size());
  EXPECT_LT(std::abs(drift), 1e-3);
  EXPECT_NEAR(measured, predicted, 0.1 * predicted);
}

TEST(RigidValidation, ABoxSlidesAtGTimesSinMinusMuCosAboveTheFrictionAngle) {
  const double theta = std::atan(0.8), mu = 0.5, h = 1e-3;
  Incline s(theta, mu, box(0.1, 0.1, 0.1), 0.1);
  double v_half = 0;
  s.run(1.0, h, [&](double t) {
    if (std::abs(t - 0.5) < 0.5 * h) v_half = s.b().v[0].x();
  });
  const double a = (s.b().v[0].x() - v_half) / 0.5;
  const double expected = kG * (std::sin(theta) - mu * std::cos(theta));
  std::printf("sliding: a = %.5g m/s^2, g (sin - mu cos) = %.5g (%.3f %%)\n", a, expected,
              100 * (a - expected) / expected);
  EXPECT_NEAR(a, expected, 0.02 * expected);
}

TEST(RigidValidation, ASlidingBoxGlidesAboveTheFloorByMuVtTimesHPlusTau) {
  // Flat floor, a box launched at 2 m/s decelerating at mu g. While it
  // slides SAP's joint projection lifts it by about mu |v_t| (h + tau)
  // above where it rests.
  const double mu = 0.3, h = 1e-3;
  const float tau = 2e-3f;
  Incline s(0.0, mu, box(0.1, 0.05, 0.1), 0.05, tau);
  Bodies b = s.b();
  b.v[0] = Vec3d(2.0, 0, 0);
  s.solver.load(b);
  double lift = -1, speed = 0;
  s.run(1.5, h, [&](double) {
    const double v = s.b().v[0].x();
    if (lift < 0 && v < 1.5) {
      lift = s.b().x[0].y();
      speed = v;
    }
  });
  ASSERT_LT(std::abs(s.b().v[0].x()), 1e-3) << "still sliding";
  const double rest = s.b().x[0].y();
  const double measured = lift - rest, predicted = mu * speed * (h + tau);
  std::printf("gliding at %.3f m/s: %.4g mm above rest, mu |v_t| (h + tau) = %.4g mm\n", speed, 1e3 * measured,
              1e3 * predicted);
  EXPECT_NEAR(measured, predicted, 0.1 * predicted);
}

TEST(RigidValidation, ASphereRollsWithoutSlippingAtFiveSeventhsGSin) {
  const double theta = std::atan(0.5), h = 1e-3;
  BodyGeometry g;
  g.shape = BodyShape::Sphere;
  g.radius = 0.1;
  Incline s(theta, 1.0, g, 0.1);
  double v_half = 0;
  s.run(1.0, h, [&](double t) {
    if (std::abs(t - 0.5) < 0.5 * h) v_half = s.b().v[0].x();
  });
  const double a = (s.b().v[0].x() - v_half) / 0.5;
  const double expected = 5.0 / 7.0 * kG * std::sin(theta);
  // Rolling: the contact point is at rest, v + omega x r = 0 (r from the centre to the floor).
  const double slip = s.b().v[0].x() + (s.b().w[0].cross(Vec3d(0, -0.1, 0))).x();
  std::printf("rolling: a = %.5g m/s^2, 5/7 g sin = %.5g (%.3f %%), slip %.3g m/s\n", a, expected,
              100 * (a - expected) / expected, slip);
  EXPECT_NEAR(a, expected, 0.02 * expected);
  EXPECT_LT(std::abs(slip), 0.01 * s.b().v[0].x());
}

TEST(RigidValidation, AStackOfTenBoxesStands) {
  RigidParams p;
  RigidSolver s(p);
  Bodies b;
  const double half = 0.1;
  for (int k = 0; k < 10; ++k)
    b.add("box" + std::to_string(k), box(half, half, half), 500.0, Vec3d(0, half + 2 * half * k, 0));
  s.load(b);
  s.set_colliders({floor_plane(0.5f)});
  const Vec3d top0 = b.x[9];
  int worst_iterations = 0, unconverged = 0;
  double penetration = 0;
  const double seconds = 10.0, h = p.time_step;
  for (int k = 0; k < int(seconds / h); ++k) {
    const RigidStepStats st = s.step(float(h), float(k * h));
    worst_iterations = std::max(worst_iterations, st.iterations);
    unconverged += st.converged ? 0 : 1;
    penetration = std::max(penetration, st.penetration);
  }
  const double drift = (s.bodies().x[9] - top0).norm();
  std::printf("stack of 10 over %.0f s: top box moved %.3g mm; deepest penetration %.3g mm; SAP at most %d "
              "iterations, %d steps short of tolerance\n",
              seconds, 1e3 * drift, 1e3 * penetration, worst_iterations, unconverged);
  EXPECT_LT(drift, 1e-3);
  EXPECT_LT(penetration, 1e-3);
  EXPECT_EQ(unconverged, 0);
}

TEST(RigidValidation, ACrateOnATurntableTurnsWithIt) {
  // A turntable (a solid box collider turning about y at 1 rad/s) with a
  // crate 0.3 m off its axis: friction holds it (the centripetal 0.3 m/s^2
  // is far below mu g), so it moves with the surface, v = w x r.
  Collider table;
  table.type = ShapeType::Box;
  table.center = vec3(0, -0.05f, 0);
  table.size = vec3(1.0f, 0.05f, 1.0f);
  table.angular_velocity = vec3(0, 1.0f, 0);
  table.friction = 1.0f;
  RigidParams p;
  RigidSolver s(p);
  Bodies b;
  b.add("crate", box(0.05, 0.05, 0.05), 500.0, Vec3d(0.3, 0.05, 0), Quatd::Identity(), Vec3d::Zero(), Vec3d::Zero(),
        1.0);
  s.load(b);
  s.set_colliders({table});
  for (int k = 0; k < 1000; ++k) s.step(1e-3f, float(k * 1e-3));
  const Vec3d x = s.bodies().x[0], v = s.bodies().v[0];
  const Vec3d expected = Vec3d(0, 1, 0).cross(Vec3d(x.x(), 0, x.z()));
  const double radius = std::hypot(x.x(), x.z());
  std::printf("turntable: after 1 s the crate is %.4f m off the axis (started at 0.3) and moves at %.4f m/s, the "
              "surface under it at %.4f m/s; its spin %.4f rad/s\n",
              radius, v.norm(), expected.norm(), s.bodies().w[0].y());
  EXPECT_NEAR(radius, 0.3, 1e-3);
  EXPECT_LT((v - expected).norm(), 0.01 * expected.norm());
  EXPECT_NEAR(s.bodies().w[0].y(), 1.0, 0.01);
}

TEST(RigidValidation, ATumblingBoxDroppedOnTheFloorGainsNoEnergy) {
  RigidParams p;
  RigidSolver s(p);
  Bodies b;
  b.add("die", box(0.1, 0.05, 0.08), 800.0, Vec3d(0, 0.5, 0),
        Quatd(Eigen::AngleAxisd(0.7, Vec3d(1, 2, 3).normalized())), Vec3d(0.5, 0, 0), Vec3d(3, -2, 5), 0.4);
  s.load(b);
  s.set_colliders({floor_plane(0.4f)});
  auto energy = [&] {
    const Bodies& c = s.bodies();
    return c.kinetic_energy(0) + c.mass[0] * kG * c.x[0].y();
  };
  const double e0 = energy();
  double worst = 0;
  for (int k = 0; k < 2000; ++k) {
    s.step(1e-3f, float(k * 1e-3));
    worst = std::max(worst, energy() - e0);
  }
  std::printf("dropped die: energy at most %.3g J above its start (of %.3g J); %.3g J at rest\n", worst, e0, energy());
  EXPECT_LT(worst, 1e-6 * e0);
  EXPECT_LT(s.bodies().v[0].norm(), 0.01);
}

}  // namespace
}  // namespace eddy

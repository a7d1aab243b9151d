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

// The same box as a mesh body (voxel 5 mm), and the turn that sets its body
// frame (on its principal axes, in whatever order they come) back on the
// box's axes.
struct MeshBox {
  BodyGeometry g;
  Quatd turn;
};
MeshBox mesh_box(double hx, double hy, double hz) {
  const BodyMeshPlacement m = body_mesh(box_mesh(vec3(0.0f), vec3(float(hx), float(hy), float(hz))), 0.005);
  MeshBox b;
  b.g.shape = BodyShape::Mesh;
  b.g.mesh = m.shape;
  b.turn = m.axes;
  return b;
}

// Gravity of magnitude g tilted by theta about z: the floor becomes an
// incline rising towards -x.
Vec3f tilted_gravity(double theta) { return vec3(float(kG * std::sin(theta)), float(-kG * std::cos(theta)), 0.0f); }

struct Incline {
  RigidSolver solver;
  Incline(double theta, double mu, const BodyGeometry& g, double y, float tau = 0.0f,
          const Quatd& turn = Quatd::Identity(), SapModel model = SapModel::Sap)
      : solver([&] {
          RigidParams p;
          p.gravity = tilted_gravity(theta);
          p.dissipation_time = tau;
          p.friction_model = model;
          return p;
        }()) {
    Bodies b;
    b.add("body", g, 500.0, Vec3d(0, y, 0), turn, Vec3d::Zero(), Vec3d::Zero(), mu);
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

// The Lagged model: the same launch slides at mu g without gliding (normal
// and friction are projected apart), and a box below the friction angle of
// an incline stays put.
TEST(RigidValidation, TheLaggedModelSlidesAtMuGWithoutGlidingAndSticks) {
  const double mu = 0.3, h = 1e-3;
  const float tau = 2e-3f;
  Incline s(0.0, mu, box(0.1, 0.05, 0.1), 0.05, tau, Quatd::Identity(), SapModel::Lagged);
  Bodies b = s.b();
  b.v[0] = Vec3d(2.0, 0, 0);
  s.solver.load(b);
  double lift = -1, speed = 0, t_fast = -1, t_slow = -1;
  s.run(1.5, h, [&](double t) {
    const double v = s.b().v[0].x();
    if (t_fast < 0 && v < 1.8) t_fast = t;
    if (lift < 0 && v < 1.5) {
      lift = s.b().x[0].y();
      speed = v;
    }
    if (t_slow < 0 && v < 0.8) t_slow = t;
  });
  ASSERT_LT(std::abs(s.b().v[0].x()), 1e-3) << "still sliding";
  const double rest = s.b().x[0].y(), measured = lift - rest;
  // From 1.8 to 0.8 m/s at mu g (the crossings to a step, h / (t_slow - t_fast) of it).
  const double a = 1.0 / (t_slow - t_fast), expected = mu * kG;
  std::printf("lagged: sliding at %.3f m/s %.3g mm above rest (SAP: mu |v_t| (h + tau) = %.3g mm); decelerating at "
              "%.4g m/s^2, mu g = %.4g\n",
              speed, 1e3 * measured, 1e3 * mu * speed * (h + tau), a, expected);
  EXPECT_LT(std::abs(measured), 0.02 * mu * speed * (h + tau));
  EXPECT_NEAR(a, expected, 0.02 * expected);

  const double theta = std::atan(0.3);  // below mu = 0.5
  Incline stick(theta, 0.5, box(0.1, 0.1, 0.1), 0.1, 0.0f, Quatd::Identity(), SapModel::Lagged);
  stick.run(1.0, h, [](double) {});
  std::printf("lagged: on the incline below the friction angle the box moved %.3g mm in 1 s\n",
              1e3 * std::abs(stick.b().x[0].x()));
  EXPECT_LT(std::abs(stick.b().x[0].x()), 1e-3);
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

// A die (0.2 x 0.1 x 0.16 m, 800 kg/m^3) of shape g dropped tumbling from
// 0.5 m onto a floor for 2 s (h = 1 ms); `turn` sets its body frame on the
// die's axes.
struct Drop {
  Bodies end;
  double e0 = 0, worst = 0, penetration = 0;  // J: at the start, most above it; m
};
Drop drop_die(const BodyGeometry& g, const Quatd& turn = Quatd::Identity()) {
  RigidParams p;
  RigidSolver s(p);
  Bodies b;
  b.add("die", g, 800.0, Vec3d(0, 0.5, 0), Quatd(Eigen::AngleAxisd(0.7, Vec3d(1, 2, 3).normalized())) * turn,
        Vec3d(0.5, 0, 0), Vec3d(3, -2, 5), 0.4);
  s.load(b);
  s.set_colliders({floor_plane(0.4f)});
  auto energy = [&] {
    const Bodies& c = s.bodies();
    return c.kinetic_energy(0) + c.mass[0] * kG * c.x[0].y();
  };
  Drop d;
  d.e0 = energy();
  for (int k = 0; k < 2000; ++k) {
    d.penetration = std::max(d.penetration, s.step(1e-3f, float(k * 1e-3)).penetration);
    d.worst = std::max(d.worst, energy() - d.e0);
  }
  d.end = s.bodies();
  return d;
}

TEST(RigidValidation, ATumblingBoxDroppedOnTheFloorGainsNoEnergy) {
  const Drop d = drop_die(box(0.1, 0.05, 0.08));
  std::printf("dropped die: energy at most %.3g J above its start (of %.3g J); %.3g J at rest\n", d.worst, d.e0,
              d.end.kinetic_energy(0) + d.end.mass[0] * kG * d.end.x[0].y());
  EXPECT_LT(d.worst, 1e-6 * d.e0);
  EXPECT_LT(d.end.v[0].norm(), 0.01);
}

// Mesh bodies: the same facts through sampled signed distances and surface
// samples, against the primitive box they are made of.

TEST(RigidMeshValidation, AMeshBoxSlidesAtGTimesSinMinusMuCos) {
  const double theta = std::atan(0.8), mu = 0.5, h = 1e-3;
  const MeshBox m = mesh_box(0.1, 0.1, 0.1);
  Incline s(theta, mu, m.g, 0.1, 0.0f, m.turn);
  double v_half = 0;
  s.run(1.0, h, [&](double t) {
    if (std::abs(t - 0.5) < 0.5 * h) v_half = s.b().v[0].x();
  });
  const double a = (s.b().v[0].x() - v_half) / 0.5;
  const double expected = kG * (std::sin(theta) - mu * std::cos(theta));
  std::printf("mesh box sliding: a = %.5g m/s^2, g (sin - mu cos) = %.5g (%.3f %%), %zu surface samples\n", a,
              expected, 100 * (a - expected) / expected, m.g.mesh->samples.size());
  EXPECT_NEAR(a, expected, 0.02 * expected);
}

// Dropped tumbling, a box as a mesh body comes to rest on a face as the
// primitive box does, at the height of that face's half extent, gaining no
// energy on the way.
TEST(RigidMeshValidation, ATumblingMeshBoxComesToRestOnAFaceGainingNoEnergy) {
  const Vec3d half(0.1, 0.05, 0.08);
  const MeshBox m = mesh_box(half.x(), half.y(), half.z());
  const Drop d = drop_die(m.g, m.turn);
  const Bodies& c = d.end;
  // The face it rests on: the box axis nearest the vertical.
  const Vec3d up = (c.q[0] * m.turn.conjugate()).conjugate() * Vec3d::UnitY();
  int axis = 0;
  up.cwiseAbs().maxCoeff(&axis);
  std::printf("dropped mesh die: energy at most %.3g J above its start (of %.3g J); at rest on the face normal to "
              "axis %d, centre %.5f m up (half extent %.3f), deepest penetration %.3g mm\n",
              d.worst, d.e0, axis, c.x[0].y(), half[axis], 1e3 * d.penetration);
  EXPECT_LT(d.worst, 1e-6 * d.e0);
  EXPECT_LT(c.v[0].norm(), 0.01);
  EXPECT_GT(std::abs(up[axis]), std::cos(0.02));  // flat on the face
  EXPECT_NEAR(c.x[0].y(), half[axis], 1e-3);
  EXPECT_LT(d.penetration, 1e-3);
}

// Mesh on mesh: three mesh crates stacked on the floor stand for 3 s, and a
// ball laid on the top one rests on its face.
TEST(RigidMeshValidation, MeshCratesStackAndHoldABall) {
  const double half = 0.1, r = 0.05;
  const MeshBox m = mesh_box(half, half, half);
  RigidParams p;
  RigidSolver s(p);
  Bodies b;
  for (int k = 0; k < 3; ++k) b.add("crate" + std::to_string(k), m.g, 500.0, Vec3d(0, half + 2 * half * k, 0), m.turn);
  BodyGeometry ball;
  ball.shape = BodyShape::Sphere;
  ball.radius = r;
  b.add("ball", ball, 500.0, Vec3d(0.03, 6 * half + r, 0.02));
  s.load(b);
  s.set_colliders({floor_plane(0.5f)});
  const Vec3d top0 = b.x[2];
  double penetration = 0;
  int unconverged = 0;
  const double h = p.time_step;
  for (int k = 0; k < int(3.0 / h); ++k) {
    const RigidStepStats st = s.step(float(h), float(k * h));
    penetration = std::max(penetration, st.penetration);
    unconverged += st.converged ? 0 : 1;
  }
  const double drift = (s.bodies().x[2] - top0).norm();
  std::printf("mesh stack of 3 over 3 s: top crate moved %.3g mm, the ball's centre %.5f m up (%.5f expected); "
              "deepest penetration %.3g mm\n",
              1e3 * drift, s.bodies().x[3].y(), 6 * half + r, 1e3 * penetration);
  EXPECT_LT(drift, 1e-3);
  EXPECT_NEAR(s.bodies().x[3].y(), 6 * half + r, 1e-3);
  EXPECT_LT(s.bodies().v[3].norm(), 0.01);
  EXPECT_LT(penetration, 1e-3);
  EXPECT_EQ(unconverged, 0);
}

// An egg (an ellipsoid mesh, semi-axes 0.12, 0.08, 0.05 m, turned off its
// axes) dropped on the floor rolls over onto its flattest side: the only
// stable rest, with the centre of mass at the shortest semi-axis above the
// floor (the mesh's own lowest point there: 0.04995 m for its facets).
TEST(RigidMeshValidation, AnEggSettlesOnItsFlattestSide) {
  Mesh egg = sphere_mesh(1.0f, 24, 48);
  for (Vec3f& p : egg.points) p = vec3(0.12f * p.x, 0.08f * p.y, 0.05f * p.z);
  const BodyMeshPlacement m = body_mesh(egg, 0.004);
  BodyGeometry g;
  g.shape = BodyShape::Mesh;
  g.mesh = m.shape;
  RigidParams p;
  p.dissipation_time = 0.05f;
  RigidSolver s(p);
  Bodies b;
  // Standing on its long axis, tipped 0.3 rad: it must fall over and roll twice.
  const Quatd start = Quatd(Eigen::AngleAxisd(1.2, Vec3d::UnitZ())) * Quatd(Eigen::AngleAxisd(0.3, Vec3d::UnitX()));
  b.add("egg", g, 1000.0, Vec3d(0, 0.2, 0), start * m.axes, Vec3d::Zero(), Vec3d::Zero(), 0.8);
  s.load(b);
  s.set_colliders({floor_plane(0.8f)});
  double penetration = 0;
  const double h = p.time_step;
  for (int k = 0; k < int(4.0 / h); ++k) penetration = std::max(penetration, s.step(float(h), float(k * h)).penetration);
  const Bodies& c = s.bodies();
  // The egg's own z axis (its shortest) in world axes.
  const Vec3d short_axis = c.q[0] * m.axes.conjugate() * Vec3d::UnitZ();
  double lowest = 1e9;
  int on_floor = 0;
  for (const Vec3f& q : m.shape->mesh.points) lowest = std::min(lowest, (c.x[0] + c.q[0] * to_vec3d(q)).y());
  for (const Vec3f& q : m.shape->mesh.points) on_floor += (c.x[0] + c.q[0] * to_vec3d(q)).y() < lowest + 2e-4;
  // A faceted egg rests on a facet, not on the vertex at the tip of its
  // short axis: tilted by as much as a facet there is turned from that axis.
  double facet = 0;
  for (const auto& t : egg.triangles) {
    const Vec3d a = to_vec3d(egg.points[std::size_t(t[0])]), b = to_vec3d(egg.points[std::size_t(t[1])]),
                e = to_vec3d(egg.points[std::size_t(t[2])]);
    if (std::max({a.z(), b.z(), e.z()}) < 0.0499) continue;
    facet = std::max(facet, std::acos(std::abs((b - a).cross(e - a).normalized().z())));
  }
  for (const auto& q : egg.quads) {
    const Vec3d a = to_vec3d(egg.points[std::size_t(q[0])]), b = to_vec3d(egg.points[std::size_t(q[1])]),
                e = to_vec3d(egg.points[std::size_t(q[2])]), f = to_vec3d(egg.points[std::size_t(q[3])]);
    if (std::max({a.z(), b.z(), e.z(), f.z()}) < 0.0499) continue;
    facet = std::max(facet, std::acos(std::abs((e - a).cross(f - b).normalized().z())));
  }
  const double tilt = std::acos(std::min(1.0, std::abs(short_axis.y())));
  std::printf("egg at rest: centre %.5f m up (shortest semi-axis 0.05), short axis %.4f rad from vertical (the "
              "facets at its tip: up to %.4f), %d points on the floor, the lowest %.3g mm from it, speed %.3g m/s, "
              "deepest penetration %.3g mm\n",
              c.x[0].y(), tilt, facet, on_floor, 1e3 * lowest, c.v[0].norm(), 1e3 * penetration);
  EXPECT_NEAR(c.x[0].y(), 0.05, 1e-3);
  EXPECT_LT(tilt, facet + 0.005);
  EXPECT_GE(on_floor, 3);  // on a facet
  EXPECT_NEAR(lowest, 0.0, 1e-3);
  EXPECT_LT(c.v[0].norm() + 0.05 * c.w[0].norm(), 0.01);
  EXPECT_LT(penetration, 2e-3);
}

}  // namespace
}  // namespace eddy

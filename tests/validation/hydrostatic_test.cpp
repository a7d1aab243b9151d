// A water column at rest in a tank (SPH): after settling, pressure grows
// with depth as rho0 g (H - y), the liquid is still, and no particle leaves
// the tank, with both wall models and both methods.
//
// Setup: a 0.2 x 0.4 x 0.1 m column (r = 1 cm, 2,000 particles) in a tank
// of the same footprint, settled for 2.5 s and measured over the next 0.5 s
// (WCSPH: about 10,000 steps): pressure is fitted against depth below the
// free surface over the particles between two spacings below the surface
// and two above the floor (the free surface and the wall layer carry the
// kernel's truncation), pooled over the measured frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "eddy/core/sph/sph.h"

namespace eddy {
namespace {

struct Settled {
  double slope = 0;      // fitted dp/d(depth) over rho0 g
  double intercept = 0;  // fitted pressure at the surface, Pa
  float max_speed = 0, mean_speed = 0;
  uint32_t projected = 0, outside = 0;
  int steps = 0;
};

Settled settle(SphMethod method, SphWalls walls, float fixed_dt = 0.0f) {
  const float r = 0.01f;
  const int nx = 10, ny = 20, nz = 5;
  Points pts(std::size_t(nx) * ny * nz);
  pts.radius = r;
  std::size_t i = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x, ++i) pts.P()[i] = vec3(r + 2 * r * x, r + 2 * r * y, r + 2 * r * z);
  Collider tank;
  tank.type = ShapeType::Box;
  tank.inside = 1;
  tank.size = vec3(nx * r, 0.5f, nz * r);
  tank.center = tank.size;
  SphParams p;
  p.method = method;
  p.walls = walls;
  // XSPH damps the sloshing the lattice start sets off (the column starts
  // with no pressure); water's own viscosity would take minutes to.
  p.xsph = 0.05f;
  auto s = make_sph_solver_cpu(p);
  s->set_colliders({tank});
  s->load(pts);
  Settled out;
  double t = 0;
  // 2.5 s to settle, then 0.5 s measured: the fit pools every frame's
  // particles and the mean speed is averaged over the frames, so neither
  // depends on the phase of what still rings (with boundary particles WCSPH
  // keeps a small vertical bounce of the column on its Tait spring, period
  // 4 H / c0 = 0.06 s, that nothing but the walls damps).
  const int settle = 60, measured = 12;  // frames at 24 fps
  double sx = 0, sy = 0, sxx = 0, sxy = 0, speed_sum = 0;
  long n = 0;
  for (int f = 1; f <= settle + measured; ++f) {
    const SphFrameStats st = sph_advance_frame(*s, t, 1.0 / 24, fixed_dt, f);
    t += 1.0 / 24;
    out.projected += st.projected;
    out.steps += st.steps;
    if (f <= settle) continue;
    Points q;
    s->store(q);
    const float* pr = q.get_float("pressure");
    float top = -1;
    for (std::size_t k = 0; k < q.size(); ++k) {
      const Vec3f x = q.P()[k];
      top = std::max(top, x.y);
      const float v = length(q.v()[k]);
      out.max_speed = std::max(out.max_speed, v);
      speed_sum += v;
      if (collider_sdf(tank, x, 0.0f).distance < 0.0f) ++out.outside;
    }
    const double surface = top + r;
    for (std::size_t k = 0; k < q.size(); ++k) {
      const double y = q.P()[k].y, d = surface - y;
      if (d < 4 * r || y < 4 * r) continue;
      sx += d, sy += pr[k], sxx += d * d, sxy += d * pr[k];
      ++n;
    }
  }
  out.mean_speed = float(speed_sum / (double(measured) * double(nx * ny * nz)));
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  out.slope = slope / (1000.0 * 9.81);
  out.intercept = (sy - slope * sx) / n;
  std::printf("  %s, %s%s: %d steps, dp/d(depth) = %.3f rho0 g (surface %.0f Pa), speed max %.3f mean %.4f m/s, "
              "%u projected, %u outside\n",
              method == SphMethod::Wcsph ? "WCSPH" : "DFSPH",
              walls == SphWalls::BoundaryParticles ? "boundary particles" : "spring-damper walls",
              fixed_dt > 0 ? (", steps of at most " + std::to_string(int(fixed_dt * 1000 + 0.5f)) + " ms").c_str() : "",
              out.steps,
              out.slope, out.intercept, out.max_speed, out.mean_speed, out.projected, out.outside);
  return out;
}

// Spring-damper walls: within 10 % (WCSPH 1.006, DFSPH 0.975 rho0 g). WCSPH's
// pressure is the Tait equation of its density, noisy at the 0.1 % level (5 %
// of the hydrostatic pressure at mid-depth); DFSPH has no pressure state, its
// pressure is estimated from the stiffness its solvers applied, averaged over
// each frame's steps.
//
// Boundary particles: within 25 %; both methods read 1.19-1.20 rho0 g here.
// Akinci's walls mirror the particle's own pressure, so next to a side wall
// the part of the neighbourhood that should carry the pressure gradient
// carries none, and in this column, 5 particles deep, nearly every particle
// has a side wall within its support (DFSPH 10 and 20 deep: 1.15 and 1.08).
// The remedy is a wall pressure extrapolated from the liquid (Adami et al.
// 2012, Band et al. 2018). Until the pooled measurement, this test fitted
// one frame at 1.5 s and held WCSPH to 10 % on a reading of 1.04; the same
// build read 1.34 at 3 s and 1.09 at 4 s, and pooled over 2.5-3 s, 1.21.
// The speed and leak limits below are the same for all.
void expect_hydrostatic(const Settled& s, double tolerance) {
  EXPECT_NEAR(s.slope, 1.0, tolerance);
  // Still: the mean speed under 1 % of the column's free-fall speed sqrt(2 g H) = 2.8 m/s.
  EXPECT_LT(s.mean_speed, 0.028f);
  // Nothing leaks, and no particle needed the walls' last-resort projection.
  EXPECT_EQ(s.outside, 0u);
  EXPECT_EQ(s.projected, 0u);
}

TEST(Hydrostatic, WcsphWithBoundaryParticles) {
  expect_hydrostatic(settle(SphMethod::Wcsph, SphWalls::BoundaryParticles), 0.25);
}
TEST(Hydrostatic, WcsphWithSpringDamperWalls) {
  expect_hydrostatic(settle(SphMethod::Wcsph, SphWalls::SpringDamper), 0.10);
}
TEST(Hydrostatic, DfsphWithBoundaryParticles) {
  expect_hydrostatic(settle(SphMethod::Dfsph, SphWalls::BoundaryParticles), 0.25);
}
// At a fixed 1 ms step (adaptive steps here are about 5 ms) particles next
// to the tank's vertical edges slipped into the hole the edge sampling left
// in the boundary layer (tests/unit/core/sph_test.cpp): 224 last-resort
// projections over 1.5 s. None now.
TEST(Hydrostatic, DfsphWithBoundaryParticlesAtFixedSteps) {
  expect_hydrostatic(settle(SphMethod::Dfsph, SphWalls::BoundaryParticles, 0.001f), 0.25);
}
TEST(Hydrostatic, DfsphWithSpringDamperWalls) {
  expect_hydrostatic(settle(SphMethod::Dfsph, SphWalls::SpringDamper), 0.10);
}

}  // namespace
}  // namespace eddy

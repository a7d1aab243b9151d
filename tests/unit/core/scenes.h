#pragma once
// Small scenes shared by the tests: a block of particles on a lattice of
// spacing 2r (with an `id`), the same block all moving at one velocity, a
// container box, and a UV sphere mesh.
#include <cmath>

#include "eddy/core/collider.h"
#include "eddy/core/mesh.h"
#include "eddy/core/points.h"

namespace eddy::test {

inline Points block(int nx, int ny, int nz, float r, Vec3f origin = vec3(0)) {
  Points p(std::size_t(nx) * ny * nz);
  p.radius = r;
  p.add("id", AttribType::Int);
  std::size_t i = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x, ++i) {
        p.P()[i] = origin + vec3(r + x * 2 * r, r + y * 2 * r, r + z * 2 * r);
        p.get_int("id")[i] = int32_t(i);
      }
  return p;
}

// A block every particle of which moves at `v` (thrown into a corner of a
// tank, a splash that exercises every stage of a step).
inline Points moving_block(int nx, int ny, int nz, float r, Vec3f origin, Vec3f v) {
  Points p = block(nx, ny, nz, r, origin);
  for (std::size_t i = 0; i < p.size(); ++i) p.v()[i] = v;
  return p;
}

// Steps a solver that chooses its own step (suggest_dt) from simulation
// time t until it reaches `until`; returns the time reached.
template <class Solver>
double run_until(Solver& s, double t, double until) {
  while (t < until) {
    const float dt = s.suggest_dt();
    s.step(dt, float(t));
    t += dt;
  }
  return t;
}

inline Collider tank(Vec3f lo, Vec3f hi) {
  Collider c;
  c.type = ShapeType::Box;
  c.inside = 1;
  c.center = (lo + hi) * 0.5f;
  c.size = (hi - lo) * 0.5f;
  return c;
}

}  // namespace eddy::test

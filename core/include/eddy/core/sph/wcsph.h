#pragma once
// WCSPH (Becker & Teschner 2007, with Mueller et al. 2003's kernels): the
// Tait equation of state, and the step between the shared density and
// integration stages. Part of solver.h, which includes it after the class.
#include "eddy/core/sph/solver.h"

namespace eddy {

// Tait (Becker & Teschner 2007, eq. 6): p = B ((rho/rho0)^gamma - 1), with
// rel = rho / rho0; clamped at 0 (no tensile instability) when c.clamp.
EDDY_HD_INLINE float tait_pressure(const SphConstants& c, float rel) {
  float p = c.B * (powf(rel, c.gamma) - 1.0f);
  if (c.clamp) p = fmaxf(p, 0.0f);
  return p;
}

// forces (pressure, viscosity, surface tension, walls), then v += dt a, x += dt v.
template <class Exec>
void SphSolverT<Exec>::wcsph_step(float dt, StageClock& clock, SphStageTimes& times) {
  if (c_.tension_model != 0) compute_normals();
  compute_forces(dt, /*pressure=*/true);
  times.forces = clock.lap();
  integrate(dt, /*add_accel=*/true);
}

}  // namespace eddy

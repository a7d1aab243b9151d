#pragma once
// SPH surface tension: Akinci et al. 2013 (cohesion and curvature) and
// Mueller et al. 2003's colour field. Part of solver.h, which includes it
// after the class.
#include "eddy/core/sph/solver.h"

namespace eddy {

// Akinci et al. 2013, eq. 1-7: cohesion and curvature between particles i
// and j at r = x_i - x_j (|r| = rl > 0), with K_ij = 2 rho0 / (rho_i + rho_j).
// The acceleration to subtract.
EDDY_HD_INLINE Vec3f akinci_tension(const SphConstants& c, const CohesionSpline& C, Vec3f r, float rl, float rho_i,
                                    float rho_j, Vec3f n_i, Vec3f n_j) {
  const float K = 2.0f * c.rho0 / (rho_i + rho_j);
  return (r * (c.mass * C(rl) / rl) + (n_i - n_j)) * (c.tension * K);
}

// Mueller et al. 2003, eq. 19: f = -sigma lap(c) n / |n| where |n| passes
// the threshold. The acceleration to subtract.
EDDY_HD_INLINE Vec3f color_field_tension(const SphConstants& c, Vec3f n, float lap, float rho_i) {
  const float nl = length(n);
  if (!(nl > c.color_threshold)) return vec3(0.0f);
  return n * (c.tension * lap / (nl * rho_i));
}

// Surface normals for surface tension: Akinci et al. 2013, eq. 6, n_i =
// h sum_j (m / rho_j) grad W_ij; the colour field (Mueller et al. 2003,
// eq. 15-19) keeps n_i = grad c_i unscaled and its Laplacian.
template <class Exec>
void SphSolverT<Exec>::compute_normals() {
  const SphConstants c = c_;
  const Poly6 W(c.h);
  const NeighborView nb = grid_.neighbors();
  const Vec3f* x = x_.data();
  const float* density = density_.data();
  Vec3f* normal = normal_.data();
  float* lap = lap_.data();
  const float scale = c.tension_model == int(SurfaceTension::Akinci2013) ? c.h : 1.0f;
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
    const Vec3f xi = x[i];
    Vec3f n = vec3(0.0f);
    float l = W.laplacian(0.0f) / density[i];
    for (uint32_t q = nb.begin(i); q < nb.end(i); ++q) {
      const uint32_t j = nb.indices[q];
      const Vec3f r = xi - x[j];
      const float vj = 1.0f / density[j];  // V0 rho0 / rho_j in volume0 units
      n += W.grad(r) * vj;
      l += W.laplacian(length2(r)) * vj;
    }
    normal[i] = n * (c.volume0 * scale);
    lap[i] = l * c.volume0;
  });
}

}  // namespace eddy

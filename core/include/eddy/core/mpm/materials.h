#pragma once
// MLS-MPM's material models, per particle (EDDY_HD, for every executor):
// the Kirchhoff stress of each material and the plasticity that follows
// the update of F, over the constants derived once from MpmParams. Part of
// the MPM step (mpm/solver.h).
#include <cmath>

#include "eddy/core/hd.h"
#include "eddy/core/mat3.h"
#include "eddy/core/mpm/mpm.h"

namespace eddy {

// Constants derived once from the parameters, captured by value in every loop.
struct MpmConstants {
  float dx = 0, inv_dx = 0;
  float volume = 0;                  // V_p, m^3
  float mass[kMpmMaterialCount] = {};
  float mu[kMpmMaterialCount] = {}, lambda[kMpmMaterialCount] = {};
  float bulk = 0;                    // water K
  float viscosity = 0;               // water, Pa s
  float theta_c = 0, theta_s = 0, hardening = 0;  // snow
  float sand_alpha = 0;              // Drucker-Prager cone: sqrt(2/3) 2 sin(phi) / (3 - sin(phi))
  int transfer = 0;                  // MpmTransfer
  float flip = 0;
  int boundary = 0;                  // MpmBoundary
  float domain_friction = 0;
  Vec3f domain_lo{0, 0, 0}, domain_hi{0, 0, 0};
  Vec3f gravity{0, 0, 0};
};

MpmConstants mpm_constants(const MpmParams& p, float radius);

namespace mpm {

// Kirchhoff stress tau = P F^T of a particle (C: its velocity gradient).
EDDY_HD_INLINE Mat3f kirchhoff_stress(const MpmConstants& c, int material, const Mat3f& F, const Mat3f& C, float jp) {
  const float J = determinant(F);
  if (material == int(MpmMaterial::Water))
    return mat3_scalar(c.bulk * J * (J - 1.0f)) + (C + transpose(C)) * (c.viscosity * J);
  if (material == int(MpmMaterial::Sand)) {
    // Hencky strain: tau = U (2 mu eps + lambda tr(eps)) U^T, eps = log(s).
    const Svd3 d = svd3(F);
    const Vec3f eps = vec3(logf(fmaxf(fabsf(d.s.x), 1e-4f)), logf(fmaxf(fabsf(d.s.y), 1e-4f)),
                           logf(fmaxf(fabsf(d.s.z), 1e-4f)));
    const float mu = c.mu[3], la = c.lambda[3];
    const float tr = eps.x + eps.y + eps.z;
    const Vec3f t = eps * (2.0f * mu) + vec3(la * tr);
    return d.U * mat3_diag(t) * transpose(d.U);
  }
  // Fixed corotated: 2 mu (F - R) F^T + lambda J (J - 1) I, R = U V^T.
  float mu = c.mu[material], la = c.lambda[material];
  if (material == int(MpmMaterial::Snow)) {
    const float h = expf(c.hardening * (1.0f - jp));
    mu *= h;
    la *= h;
  }
  const Svd3 d = svd3(F);
  const Mat3f R = d.U * transpose(d.V);
  return (F - R) * transpose(F) * (2.0f * mu) + mat3_scalar(la * J * (J - 1.0f));
}

// Plasticity after F <- (I + dt C) F: water keeps only J, snow clamps its
// singular values, sand projects onto the Drucker-Prager cone.
EDDY_HD_INLINE void plasticity(const MpmConstants& c, int material, Mat3f& F, float& jp) {
  if (material == int(MpmMaterial::Water)) {
    const float J = determinant(F);
    F = mat3_scalar(cbrtf(J));
    return;
  }
  if (material == int(MpmMaterial::Snow)) {
    const Svd3 d = svd3(F);
    const Vec3f s = vec3(fminf(fmaxf(d.s.x, 1.0f - c.theta_c), 1.0f + c.theta_s),
                         fminf(fmaxf(d.s.y, 1.0f - c.theta_c), 1.0f + c.theta_s),
                         fminf(fmaxf(d.s.z, 1.0f - c.theta_c), 1.0f + c.theta_s));
    jp *= (d.s.x * d.s.y * d.s.z) / (s.x * s.y * s.z);
    F = usv(d.U, s, d.V);
    return;
  }
  if (material == int(MpmMaterial::Sand)) {
    // Klar et al. 2016, section 7.3.1.
    const Svd3 d = svd3(F);
    Vec3f eps = vec3(logf(fmaxf(fabsf(d.s.x), 1e-4f)), logf(fmaxf(fabsf(d.s.y), 1e-4f)),
                     logf(fmaxf(fabsf(d.s.z), 1e-4f)));
    const float tr = eps.x + eps.y + eps.z;
    const Vec3f dev = eps - vec3(tr / 3.0f);
    const float dev_norm = length(dev);
    Vec3f s;
    if (tr >= 0.0f || dev_norm < 1e-12f) {
      s = vec3(1.0f);  // expansion: no cohesion holds it, the stress-free tip
      if (tr < 0.0f) s = vec3(expf(eps.x), expf(eps.y), expf(eps.z));  // pure compression: elastic
    } else {
      const float mu = c.mu[3], la = c.lambda[3];
      const float dgamma = dev_norm + (3.0f * la + 2.0f * mu) / (2.0f * mu) * tr * c.sand_alpha;
      if (dgamma <= 0.0f) return;  // inside the cone: elastic
      eps = eps - dev * (dgamma / dev_norm);
      s = vec3(expf(eps.x), expf(eps.y), expf(eps.z));
    }
    F = usv(d.U, s, d.V);
  }
}

}  // namespace mpm

}  // namespace eddy

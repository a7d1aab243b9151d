#pragma once
// SPH walls: boundary particles on the collider surfaces (Akinci et al.
// 2012; sampled by boundary.h), a spring-damper layer against each
// collider's signed distance, and the Coulomb friction of both. Part of
// solver.h, which includes it after the class.
#include "eddy/core/sph/solver.h"

namespace eddy {

// Akinci et al. 2012, eq. 10: a boundary particle of volume psi_b / rho0
// mirrors the particle's own pressure p_i: a_i = -psi_b p_i / rho_i^2 grad W_ib.
template <class Kernels>
EDDY_HD_INLINE Vec3f boundary_pressure_accel(const Kernels& S, Vec3f r, float psi_b, float p_i, float rho_i) {
  return S.grad(r) * (-psi_b * p_i / (rho_i * rho_i));
}

// The spring-damper wall's normal acceleration at distance d < r from the
// wall, un the normal relative velocity: spring k (r - d), damping c u_n
// only when moving into the wall.
EDDY_HD_INLINE float spring_damper_accel(const SphConstants& c, float d, float un) {
  return c.spring_k * (c.r - d) - (un < 0.0f ? c.spring_c * un : 0.0f);
}

// What the walls around a particle push with: the sum of their normal
// accelerations, and their friction and velocity weighted by each push.
struct WallContact {
  Vec3f a = vec3(0.0f), v = vec3(0.0f);
  float friction = 0.0f, weight = 0.0f;

  // A push from collider col, whose surface moves at u where it pushes.
  EDDY_HD_INLINE void add(Vec3f accel, float magnitude, const Collider& col, Vec3f u) {
    a += accel;
    friction += col.friction * magnitude;
    v += u * magnitude;
    weight += magnitude;
  }

  // Coulomb friction on a particle of velocity vi under acceleration acc:
  // the tangential speed relative to the walls shrinks by at most
  // mu |a_n| dt, and never reverses. The acceleration to subtract.
  EDDY_HD_INLINE Vec3f friction_accel(Vec3f vi, Vec3f acc, float dt) const {
    if (!(friction > 0.0f && weight > 0.0f)) return vec3(0.0f);
    const Vec3f n = normalize_or(a, vec3(0.0f));
    const Vec3f rel = vi + acc * dt - v / weight;
    const Vec3f ut = rel - n * dot(rel, n);
    const float utl = length(ut);
    if (!(utl > 0.0f)) return vec3(0.0f);
    return ut * (fminf(friction * dt, utl) / (utl * dt));
  }
};

// Two-way coupling: collider k's push on particle i (the impulse J, and
// the friction weight w that shares out the friction) in the particle's
// reaction slot for k.
EDDY_HD_INLINE void record_wall_push(const ReactionView& R, uint32_t i, int32_t k, Vec3f J, float w,
                                     float (&fw)[kReactionSlots]) {
  const int s = R.slot(i, k);
  if (s < 0) return;
  R.at(i, s) += J;
  fw[s] += w;
}

// Boundary particles at time t: sampled once per collider set, moved with
// their colliders, their volumes Psi_b = rho0 / sum_k W_bk from the
// boundary's own neighbourhood (Akinci et al. 2012, eq. 4-5).
template <class Exec>
void SphSolverT<Exec>::prepare_boundary(float t) {
  if (c_.walls != int(SphWalls::BoundaryParticles) || n_ == 0) {
    nb_ = 0;
    boundary_dirty_ = false;
    boundary_placed_ = true;
    return;
  }
  if (boundary_dirty_) {
    // Containers hold the liquid wherever it goes, and moving shapes go
    // anywhere (their samples are kept while they move): all of them is sampled.
    Bounds3 dom = domain_;
    for (const auto& c : colliders_host_)
      if ((c.inside || c.body || collider_moves(c)) && c.type != ShapeType::Plane) {
        const Bounds3 b = collider_world_bounds(c);
        dom = {vmin(dom.lo, b.lo), vmax(dom.hi, b.hi)};
      }
    const float spacing = 2.0f * c_.r * params_.boundary_spacing;
    const BoundarySamples bs =
        sample_collider_surfaces(colliders_host_, dom, spacing, c_.boundary_depth,
                                 sample_cap_);
    nb_ = static_cast<uint32_t>(bs.local.size());
    ex_.upload(blocal_, bs.local.data(), nb_);
    ex_.upload(bcol_, bs.collider.data(), nb_);
    bx_.resize(nb_);
    bpsi_.resize(nb_);
    boundary_dirty_ = false;
  }
  boundary_placed_ = true;
  if (nb_ == 0) return;
  const Collider* cols = colliders_.data();
  const Vec3f* q = blocal_.data();
  const uint32_t* col = bcol_.data();
  Vec3f* bx = bx_.data();
  ex_.for_each(nb_, [=] EDDY_HD(uint32_t b) { bx[b] = boundary_world(cols[col[b]], q[b], t); });
  bgrid_.build(bx_.data(), nb_, c_.h);
  bgrid_.find_neighbors(bx_.data());
  const NeighborView nb = bgrid_.neighbors();
  const PairKernels W(c_.h, c_.kernel);
  const float w0 = W.W(0.0f), rho0 = c_.rho0;
  float* psi = bpsi_.data();
  ex_.for_each(nb_, [=] EDDY_HD(uint32_t b) {
    float sum = w0;
    for (uint32_t k = nb.begin(b); k < nb.end(b); ++k) sum += W.W(length2(bx[b] - bx[nb.indices[k]]));
    psi[b] = rho0 / sum;
  });
}

}  // namespace eddy

#pragma once
// DFSPH (Bender & Koschier 2017, Algorithm 2): the divergence solver, the
// non-pressure forces, the density solver on the predicted velocities, and
// the Jacobi iterations both solvers share. Part of solver.h, which includes
// it after the class.
#include "eddy/core/sph/solver.h"

namespace eddy {

// Divergence solve, forces, v* = v + dt a, density solve on v*, x += dt v*.
template <class Exec>
void SphSolverT<Exec>::dfsph_step(float dt, bool warm, StageClock& clock, SphStepStats& s, SphStageTimes& times) {
  if (params_.divergence_solver) s.divergence_iterations = divergence_solve(dt, warm);
  times.divergence = clock.lap();
  if (c_.tension_model != 0) compute_normals();
  compute_forces(dt, /*pressure=*/false);
  add_accel(dt, warm);
  times.forces = clock.lap();
  const SphErrorStats d = density_solve(dt, s.iterations, warm);
  record_wall_pressure(dt);
  s.mean_density_error = 100.0f * d.sum / float(n_);
  s.max_density_error = 100.0f * d.max;
  times.pressure = clock.lap();
  integrate(dt, /*add_accel=*/false);
}

// Rate of compression (DFSPH) of the current velocities, per particle:
// sum_j V (v_i - v_j) . grad W_ij + boundary, times `scale`, plus `base`;
// stored in residual, clamped at 0 (no suction). Returns the mean and max.
// Reads the padded positions and velocities (x4_, v4_: see jacobi), each
// pair's terms summed per component (Float4), then the components.
template <class Exec>
SphErrorStats SphSolverT<Exec>::compute_residual(float scale, bool add_density, bool divergence) {
  const SphConstants c = c_;
  const NeighborView nb = grid_.neighbors();
  const NeighborView nbb = bgrid_.neighbors();
  const bool with_b = nb_ > 0;
  const Vec4f* x4 = x4_.data();
  const Vec4f* v4 = v4_.data();
  const float* pgs = pair_gs_.data();
  const Vec3f* wg = wall_g_.data();
  const float* wv = wall_v_.data();
  const float* density = density_.data();
  float* res = residual_.data();
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
    const Float4 xi = float4_of(x4[i]), vi = float4_of(v4[i]);
    Float4 sum = float4_zero();  // (w: 0, the velocities' w being 0)
    for (uint32_t q = nb.begin(i); q < nb.end(i); ++q) {
      const uint32_t j = nb.indices[q];
      sum += (vi - float4_of(v4[j])) * ((xi - float4_of(x4[j])) * pgs[q]);
    }
    float d = sum[0] + sum[1] + sum[2];
    float count = float(nb.end(i) - nb.begin(i));
    if (with_b) {
      // Boundary particles counted at the fluid's sampling density;
      // sum_b V_b (v_i - v_b) . grad W_ib from the density pass's sums.
      count += float(nbb.end(i) - nbb.begin(i)) * c.boundary_weight;
      d += dot(xyz(v4[i]), wg[i]) - wv[i];
    }
    float e = d * scale + (add_density ? density[i] - 1.0f : 0.0f);
    // Sparse neighbourhoods (spray, the free surface) are not compressed
    // by the divergence solver (as SPlisHSPlasH does).
    if (divergence && count < c.min_neighbors) e = 0.0f;
    res[i] = fmaxf(e, 0.0f);
  });
  return ex_.reduce(
      n_, SphErrorStats{0.0f, 0.0f}, [=] EDDY_HD(uint32_t i) { return SphErrorStats{res[i], res[i]}; }, SumOp{});
}

// v_i -= dt (sum_j V (k_i + k_j) grad W_ij + sum_b V_b k_i grad W_ib), the
// DFSPH velocity update with stiffness k (eq. 10-11, in volumes); k_j is
// the padded positions' w. The padded velocities follow.
template <class Exec>
void SphSolverT<Exec>::apply_kappa(float dt) {
  const NeighborView nb = grid_.neighbors();
  const bool with_b = nb_ > 0;
  const Vec4f* xk = x4_.data();
  const float* pgs = pair_gs_.data();
  const Vec3f* wg = wall_g_.data();
  Vec3f* v = v_.data();
  Vec4f* v4 = v4_.data();
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
    const Float4 xi = float4_of(xk[i]);
    const float ki = xk[i].w;
    Float4 sum = float4_zero();  // (w: unused)
    for (uint32_t q = nb.begin(i); q < nb.end(i); ++q) {
      const Vec4f& pj = xk[nb.indices[q]];
      sum += (xi - float4_of(pj)) * pgs[q] * (ki + pj.w);
    }
    Vec3f dv = vec3(sum[0], sum[1], sum[2]);
    if (with_b) dv += wg[i] * ki;
    const Vec3f vn = v[i] - dv * dt;
    v[i] = vn;
    v4[i] = vec4(vn, 0.0f);
  });
}

// One Jacobi solve: from the residual (in rho0 units), stiffness
// k_i = residual_i alpha_i / dt^2, applied to v and summed into `total`,
// until the mean residual is below eta (at least min, at most max
// iterations). Returns the final error; `iters` the iterations used.
// The pair passes read positions and velocities padded to 16 bytes (a
// neighbour's in one load each); the positions' w carries the iteration's
// stiffness.
template <class Exec>
SphErrorStats SphSolverT<Exec>::jacobi(float dt, float eta, bool density, Vec<float>& total, int& iters) {
  x4_.resize(n_);
  v4_.resize(n_);
  Vec4f* xk = x4_.data();
  pad_into(ex_, xk, x_.data(), nullptr, n_);
  pad_into(ex_, v4_.data(), v_.data(), nullptr, n_);
  // residual = dt Drho/Dt (+ rho - 1 for the density solver), in rho0 units
  SphErrorStats e = compute_residual(dt, density, !density);
  iters = 0;
  float* tot = total.data();
  const float* res = residual_.data();
  const float* alpha = alpha_.data();
  const float inv_dt2 = 1.0f / (dt * dt);
  const int min_iters = density ? params_.min_iterations : params_.min_divergence_iterations;
  while (iters < params_.max_iterations && (iters < min_iters || e.sum / float(n_) > eta)) {
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      const float ki = res[i] * alpha[i] * inv_dt2;
      xk[i].w = ki;
      tot[i] += ki;
    });
    apply_kappa(dt);
    e = compute_residual(dt, density, !density);
    ++iters;
  }
  return e;
}

// Warm start: half of the last step's total stiffness is applied first
// (SPlisHSPlasH does the same), and the totals restart from it; the density
// pass, which visits the pairs anyway, sums both solvers' (the divergence
// solver's applied there, the density solver's by add_accel). The density
// solver's total is kept as it is: in a steady state it is the acceleration
// that holds the liquid up, the same at any step length. The divergence
// solver's corrects a rate within the step, so it is kept as k dt and
// divided by the new step. (Keeping the density total as k dt^2,
// SPlisHSPlasH's choice, multiplied it by 4000 in the dam break when the
// step fell from 4 ms to 60 us, and threw particles at 20 m/s.
// Warm-starting only the particles the current velocities compress, as
// SPlisHSPlasH also does, let a settled column jitter: mean speed 0.06 m/s
// against 0.01.)
template <class Exec>
int SphSolverT<Exec>::divergence_solve(float dt, bool warmed) {
  if (!warmed) zero(kappa_v_);
  int iters = 0;
  jacobi(dt, 0.01f * params_.max_divergence_error, false, kappa_v_, iters);
  float* kv = kappa_v_.data();
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) { kv[i] *= dt; });  // kept as k dt (see above)
  return iters;
}

template <class Exec>
SphErrorStats SphSolverT<Exec>::density_solve(float dt, int& iters, bool warmed) {
  if (!warmed) zero(kappa_);
  const SphErrorStats e = jacobi(dt, 0.01f * params_.max_density_error, true, kappa_, iters);
  // Pressure, estimated from the stiffness both solvers applied this step:
  // a_i = -sum_j V (k_i + k_j) grad W_ij against a_i = -sum_j m (p_i /
  // rho_i^2 + p_j / rho_j^2) grad W_ij gives p_i = k_i rho_i^2 / rho0. The
  // solves stop at their error targets, so one step's value depends on its
  // length; store() writes the frame's mean, weighted by step length (on a
  // column at rest within 2 % of rho0 g depth with spring walls;
  // tests/validation/hydrostatic_test.cpp).
  const float* k = kappa_.data();
  const float* kv = kappa_v_.data();  // kept as k dt
  const float* density = density_.data();
  float* pressure = pressure_.data();
  float* sum = pressure_sum_.data();
  const float rho0 = c_.rho0, inv_dt = 1.0f / dt;
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
    pressure[i] = (k[i] + kv[i] * inv_dt) * density[i] * density[i] * rho0;
    sum[i] += pressure[i] * dt;
  });
  pressure_time_ += dt;
  return e;
}

// Two-way coupling: the walls' pressure over the step, per collider. Both
// solvers' velocity changes at the walls are -V_b grad W_ib times the
// particle's stiffness (positions do not move within the solves), so the
// step's impulse from collider k is -m (sum over its boundary neighbours of
// V_b grad W_ib) (k_density dt + k_divergence dt), with the totals the
// solves kept (kappa_, and kappa_v_ as k dt).
template <class Exec>
void SphSolverT<Exec>::record_wall_pressure(float dt) {
  const ReactionView R = reactions_.view();
  if (!R.on() || nb_ == 0) return;
  const Vec3f* wgs = wall_gs_.data();
  const float* k = kappa_.data();
  const float* kv = kappa_v_.data();
  const float m = c_.mass;
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
    const float kdt = k[i] * dt + kv[i];
    for (int s = 0; s < kReactionSlots; ++s) R.at(i, s) -= wgs[size_t(i) * kReactionSlots + s] * (m * kdt);
  });
}

}  // namespace eddy

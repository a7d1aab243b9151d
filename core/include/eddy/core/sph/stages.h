#pragma once
// The stages both SPH methods share (see solver.h for the pipeline):
// neighbours, density, forces, integration, XSPH, collisions, statistics.
// Part of solver.h, which includes it after the class.
#include "eddy/core/sph/solver.h"

namespace eddy {

// x => fluid grid and lists (every reorder_interval steps all attributes
// are permuted into the grid's Z-order), and fluid-boundary lists.
template <class Exec>
void SphSolverT<Exec>::find_neighbors() {
  grid_.build(x_.data(), n_, c_.h);
  if (params_.reorder_interval > 0 && steps_ % params_.reorder_interval == 0) {
    reorder();
    grid_.mark_reordered();
  }
  grid_.find_neighbors(x_.data());
  if (nb_) {
    // Boundary particles lie on or inside their colliders, so a particle
    // farther than h outside every collider has none within h: no search.
    // (Sampled grids are interpolated, not exact distances: always searched.)
    const Collider* cols = colliders_.data();
    const uint32_t ncoll = ncoll_;
    const Vec3f* x = x_.data();
    const float h = c_.h, t = time_;
    uint8_t* near = near_.data();
    // (Particles whose clearance exceeds h are far from every collider.)
    const float* clear = clearances_.bounds();
    const float far = h + kClearanceMargin * c_.r;
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      if (clear && clear[i] > far) {
        near[i] = 0;
        return;
      }
      bool close = false;
      for (uint32_t k = 0; k < ncoll && !close; ++k)
        close = cols[k].type == ShapeType::Grid || collider_sdf(cols[k], x[i], t).distance < h;
      near[i] = close ? 1 : 0;
    });
    bgrid_.find_neighbors_of(bx_.data(), x_.data(), n_, near);
  }
}

template <class Exec>
void SphSolverT<Exec>::reorder() {
  const uint32_t* order = grid_.sorted_order();
  for (Vec<Vec3f>* buf : {&x_, &v_}) permute_into(ex_, *buf, tmp3_, order, n_);
  clearances_.permute(ex_, tmpf_, order, n_);
  for (Vec<float>* buf : {&kappa_, &kappa_v_, &pressure_}) permute_into(ex_, *buf, tmpf_, order, n_);
  if (pressure_sum_.size() > 0) permute_into(ex_, pressure_sum_, tmpf_, order, n_);
  carried_.permute(ex_, order, n_);
}

// x => rho_i / rho0 (summation, fluid and boundary), and for WCSPH the
// Tait pressure; returns the compression error. For DFSPH the same pass
// gives the factor (Bender & Koschier 2017, eq. 9, in volumes)
//   alpha_i = 1 / (|sum_j V grad W_ij + sum_b V_b grad W_ib|^2 + sum_j |V grad W_ij|^2)
// and keeps each fluid pair's V grad W_ij (as its scale, pair_gs_), and per particle the walls'
// sums sum_b V_b grad W_ib and sum_b V_b v_b . grad W_ib (V_b = Psi_b /
// rho0): positions do not change within the solves, so their passes, a
// dozen a step, read the gradients instead of evaluating the kernel, and
// the walls (whose stiffness is the particle's own k_i) cost one term.
//
// warm_dt > 0 (DFSPH): also the divergence solver's warm start (see
// divergence_solve): half of the last step's total, kept as k dt, divided
// by this step's dt, applied to v; the halved totals go to kappa_v_.
// warm_density (DFSPH): also the density solver's: half of the last step's
// total stiffness, its velocity change per unit time kept in tmp3_ for
// add_accel (apart from the accelerations, which set the force condition
// of the time step), the halved totals left in kappa_.
template <class Exec>
SphErrorStats SphSolverT<Exec>::compute_density(float warm_dt, bool warm_density) {
  const SphConstants c = c_;
  const PairKernels W(c.h, c.kernel);
  const NeighborView nb = grid_.neighbors();
  const NeighborView nbb = bgrid_.neighbors();
  const bool with_b = nb_ > 0;
  const float t = time_;  // the boundary particles stand where the colliders are at the step's start
  const Vec3f* x = x_.data();
  const Vec3f* bx = bx_.data();
  const float* psi = bpsi_.data();
  float* density = density_.data();
  float* pressure = pressure_.data();
  float* err = residual_.data();
  const bool wcsph = params_.method == SphMethod::Wcsph;
  const bool surface_moves = surface_moves_;  // (else v_b = 0: the same sum)
  if (!wcsph) {
    grow_buffer(pair_gs_, size_t(grid_.pair_count()) + n_ + kPairLanes);
    wall_g_.resize(n_);
    wall_v_.resize(n_);
  }
  float* pgs = pair_gs_.data();
  Vec3f* wg = wall_g_.data();
  float* wv = wall_v_.data();
  const uint32_t* bcol = bcol_.data();
  const Collider* cols = colliders_.data();
  float* alpha = alpha_.data();
  const float w0 = W.W(0.0f);
  const bool warm = warm_dt > 0.0f;
  const float kv_scale = warm ? 0.5f / warm_dt : 0.0f;
  const float* kv_old = kappa_v_.data();
  float* kv_new = tmpf_.data();
  const bool warm_d = warm_density && !wcsph;
  float* k_old = kappa_.data();
  Vec3f* warm_dv = tmp3_.data();
  Vec3f* v = v_.data();
  // Tracking reactions, DFSPH splits the walls' gradient sum by collider
  // (record_wall_pressure turns it into impulses).
  const ReactionView R = reactions_.view();
  Vec3f* wgs = R.on() && !wcsph ? wall_gs_.data() : nullptr;
  ex_.for_each_simd(n_, [=] EDDY_HD(uint32_t i) {
    const Vec3f xi = x[i];
    float wsum = w0;
    float rel;
    constexpr int L = kPairLanes;
    if (wcsph) {
      float aw[L] = {};
      for_pair_batches(nb, i, xi, x, c.h, [&](const PairBatch& b) {
        float w[L], g[L];
        W.scalars<L>(b.r2, w, g);
        EDDY_LANES
        for (int l = 0; l < L; ++l) aw[l] += w[l];
      });
      wsum += lane_sum(aw);
      rel = wsum * c.volume0;
      if (with_b)
        for (uint32_t q = nbb.begin(i); q < nbb.end(i); ++q) {
          const uint32_t b = nbb.indices[q];
          rel += psi[b] * c.inv_rho0 * W.W(length2(xi - bx[b]));
        }
      pressure[i] = tait_pressure(c, rel);  // wcsph.h
    } else {
      const float kvi = kv_old[i] * kv_scale;
      const float ki = warm_d ? 0.5f * k_old[i] : 0.0f;
      // Per lane: sum W, sum V grad W, sum |V grad W|^2 and (warm) the
      // divergence solver's and the density solver's warm-start velocity
      // changes.
      float aw[L] = {}, ax[L] = {}, ay[L] = {}, az[L] = {}, a2[L] = {}, dx[L] = {}, dy[L] = {}, dz[L] = {};
      float px[L] = {}, py[L] = {}, pz[L] = {};
      for_pair_batches(nb, i, xi, x, c.h, [&](const PairBatch& b) {
        float w[L], g[L], gs[L], gx[L], gy[L], gz[L];
        W.scalars<L>(b.r2, w, g);
        EDDY_LANES
        for (int l = 0; l < L; ++l) {
          gs[l] = g[l] * c.volume0;
          gx[l] = b.rx[l] * gs[l];
          gy[l] = b.ry[l] * gs[l];
          gz[l] = b.rz[l] * gs[l];
          aw[l] += w[l];
          ax[l] += gx[l];
          ay[l] += gy[l];
          az[l] += gz[l];
          a2[l] += gx[l] * gx[l] + gy[l] * gy[l] + gz[l] * gz[l];
        }
        store_lanes(pgs, b, gs);
        if (warm) {
          float k[L];
          for (int l = 0; l < L; ++l) k[l] = kvi + kv_old[b.j[l]] * kv_scale;
          EDDY_LANES
          for (int l = 0; l < L; ++l) {
            dx[l] += gx[l] * k[l];
            dy[l] += gy[l] * k[l];
            dz[l] += gz[l] * k[l];
          }
        }
        if (warm_d) {
          float k[L];
          for (int l = 0; l < L; ++l) k[l] = ki + 0.5f * k_old[b.j[l]];
          EDDY_LANES
          for (int l = 0; l < L; ++l) {
            px[l] += gx[l] * k[l];
            py[l] += gy[l] * k[l];
            pz[l] += gz[l] * k[l];
          }
        }
      });
      wsum += lane_sum(aw);
      Vec3f gsum = lane_sum3(ax, ay, az);
      Vec3f dv = lane_sum3(dx, dy, dz);
      const Vec3f pv = lane_sum3(px, py, pz);
      const float g2 = lane_sum(a2);
      rel = wsum * c.volume0;
      Vec3f gb = vec3(0.0f);  // sum_b V_b grad W_ib
      float gbv = 0.0f;       // sum_b V_b v_b . grad W_ib (moving colliders)
      if (wgs)
        for (int s = 0; s < kReactionSlots; ++s) wgs[size_t(i) * kReactionSlots + s] = vec3(0.0f);
      if (with_b)
        for (uint32_t q = nbb.begin(i); q < nbb.end(i); ++q) {
          const uint32_t b = nbb.indices[q];
          const Vec3f r = xi - bx[b];
          const KernelScalars k = W.scalars(length2(r));
          const float vb = psi[b] * c.inv_rho0;
          rel += vb * k.w;
          const Vec3f gw = r * (k.g * vb);
          gb += gw;
          if (surface_moves) gbv += dot(collider_velocity(cols[bcol[b]], bx[b], t), gw);
          if (wgs) {
            const int s = R.slot(i, int32_t(bcol[b]));
            if (s >= 0) wgs[size_t(i) * kReactionSlots + s] += gw;
          }
        }
      wg[i] = gb;
      wv[i] = gbv;
      gsum += gb;
      if (warm) dv += gb * kvi;
      const float den = length2(gsum) + g2;
      alpha[i] = den > 1e-6f / (c.h * c.h) ? 1.0f / den : 0.0f;
      if (warm) {
        v[i] -= dv * warm_dt;
        kv_new[i] = kvi;
      }
      if (warm_d) warm_dv[i] = with_b ? pv + gb * ki : pv;
    }
    density[i] = rel;
    err[i] = fmaxf(rel - 1.0f, 0.0f);
  });
  if (warm) std::swap(kappa_v_, tmpf_);
  // The density solver's totals restart from half (read above, as each
  // particle's and its neighbours' halves).
  if (warm_d) ex_.for_each(n_, [=] EDDY_HD(uint32_t i) { k_old[i] *= 0.5f; });
  return ex_.reduce(
      n_, SphErrorStats{0.0f, 0.0f}, [=] EDDY_HD(uint32_t i) { return SphErrorStats{err[i], err[i]}; }, SumOp{});
}

// Accelerations: gravity, the symmetric pressure force (WCSPH), viscosity,
// surface tension, spring-damper walls and wall friction. (DFSPH's density
// solver's warm start is the density pass's: see compute_density.)
template <class Exec>
void SphSolverT<Exec>::compute_forces(float dt, bool with_pressure) {
  const SphConstants c = c_;
  const PairKernels S(c.h, c.kernel);
  const ViscosityLaplacian L(c.h);
  const CohesionSpline C(c.h);
  const NeighborView nb = grid_.neighbors();
  const NeighborView nbb = bgrid_.neighbors();
  const bool with_b = nb_ > 0;
  const Vec3f* x = x_.data();
  const Vec3f* v = v_.data();
  const Vec3f* bx = bx_.data();
  const float* psi = bpsi_.data();
  const uint32_t* bcol = bcol_.data();
  const float* density = density_.data();
  const float* pressure = pressure_.data();
  const Vec3f* normal = normal_.data();
  const float* lap = lap_.data();
  const Collider* cols = colliders_.data();
  const uint32_t ncoll = ncoll_;
  const Vec3f g = params_.gravity;
  const ForceField* fields = fields_.data();
  const uint32_t nf = nfields_;
  const float t = time_;
  Vec3f* acc = a_.data();
  const ReactionView R = reactions_.view();
  const float m_dt = c.mass * dt;
  const bool viscous = c.mu > 0.0f;  // (without viscosity or Akinci's tension, no distance per pair)
  const bool akinci = c.tension_model == int(SurfaceTension::Akinci2013);
  const bool pair_terms = with_pressure || viscous || akinci;  // (DFSPH without viscosity: none)
  // The boundary particles' pushes serve the pressure (WCSPH's; DFSPH's is
  // its solves'), the friction and the reactions: without any of them (DFSPH,
  // frictionless walls, no two-way coupling) they are not evaluated.
  const bool wall_terms = with_b && (with_pressure || wall_friction_ || R.on());
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
    const Vec3f xi = x[i], vi = v[i];
    const float rho_i = density[i] * c.rho0, pi = pressure[i], pi_over = 1.0f / (rho_i * rho_i);
    Vec3f a = g + fields_accel(fields, nf, xi, vi), ap = vec3(0.0f), av = vec3(0.0f), at = vec3(0.0f);
    const uint32_t pair_end = pair_terms ? nb.end(i) : nb.begin(i);
    for (uint32_t q = nb.begin(i); q < pair_end; ++q) {
      const uint32_t j = nb.indices[q];
      const Vec3f r = xi - x[j];
      const float rl = viscous || akinci ? length(r) : 0.0f;
      const float rho_j = density[j] * c.rho0;
      // Pressure, Monaghan's symmetric form (Monaghan 1992, eq. 3.3):
      // a_i = -sum_j m (p_i / rho_i^2 + p_j / rho_j^2) grad W_ij. Mueller et
      // al.'s average (p_i + p_j) / (2 rho_i rho_j) is as symmetric but not
      // the gradient of the summed density's energy: with the Tait equation
      // a column at rest gained energy until it boiled (measured), so it is
      // not offered.
      if (with_pressure) ap -= S.grad(r) * (c.mass * (pi * pi_over + pressure[j] / (rho_j * rho_j)));
      // Viscosity (eq. 14): f_i = mu sum_j m (v_j - v_i) / rho_j lap W_ij.
      if (viscous) av += (v[j] - vi) * (c.mass / rho_j * L(rl));
      if (akinci && rl > 0.0f)
        at -= akinci_tension(c, C, r, rl, rho_i, rho_j, normal[i], normal[j]);
    }
    a += ap + av * (c.mu / rho_i) + at;
    if (c.tension_model == int(SurfaceTension::ColorField)) a -= color_field_tension(c, normal[i], lap[i], rho_i);
    // Walls (walls.h): what they push with, for friction, and their
    // velocity; tracking reactions, each collider's push (WCSPH's pressure
    // and the springs; DFSPH's pressure is its solves') and its share of the
    // friction, in proportion to its friction weight fw.
    WallContact wall;
    float fw[kReactionSlots] = {};
    if (wall_terms)
      for (uint32_t q = nbb.begin(i); q < nbb.end(i); ++q) {
        const uint32_t b = nbb.indices[q];
        const Collider& col = cols[bcol[b]];
        const Vec3f f = boundary_pressure_accel(S, xi - bx[b], psi[b], pi, rho_i);
        if (with_pressure) a += f;
        const float fl = length(f);
        wall.add(f, fl, col, collider_velocity(col, bx[b], t));
        if (R.on()) record_wall_push(R, i, int32_t(bcol[b]), with_pressure ? f * m_dt : vec3(0.0f),
                                     col.friction * fl, fw);
      }
    if (c.walls == int(SphWalls::SpringDamper)) {
      for (uint32_t k = 0; k < ncoll; ++k) {
        SdfSample walls[3];
        const int m = collider_walls(cols[k], xi, t, walls);
        for (int w = 0; w < m; ++w) {
          if (walls[w].distance >= c.r) continue;
          const Vec3f n = walls[w].normal;
          const Vec3f u = collider_velocity(cols[k], xi, t);
          const float an = spring_damper_accel(c, walls[w].distance, dot(vi - u, n));
          a += n * an;
          wall.add(n * an, fabsf(an), cols[k], u);
          if (R.on()) record_wall_push(R, i, int32_t(k), n * (an * m_dt), cols[k].friction * fabsf(an), fw);
        }
      }
    }
    const Vec3f fa = wall.friction_accel(vi, a, dt);
    a -= fa;
    if (R.on() && wall.friction > 0.0f)
      for (int s = 0; s < kReactionSlots; ++s) R.at(i, s) -= fa * (m_dt * fw[s] / wall.friction);
    acc[i] = a;
  });
}

// v += dt a (DFSPH's v*), and with `warm` the density solver's warm start.
template <class Exec>
void SphSolverT<Exec>::add_accel(float dt, bool warm) {
  Vec3f* v = v_.data();
  const Vec3f* a = a_.data();
  const Vec3f* warm_dv = tmp3_.data();
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) { v[i] += (warm ? a[i] - warm_dv[i] : a[i]) * dt; });
}

// Symplectic Euler: v += dt a (WCSPH), x += dt v.
template <class Exec>
void SphSolverT<Exec>::integrate(float dt, bool with_accel) {
  Vec3f* x = x_.data();
  Vec3f* v = v_.data();
  const Vec3f* a = a_.data();
  float* clear = clearances_.bounds();
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
    if (with_accel) v[i] += a[i] * dt;
    x[i] += v[i] * dt;
    if (clear) clear[i] = lower_clearance(clear[i], v[i] * dt, x[i]);
  });
}

// XSPH (Monaghan 1989): v_i += c sum_j (m / rho_j) (v_j - v_i) W_ij.
template <class Exec>
void SphSolverT<Exec>::xsph() {
  const SphConstants c = c_;
  const PairKernels W(c.h, c.kernel);
  const NeighborView nb = grid_.neighbors();
  const Vec3f* x = x_.data();
  const Vec3f* v = v_.data();
  const float* density = density_.data();
  Vec3f* out = tmp3_.data();
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
    Vec3f dv = vec3(0.0f);
    for (uint32_t q = nb.begin(i); q < nb.end(i); ++q) {
      const uint32_t j = nb.indices[q];
      dv += (v[j] - v[i]) * (W.W(length2(x[i] - x[j])) / density[j]);
    }
    out[i] = v[i] + dv * (c.xsph * c.volume0);
  });
  std::swap(v_, tmp3_);
}

// Collisions: a particle found inside a collider is put back on its
// surface, its velocity into it removed. Counted, and apart those that
// were compressed (at or above rest density at the step's start): the
// walls' pressure should have held those. A particle below rest density
// has no pressure (negative pressure is clamped; DFSPH corrects only
// compression), so a wall acts on it through this alone: spray, and the
// thin sheet of a surge front sliding on the floor.
// Where every collider is analytic and still, each particle keeps a
// clearance: a lower bound on its distance to them, measured here (the
// distances the projection computes anyway) and lowered by every move
// since (lower_clearance in collider.h). A particle clear by more than a
// hundredth of r is not projected, nor near the boundary particles when
// clear by more than h: both skip its colliders (the same result to the
// bit). Loading and new colliders measure anew.
template <class Exec>
SphCounts SphSolverT<Exec>::project(float t) {
  if (ncoll_ == 0) return {0u, 0u};
  const Collider* cols = colliders_.data();
  const uint32_t ncoll = ncoll_;
  Vec3f* x = x_.data();
  Vec3f* v = v_.data();
  const float* density = density_.data();
  float* flag = residual_.data();
  const ReactionView R = reactions_.view();
  const float m = c_.mass;
  float* clear = clearances_.measuring();
  const bool skip = clearances_.valid();
  const float margin = kClearanceMargin * c_.r;
  ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
    if (skip && clear[i] > margin) {
      flag[i] = 0.0f;
      return;
    }
    bool moved = false;
    float nearest;
    x[i] = push_out_of_colliders(
        cols, ncoll, x[i], t, 0.0f, 0.0f,
        [&](uint32_t k, const SdfSample& sd, Vec3f p) {
          const float un = dot(v[i] - collider_velocity(cols[k], p, t), sd.normal);
          if (un < 0.0f) {
            v[i] -= sd.normal * un;
            if (R.on()) R.add(i, int32_t(k), sd.normal * (-un * m));
          }
          moved = true;
        },
        &nearest);
    flag[i] = moved ? (density[i] >= 1.0f ? 2.0f : 1.0f) : 0.0f;
    if (clear) clear[i] = nearest;
  });
  clearances_.measured();
  return ex_.reduce(
      n_, SphCounts{0u, 0u},
      [=] EDDY_HD(uint32_t i) { return SphCounts{flag[i] > 0.5f ? 1u : 0u, flag[i] > 1.5f ? 1u : 0u}; }, SumOp{});
}

// Empty reaction slots for the step (tracking reactions).
template <class Exec>
void SphSolverT<Exec>::begin_reactions() {
  reactions_.reset(ex_, n_);
  if (reactions_.on() && params_.method == SphMethod::Dfsph) wall_gs_.resize(size_t(n_) * kReactionSlots);
}

template <class Exec>
void SphSolverT<Exec>::commit(SphStepStats& s) {
  const Vec3f* x = x_.data();
  const Vec3f* v = v_.data();
  const Vec3f* a = a_.data();
  const SphMotionStats st = ex_.reduce(
      n_, SphMotionStats{0.0f, 0.0f, 0u},
      [=] EDDY_HD(uint32_t i) {
        const bool ok = is_finite(x[i]) && is_finite(v[i]);
        return SphMotionStats{ok ? length2(v[i]) : 0.0f, ok && is_finite(a[i]) ? length2(a[i]) : 0.0f,
                              ok ? 0u : 1u};
      },
      SumOp{});
  s.max_speed = sqrtf(st.speed2_max);
  s.nonfinite = st.nonfinite;
  max_speed_ = s.max_speed;
  max_accel_ = sqrtf(st.accel2_max);
}

}  // namespace eddy

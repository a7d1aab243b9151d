#pragma once
// The SPH step, written once over an executor (see cpu_executor.h for the
// contract). Included only by the files that instantiate it:
// core/src/sph_cpu.cpp (TBB) and gpu/src/sph_cuda.cu (CUDA).
//
// WCSPH (Becker & Teschner 2007, with Mueller et al. 2003's kernels):
//   neighbours     grid on x, periodic Z-order reordering; fluid-boundary lists
//   density        rho_i = sum_j m W_ij + sum_b Psi_b W_ib (poly6), Tait pressure
//   forces         a_i = g + pressure + viscosity + surface tension + walls
//   integrate      v += dt a, [XSPH], x += dt v (symplectic Euler)
//
// DFSPH (Bender & Koschier 2017, Algorithm 2):
//   neighbours, density and the factor alpha_i
//   divergence     velocities made divergence-free (Dp/Dt = 0)
//   forces         non-pressure accelerations, v* = v + dt a
//   pressure       density solver on v*: rho* = rho0
//   integrate      x += dt v*
//
// Densities are carried as rho / rho0 inside the solvers (volumes V = m /
// rho0), so the equations read the same at every rest density.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "eddy/core/boundary.h"
#include "eddy/core/solver_buffers.h"
#include "eddy/core/collider.h"
#include "eddy/core/error.h"
#include "eddy/core/kernels.h"
#include "eddy/core/neighbor_grid.h"
#include "eddy/core/points.h"
#include "eddy/core/reduce_ops.h"
#include "eddy/core/sph.h"

namespace eddy {

// Constants derived once from the parameters and the particle radius,
// captured by value in every loop.
struct SphConstants {
  float r = 0, h = 0;         // particle radius, support radius, m
  float mass = 0;             // kg
  float rho0 = 0, inv_rho0 = 0;
  float volume0 = 0;          // m / rho0, m^3
  float c0 = 0;               // speed of sound, m/s
  float B = 0, gamma = 7;     // Tait
  int kernel = 0;             // KernelPair
  int clamp = 1;              // no negative pressure
  float boundary_weight = 1;  // boundary_spacing^2: a boundary neighbour's share of a fluid one's area
  float boundary_depth = 0;   // m: boundary particles sit this far behind the collider surface (sph_boundary_depth)
  float mu = 0;               // viscosity, Pa s
  float spring_k = 0, spring_c = 0;  // 1/s^2, 1/s
  int walls = 0;              // SphWalls
  int tension_model = 0;      // SurfaceTension
  float tension = 0;
  float color_threshold = 0;  // absolute, 1/m
  float xsph = 0;
  float min_neighbors = 20;   // DFSPH: particles with fewer neighbours get no divergence correction
};

struct SphErrorStats {
  float sum, max;
  EDDY_HD_INLINE SphErrorStats operator+(const SphErrorStats& o) const { return {sum + o.sum, fmaxf(max, o.max)}; }
};
struct SphCounts {
  uint32_t all, pressed;
  EDDY_HD_INLINE SphCounts operator+(const SphCounts& o) const { return {all + o.all, pressed + o.pressed}; }
};
struct SphMotionStats {
  float speed2_max, accel2_max;
  uint32_t nonfinite;
  EDDY_HD_INLINE SphMotionStats operator+(const SphMotionStats& o) const {
    return {fmaxf(speed2_max, o.speed2_max), fmaxf(accel2_max, o.accel2_max), nonfinite + o.nonfinite};
  }
};

// Host helpers (sph.cpp).
SphConstants sph_constants(const SphParams& p, float radius, float c0);
// Akinci et al.'s boundary volumes V_b = 1 / sum_k W_bk make one layer of
// boundary particles stand for the whole half-space beyond a wall. On the
// surface itself that is more than a liquid lattice flush against the wall
// misses (it would start far above rest density and burst off the wall), so
// the layer sits behind the surface, at the depth returned here: there a
// lattice layer one radius from a flat wall is at rest density exactly, as
// the lattice interior is, and the walls keep Akinci's full volumes.
float sph_boundary_depth(float spacing, float h, float boundary_spacing, KernelPair kernel);
// |grad c| of the colour field for a particle in the top layer of a lattice
// half-space: the scale of the colour-field threshold.
float sph_surface_gradient(float spacing, float h);
// Speed the scene can reach: the fastest initial particle plus free fall
// over the height the particles span above the nearest collider below them.
float sph_estimate_speed(const Points& pts, const std::vector<Collider>& colliders, Vec3f gravity);
bool same_colliders(const std::vector<Collider>& a, const std::vector<Collider>& b);

template <class Exec>
class SphSolverT final : public SphSolver {
 public:
  template <class T>
  using Vec = typename Exec::template Vector<T>;
  using Clock = std::chrono::steady_clock;

  SphSolverT(const SphParams& p, Exec ex) : SphSolver(p), ex_(std::move(ex)), grid_(ex_), bgrid_(ex_) { validate(p); }

  const char* backend() const override { return Exec::backend_name; }
  std::size_t size() const override { return n_; }
  std::size_t boundary_size() const override { return nb_; }
  float particle_mass() const override { return c_.mass; }
  float particle_radius() const override { return c_.r; }
  float speed_of_sound() const override { return c_.c0; }
  float expected_speed() const override { return expected_; }
  SphStageTimes stage_times() const override { return times_; }

  void load(const Points& pts) override {
    if (!(pts.radius > 0.0f)) throw Error("SPH: particles have no radius (points.radius must be > 0)");
    if (pts.size() > 0xfffffff0u) throw Error("SPH: too many particles for 32-bit indices");
    n_ = static_cast<uint32_t>(pts.size());
    expected_ = params_.expected_speed > 0 ? params_.expected_speed
                                           : sph_estimate_speed(pts, colliders_host_, params_.gravity);
    const float c0 = params_.speed_of_sound > 0 ? params_.speed_of_sound : 10.0f * std::max(expected_, 0.1f);
    c_ = sph_constants(params_, pts.radius, c0);
    ex_.upload(x_, pts.P(), n_);
    ex_.upload(v_, pts.v(), n_);
    max_speed_ = 0.0f;
    for (uint32_t i = 0; i < n_; ++i) max_speed_ = std::max(max_speed_, length(pts.v()[i]));
    max_accel_ = length(params_.gravity);
    for (auto* b : {&a_, &normal_, &tmp3_}) b->resize(n_);
    for (auto* b : {&density_, &pressure_, &alpha_, &kappa_, &kappa_v_, &residual_, &lap_}) b->resize(n_);
    zero(kappa_);
    zero(kappa_v_);
    zero(pressure_);
    if (params_.method == SphMethod::Dfsph) pressure_sum_.resize(n_);
    begin_frame();
    carried_.load(ex_, pts, {"density", "pressure"});
    tmpf_.resize(n_);
    near_.resize(n_);
    steps_ = 0;
    // The region boundary particles must cover: the particles, grown by
    // their own extent (room to splash), and every finite collider.
    domain_ = empty_bounds();
    for (uint32_t i = 0; i < n_; ++i) domain_ = {vmin(domain_.lo, pts.P()[i]), vmax(domain_.hi, pts.P()[i])};
    if (n_) {
      const Vec3f grow = (domain_.hi - domain_.lo) + vec3(4.0f * c_.h);
      domain_ = {domain_.lo - grow, domain_.hi + grow};
    }
    boundary_dirty_ = true;
    if (n_) {
      prepare_boundary(0.0f);
      find_neighbors();
      compute_density();
    }
  }

  void set_colliders(const std::vector<Collider>& cs) override {
    if (same_colliders(cs, colliders_host_) && !colliders_host_.empty()) return;
    colliders_host_ = cs;
    colliders_.upload(ex_, cs);
    ncoll_ = colliders_.size();
    moving_ = false;
    for (const auto& c : cs) moving_ |= length2(c.velocity) > 0.0f;
    boundary_dirty_ = true;
  }

  void store(Points& out) const override {
    out = Points(n_);
    out.radius = c_.r;
    ex_.download(x_, out.P(), n_);
    ex_.download(v_, out.v(), n_);
    carried_.store(ex_, out);
    out.add("density", AttribType::Float);
    ex_.download(density_, out.get_float("density"), n_);
    float* rho = out.get_float("density");
    for (uint32_t i = 0; i < n_; ++i) rho[i] *= c_.rho0;  // carried as rho / rho0
    out.add("pressure", AttribType::Float);
    float* pr = out.get_float("pressure");
    if (pressure_time_ > 0.0) {
      ex_.download(pressure_sum_, pr, n_);
      for (uint32_t i = 0; i < n_; ++i) pr[i] = float(pr[i] / pressure_time_);
    } else {
      ex_.download(pressure_, pr, n_);
    }
  }

  void begin_frame() override {
    if (pressure_sum_.size() > 0) zero(pressure_sum_);
    pressure_time_ = 0.0;
  }

  std::size_t memory_bytes() const override {
    size_t b = (x_.size() + v_.size() + a_.size() + normal_.size() + tmp3_.size() + bx_.size() + blocal_.size()) *
                   sizeof(Vec3f) +
               (density_.size() + pressure_.size() + pressure_sum_.size() + alpha_.size() + kappa_.size() +
                kappa_v_.size() + residual_.size() + lap_.size() + tmpf_.size() + bpsi_.size() + bcol_.size()) * 4 +
               (pair_g_.size() + wall_g_.size()) * sizeof(Vec3f) + wall_v_.size() * 4;
    b += carried_.bytes();
    return b + grid_.memory_bytes() + bgrid_.memory_bytes();
  }

  float suggest_dt() const override {
    const float d = 2.0f * c_.r, v = max_speed_;
    float dt = params_.max_dt;
    if (v > 0) dt = std::min(dt, params_.cfl * d / v);
    if (params_.method == SphMethod::Wcsph) dt = std::min(dt, 0.4f * d / (c_.c0 + v));
    // DFSPH: the CFL speed is at least half the speed the scene is expected
    // to reach. A liquid at rest that is about to fall would otherwise start
    // with steps of max_dt, leave density errors of 1-2 % at the floor, and
    // the solver, which corrects density within one step, turns those into
    // velocities of error x h / dt once the step shrinks tenfold as the
    // liquid speeds up (measured in the dam break: particles thrown at
    // 20 m/s, a surge front 16-100 % ahead depending on cfl and scale; with
    // this bound 7.0-7.5 % at every cfl and scale tried).
    if (params_.method == SphMethod::Dfsph && expected_ > 0)
      dt = std::min(dt, params_.cfl * d / (0.5f * expected_));
    if (c_.mu > 0) dt = std::min(dt, 0.125f * c_.h * c_.h * c_.rho0 / c_.mu);
    if (max_accel_ > 0) dt = std::min(dt, 0.25f * std::sqrt(c_.h / max_accel_));
    // The wall springs: omega dt <= 1 (symplectic Euler is stable below 2).
    if (c_.walls == int(SphWalls::SpringDamper) && ncoll_ > 0) dt = std::min(dt, 1.0f / std::sqrt(c_.spring_k));
    return dt;
  }

  SphStepStats step(float dt, float time) override {
    SphStepStats s;
    s.dt = dt;
    if (n_ == 0) return s;
    const auto t0 = Clock::now();
    time_ = time;
    if (boundary_dirty_ || moving_) prepare_boundary(time);
    find_neighbors();
    const auto t1 = Clock::now();
    // DFSPH's warm starts ride on passes that visit the pairs anyway: the
    // divergence solver's on the density pass, the density solver's on the
    // forces pass (each adds velocity through the pairs' gradients only, so
    // where it is added does not matter as long as it precedes its solve).
    const bool warm = params_.method == SphMethod::Dfsph && params_.warm_start && steps_ > 0;
    const SphErrorStats e = compute_density(warm && params_.divergence_solver ? dt : 0.0f);
    s.mean_density_error = 100.0f * e.sum / float(n_);
    s.max_density_error = 100.0f * e.max;
    const auto t2 = Clock::now();
    double divergence = 0, pressure = 0, forces = 0;
    if (params_.method == SphMethod::Wcsph) {
      if (c_.tension_model != 0) compute_normals();
      compute_forces(dt, /*pressure=*/true);
      forces = secs(t2, Clock::now());
      integrate(dt, /*add_accel=*/true);
    } else {
      if (params_.divergence_solver) s.divergence_iterations = divergence_solve(dt, warm);
      const auto t3 = Clock::now();
      divergence = secs(t2, t3);
      if (c_.tension_model != 0) compute_normals();
      compute_forces(dt, /*pressure=*/false, warm);
      add_accel(dt, warm);
      const auto t4 = Clock::now();
      forces = secs(t3, t4);
      const SphErrorStats d = density_solve(dt, s.iterations, warm);
      s.mean_density_error = 100.0f * d.sum / float(n_);
      s.max_density_error = 100.0f * d.max;
      pressure = secs(t4, Clock::now());
      integrate(dt, /*add_accel=*/false);
    }
    const auto t5 = Clock::now();
    if (c_.xsph > 0) xsph();
    const SphCounts moved = project(time + dt);
    s.projected = moved.all;
    s.projected_pressed = moved.pressed;
    commit(s);
    times_ = {secs(t0, t1), secs(t1, t2), forces, pressure, divergence, secs(t5, Clock::now())};
    s.neighbor_pairs = grid_.pair_count();
    s.boundary_pairs = nb_ ? bgrid_.pair_count() : 0;
    ++steps_;
    return s;
  }

  // ---- stages (public: nvcc's extended lambdas need public enclosing functions)

  // Boundary particles at time t: sampled once per collider set, moved with
  // their colliders, their volumes Psi_b = rho0 / sum_k W_bk from the
  // boundary's own neighbourhood (Akinci et al. 2012, eq. 4-5).
  void prepare_boundary(float t) {
    if (c_.walls != int(SphWalls::BoundaryParticles) || n_ == 0) {
      nb_ = 0;
      boundary_dirty_ = false;
      return;
    }
    if (boundary_dirty_) {
      // Containers hold the liquid wherever it goes: all of them is sampled.
      Bounds3 dom = domain_;
      for (const auto& c : colliders_host_)
        if (c.inside && c.type != ShapeType::Plane) {
          const Bounds3 b = collider_world_bounds(c);
          dom = {vmin(dom.lo, b.lo), vmax(dom.hi, b.hi)};
        }
      const float spacing = 2.0f * c_.r * params_.boundary_spacing;
      const BoundarySamples bs =
          sample_collider_surfaces(colliders_host_, dom, spacing, c_.boundary_depth,
                                   std::max<std::size_t>(8u * n_, 4000000u));
      nb_ = static_cast<uint32_t>(bs.local.size());
      ex_.upload(blocal_, bs.local.data(), nb_);
      ex_.upload(bcol_, bs.collider.data(), nb_);
      bx_.resize(nb_);
      bpsi_.resize(nb_);
      boundary_dirty_ = false;
    }
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

  // x => fluid grid and lists (every reorder_interval steps all attributes
  // are permuted into the grid's Z-order), and fluid-boundary lists.
  void find_neighbors() {
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
      ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
        bool close = false;
        for (uint32_t k = 0; k < ncoll && !close; ++k)
          close = cols[k].type == ShapeType::Grid || collider_sdf(cols[k], x[i], t).distance < h;
        near[i] = close ? 1 : 0;
      });
      bgrid_.find_neighbors_of(bx_.data(), x_.data(), n_, near);
    }
  }

  void reorder() {
    const uint32_t* order = grid_.sorted_order();
    for (Vec<Vec3f>* buf : {&x_, &v_}) permute_into(ex_, *buf, tmp3_, order, n_);
    for (Vec<float>* buf : {&kappa_, &kappa_v_, &pressure_}) permute_into(ex_, *buf, tmpf_, order, n_);
    if (pressure_sum_.size() > 0) permute_into(ex_, pressure_sum_, tmpf_, order, n_);
    carried_.permute(ex_, order, n_);
  }

  // x => rho_i / rho0 (summation, fluid and boundary), and for WCSPH the
  // Tait pressure; returns the compression error. For DFSPH the same pass
  // gives the factor (Bender & Koschier 2017, eq. 9, in volumes)
  //   alpha_i = 1 / (|sum_j V grad W_ij + sum_b V_b grad W_ib|^2 + sum_j |V grad W_ij|^2)
  // and keeps each fluid pair's V grad W_ij, and per particle the walls'
  // sums sum_b V_b grad W_ib and sum_b V_b v_b . grad W_ib (V_b = Psi_b /
  // rho0): positions do not change within the solves, so their passes, a
  // dozen a step, read the gradients instead of evaluating the kernel, and
  // the walls (whose stiffness is the particle's own k_i) cost one term.
  //
  // warm_dt > 0 (DFSPH): also the divergence solver's warm start (see
  // divergence_solve): half of the last step's total, kept as k dt, divided
  // by this step's dt, applied to v; the halved totals go to kappa_v_.
  SphErrorStats compute_density(float warm_dt = 0.0f) {
    const SphConstants c = c_;
    const PairKernels W(c.h, c.kernel);
    const NeighborView nb = grid_.neighbors();
    const NeighborView nbb = bgrid_.neighbors();
    const bool with_b = nb_ > 0;
    const Vec3f* x = x_.data();
    const Vec3f* bx = bx_.data();
    const float* psi = bpsi_.data();
    float* density = density_.data();
    float* pressure = pressure_.data();
    float* err = residual_.data();
    const bool wcsph = params_.method == SphMethod::Wcsph;
    if (!wcsph) {
      grow_buffer(pair_g_, size_t(grid_.pair_count()) + n_);
      wall_g_.resize(n_);
      wall_v_.resize(n_);
    }
    Vec3f* pg = pair_g_.data();
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
    Vec3f* v = v_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      const Vec3f xi = x[i];
      float wsum = w0;
      float rel;
      if (wcsph) {
        for (uint32_t q = nb.begin(i); q < nb.end(i); ++q) wsum += W.W(length2(xi - x[nb.indices[q]]));
        rel = wsum * c.volume0;
        if (with_b)
          for (uint32_t q = nbb.begin(i); q < nbb.end(i); ++q) {
            const uint32_t b = nbb.indices[q];
            rel += psi[b] * c.inv_rho0 * W.W(length2(xi - bx[b]));
          }
        // Tait (Becker & Teschner 2007, eq. 6): p = B ((rho/rho0)^gamma - 1).
        float p = c.B * (powf(rel, c.gamma) - 1.0f);
        if (c.clamp) p = fmaxf(p, 0.0f);
        pressure[i] = p;
      } else {
        Vec3f gsum = vec3(0.0f), dv = vec3(0.0f);
        float g2 = 0.0f;
        const float kvi = kv_old[i] * kv_scale;
        for (uint32_t q = nb.begin(i); q < nb.end(i); ++q) {
          const uint32_t j = nb.indices[q];
          const Vec3f r = xi - x[j];
          const KernelScalars k = W.scalars(length2(r));
          wsum += k.w;
          const float gs = k.g * c.volume0;
          const Vec3f gw = r * gs;
          pg[q] = gw;
          gsum += gw;
          g2 += length2(gw);
          if (warm) dv += gw * (kvi + kv_old[j] * kv_scale);
        }
        rel = wsum * c.volume0;
        Vec3f gb = vec3(0.0f);  // sum_b V_b grad W_ib
        float gbv = 0.0f;       // sum_b V_b v_b . grad W_ib (moving colliders)
        if (with_b)
          for (uint32_t q = nbb.begin(i); q < nbb.end(i); ++q) {
            const uint32_t b = nbb.indices[q];
            const Vec3f r = xi - bx[b];
            const KernelScalars k = W.scalars(length2(r));
            const float vb = psi[b] * c.inv_rho0;
            rel += vb * k.w;
            const Vec3f gw = r * (k.g * vb);
            gb += gw;
            gbv += dot(cols[bcol[b]].velocity, gw);
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
      }
      density[i] = rel;
      err[i] = fmaxf(rel - 1.0f, 0.0f);
    });
    if (warm) std::swap(kappa_v_, tmpf_);
    return ex_.reduce(
        n_, SphErrorStats{0.0f, 0.0f}, [=] EDDY_HD(uint32_t i) { return SphErrorStats{err[i], err[i]}; }, SumOp{});
  }

  // Surface normals for surface tension: Akinci et al. 2013, eq. 6, n_i =
  // h sum_j (m / rho_j) grad W_ij; the colour field (Mueller et al. 2003,
  // eq. 15-19) keeps n_i = grad c_i unscaled and its Laplacian.
  void compute_normals() {
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

  // Accelerations: gravity, the symmetric pressure force (WCSPH), viscosity,
  // surface tension, spring-damper walls and wall friction.
  //
  // warm (DFSPH): also the density solver's warm start (see divergence_solve):
  // half of the last step's total stiffness, its velocity change per unit
  // time kept in tmp3_ (apart from the accelerations, which set the force
  // condition of the time step), the halved totals in kappa_.
  void compute_forces(float dt, bool with_pressure, bool warm = false) {
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
    const float t = time_;
    Vec3f* acc = a_.data();
    const Vec3f* pg = pair_g_.data();
    const Vec3f* wg = wall_g_.data();
    const float* k_old = kappa_.data();
    float* k_new = tmpf_.data();
    Vec3f* warm_dv = tmp3_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      const Vec3f xi = x[i], vi = v[i];
      const float rho_i = density[i] * c.rho0, pi = pressure[i], pi_over = 1.0f / (rho_i * rho_i);
      Vec3f a = g, ap = vec3(0.0f), av = vec3(0.0f), at = vec3(0.0f), wk = vec3(0.0f);
      const float ki = warm ? 0.5f * k_old[i] : 0.0f;
      for (uint32_t q = nb.begin(i); q < nb.end(i); ++q) {
        const uint32_t j = nb.indices[q];
        const Vec3f r = xi - x[j];
        if (warm) wk += pg[q] * (ki + 0.5f * k_old[j]);
        const float rl = length(r);
        const float rho_j = density[j] * c.rho0;
        // Pressure, Monaghan's symmetric form (Monaghan 1992, eq. 3.3):
        // a_i = -sum_j m (p_i / rho_i^2 + p_j / rho_j^2) grad W_ij. Mueller et
        // al.'s average (p_i + p_j) / (2 rho_i rho_j) is as symmetric but not
        // the gradient of the summed density's energy: with the Tait equation
        // a column at rest gained energy until it boiled (measured), so it is
        // not offered.
        if (with_pressure) ap -= S.grad(r) * (c.mass * (pi * pi_over + pressure[j] / (rho_j * rho_j)));
        // Viscosity (eq. 14): f_i = mu sum_j m (v_j - v_i) / rho_j lap W_ij.
        av += (v[j] - vi) * (c.mass / rho_j * L(rl));
        if (c.tension_model == int(SurfaceTension::Akinci2013) && rl > 0.0f) {
          // Akinci et al. 2013, eq. 1-7: cohesion and curvature, K_ij = 2 rho0 / (rho_i + rho_j).
          const float K = 2.0f * c.rho0 / (rho_i + rho_j);
          at -= (r * (c.mass * C(rl) / rl) + (normal[i] - normal[j])) * (c.tension * K);
        }
      }
      a += ap + av * (c.mu / rho_i) + at;
      if (c.tension_model == int(SurfaceTension::ColorField)) {
        // Mueller et al. 2003, eq. 19: f = -sigma lap(c) n / |n| where |n| passes the threshold.
        const float nl = length(normal[i]);
        if (nl > c.color_threshold) a -= normal[i] * (c.tension * lap[i] / (nl * rho_i));
      }
      // Walls: the normal acceleration they exert (for friction) and their velocity.
      Vec3f wall_a = vec3(0.0f), wall_v = vec3(0.0f);
      float wall_fric = 0.0f, wall_w = 0.0f;
      if (with_b)
        for (uint32_t q = nbb.begin(i); q < nbb.end(i); ++q) {
          const uint32_t b = nbb.indices[q];
          // Akinci et al. 2012, eq. 10: the boundary mirrors the particle's pressure.
          const Vec3f f = S.grad(xi - bx[b]) * (-psi[b] * pi / (rho_i * rho_i));
          const Collider& col = cols[bcol[b]];
          if (with_pressure) a += f;
          const float fl = length(f);
          wall_a += f;
          wall_fric += col.friction * fl;
          wall_v += col.velocity * fl;
          wall_w += fl;
        }
      if (c.walls == int(SphWalls::SpringDamper)) {
        for (uint32_t k = 0; k < ncoll; ++k) {
          SdfSample walls[3];
          const int m = collider_walls(cols[k], xi, t, walls);
          for (int w = 0; w < m; ++w) {
            const float d = walls[w].distance;
            if (d >= c.r) continue;
            const Vec3f n = walls[w].normal;
            const float un = dot(vi - cols[k].velocity, n);
            // Spring k (r - d), damping c u_n only when moving into the wall.
            const float an = c.spring_k * (c.r - d) - (un < 0.0f ? c.spring_c * un : 0.0f);
            a += n * an;
            wall_a += n * an;
            wall_fric += cols[k].friction * fabsf(an);
            wall_v += cols[k].velocity * fabsf(an);
            wall_w += fabsf(an);
          }
        }
      }
      if (wall_fric > 0.0f && wall_w > 0.0f) {
        // Coulomb friction: the tangential relative speed shrinks by at most
        // mu |a_n| dt, and never reverses.
        const Vec3f n = normalize_or(wall_a, vec3(0.0f));
        const Vec3f rel = vi + a * dt - wall_v / wall_w;
        const Vec3f ut = rel - n * dot(rel, n);
        const float utl = length(ut);
        if (utl > 0.0f) a -= ut * (fminf(wall_fric * dt, utl) / (utl * dt));
      }
      acc[i] = a;
      if (warm) {
        warm_dv[i] = with_b ? wk + wg[i] * ki : wk;
        k_new[i] = ki;
      }
    });
    if (warm) std::swap(kappa_, tmpf_);
  }

  // v += dt a (DFSPH's v*), and with `warm` the density solver's warm start.
  void add_accel(float dt, bool warm = false) {
    Vec3f* v = v_.data();
    const Vec3f* a = a_.data();
    const Vec3f* warm_dv = tmp3_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) { v[i] += (warm ? a[i] - warm_dv[i] : a[i]) * dt; });
  }

  // Symplectic Euler: v += dt a (WCSPH), x += dt v.
  void integrate(float dt, bool with_accel) {
    Vec3f* x = x_.data();
    Vec3f* v = v_.data();
    const Vec3f* a = a_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      if (with_accel) v[i] += a[i] * dt;
      x[i] += v[i] * dt;
    });
  }

  // XSPH (Monaghan 1989): v_i += c sum_j (m / rho_j) (v_j - v_i) W_ij.
  void xsph() {
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

  // Rate of compression (DFSPH) of the current velocities, per particle:
  // sum_j V (v_i - v_j) . grad W_ij + boundary, times `scale`, plus `base`;
  // stored in residual, clamped at 0 (no suction). Returns the mean and max.
  SphErrorStats compute_residual(float scale, bool add_density, bool divergence) {
    const SphConstants c = c_;
    const NeighborView nb = grid_.neighbors();
    const NeighborView nbb = bgrid_.neighbors();
    const bool with_b = nb_ > 0;
    const Vec3f* v = v_.data();
    const Vec3f* pg = pair_g_.data();
    const Vec3f* wg = wall_g_.data();
    const float* wv = wall_v_.data();
    const float* density = density_.data();
    float* res = residual_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      const Vec3f vi = v[i];
      float d = 0.0f;
      float count = float(nb.end(i) - nb.begin(i));
      for (uint32_t q = nb.begin(i); q < nb.end(i); ++q) {
        const uint32_t j = nb.indices[q];
        d += dot(vi - v[j], pg[q]);
      }
      if (with_b) {
        // Boundary particles counted at the fluid's sampling density;
        // sum_b V_b (v_i - v_b) . grad W_ib from the density pass's sums.
        count += float(nbb.end(i) - nbb.begin(i)) * c.boundary_weight;
        d += dot(vi, wg[i]) - wv[i];
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
  // DFSPH velocity update with stiffness k (eq. 10-11, in volumes).
  void apply_kappa(float dt, const float* kappa) {
    const NeighborView nb = grid_.neighbors();
    const bool with_b = nb_ > 0;
    const Vec3f* pg = pair_g_.data();
    const Vec3f* wg = wall_g_.data();
    Vec3f* v = v_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      const float ki = kappa[i];
      Vec3f dv = vec3(0.0f);
      for (uint32_t q = nb.begin(i); q < nb.end(i); ++q) {
        const uint32_t j = nb.indices[q];
        dv += pg[q] * (ki + kappa[j]);
      }
      if (with_b) dv += wg[i] * ki;
      v[i] -= dv * dt;
    });
  }

  // One Jacobi solve: from the residual (in rho0 units), stiffness
  // k_i = residual_i alpha_i / dt^2, applied to v and summed into `total`,
  // until the mean residual is below eta (at least min, at most max
  // iterations). Returns the final error; `iters` the iterations used.
  SphErrorStats jacobi(float dt, float eta, bool density, Vec<float>& total, int& iters) {
    // residual = dt Drho/Dt (+ rho - 1 for the density solver), in rho0 units
    SphErrorStats e = compute_residual(dt, density, !density);
    iters = 0;
    float* tot = total.data();
    float* k = tmpf_.data();
    const float* res = residual_.data();
    const float* alpha = alpha_.data();
    const float inv_dt2 = 1.0f / (dt * dt);
    while (iters < params_.max_iterations &&
           (iters < params_.min_iterations || e.sum / float(n_) > eta)) {
      ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
        const float ki = res[i] * alpha[i] * inv_dt2;
        k[i] = ki;
        tot[i] += ki;
      });
      apply_kappa(dt, k);
      e = compute_residual(dt, density, !density);
      ++iters;
    }
    return e;
  }

  // Warm start: half of the last step's total stiffness is applied first
  // (SPlisHSPlasH does the same), and the totals restart from it; the passes
  // that apply it are compute_density (divergence) and compute_forces
  // (density), which visit the pairs anyway. The density solver's total is
  // kept as it is: in a steady state it is the acceleration that holds the
  // liquid up, the same at any step length. The divergence solver's corrects
  // a rate within the step, so it is kept as k dt and divided by the new
  // step. (Keeping the density total as k dt^2, SPlisHSPlasH's choice,
  // multiplied it by 4000 in the dam break when the step fell from 4 ms to
  // 60 us, and threw particles at 20 m/s. Warm-starting only the particles
  // the current velocities compress, as SPlisHSPlasH also does, let a
  // settled column jitter: mean speed 0.06 m/s against 0.01.)
  int divergence_solve(float dt, bool warmed) {
    if (!warmed) zero(kappa_v_);
    int iters = 0;
    jacobi(dt, 0.01f * params_.max_divergence_error, false, kappa_v_, iters);
    float* kv = kappa_v_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) { kv[i] *= dt; });  // kept as k dt (see above)
    return iters;
  }

  SphErrorStats density_solve(float dt, int& iters, bool warmed) {
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

  // Collisions: a particle found inside a collider is put back on its
  // surface, its velocity into it removed. Counted, and apart those that
  // were compressed (at or above rest density at the step's start): the
  // walls' pressure should have held those. A particle below rest density
  // has no pressure (negative pressure is clamped; DFSPH corrects only
  // compression), so a wall acts on it through this alone: spray, and the
  // thin sheet of a surge front sliding on the floor.
  SphCounts project(float t) {
    if (ncoll_ == 0) return {0u, 0u};
    const Collider* cols = colliders_.data();
    const uint32_t ncoll = ncoll_;
    Vec3f* x = x_.data();
    Vec3f* v = v_.data();
    const float* density = density_.data();
    float* flag = residual_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      Vec3f p = x[i];
      bool moved = false;
      for (int pass = 0; pass < 3; ++pass)
        for (uint32_t k = 0; k < ncoll; ++k) {
          const SdfSample sd = collider_sdf(cols[k], p, t);
          if (sd.distance < 0.0f) {
            p -= sd.normal * sd.distance;
            const float un = dot(v[i] - cols[k].velocity, sd.normal);
            if (un < 0.0f) v[i] -= sd.normal * un;
            moved = true;
          }
        }
      x[i] = p;
      flag[i] = moved ? (density[i] >= 1.0f ? 2.0f : 1.0f) : 0.0f;
    });
    return ex_.reduce(
        n_, SphCounts{0u, 0u},
        [=] EDDY_HD(uint32_t i) { return SphCounts{flag[i] > 0.5f ? 1u : 0u, flag[i] > 1.5f ? 1u : 0u}; }, SumOp{});
  }

  template <class T>
  void zero(Vec<T>& b) {
    T* p = b.data();
    ex_.for_each(uint32_t(b.size()), [=] EDDY_HD(uint32_t i) { p[i] = T(0); });
  }

  void commit(SphStepStats& s) {
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

 private:
  static double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

  Exec ex_;
  NeighborGrid<Exec> grid_, bgrid_;
  SphConstants c_;
  uint32_t n_ = 0, ncoll_ = 0, nb_ = 0;
  uint64_t steps_ = 0;
  float expected_ = 0, max_accel_ = 0, time_ = 0;
  bool moving_ = false, boundary_dirty_ = true;
  Bounds3 domain_ = empty_bounds();
  Vec<Vec3f> x_, v_, a_, normal_, tmp3_;
  Vec<float> density_, pressure_, alpha_, kappa_, kappa_v_, residual_, lap_;
  // DFSPH: sum of pressure x dt over the steps since begin_frame(), and
  // their time; store() writes the mean (see density_solve).
  Vec<float> pressure_sum_;
  double pressure_time_ = 0.0;
  Vec<uint8_t> near_;  // per particle: within h of a collider (boundary neighbour search)
  // DFSPH, from compute_density: each fluid pair's V grad W_ij; per particle
  // the walls' sum_b V_b grad W_ib and sum_b V_b v_b . grad W_ib.
  Vec<Vec3f> pair_g_, wall_g_;
  Vec<float> wall_v_;
  Vec<float> tmpf_;  // scratch: a permuted float attribute, the solvers' per-iteration stiffness
  Vec<Vec3f> bx_, blocal_;
  Vec<float> bpsi_;
  Vec<uint32_t> bcol_;
  DeviceColliders<Exec> colliders_;
  std::vector<Collider> colliders_host_;
  CarriedAttributes<Exec> carried_;
  SphStageTimes times_;
};

}  // namespace eddy

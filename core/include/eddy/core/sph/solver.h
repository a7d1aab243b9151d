#pragma once
// The SPH step, written once over an executor (see cpu_executor.h for the
// contract). Included only by the files that instantiate it:
// core/src/sph/sph_cpu.cpp (TBB) and gpu/src/sph_cuda.cu (CUDA).
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
//
// The files (as SPlisHSPlasH keeps one time-step class per method): this one
// holds the state and the step; stages.h the stages both methods share,
// wcsph.h and dfsph.h each method's own, walls.h the boundary handling
// (boundary particles, spring-damper, friction), surface_tension.h the
// surface tension models.
#include <array>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "eddy/core/sph/boundary.h"
#include "eddy/core/solver_buffers.h"
#include "eddy/core/collider.h"
#include "eddy/core/error.h"
#include "eddy/core/kernels.h"
#include "eddy/core/neighbor_grid.h"
#include "eddy/core/pair_batch.h"
#include "eddy/core/points.h"
#include "eddy/core/reduce_ops.h"
#include "eddy/core/sph/sph.h"

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
// Whether boundary particles sampled for colliders b serve a: the same
// colliders, but for moving ones (bodies, animated colliders) of the same
// shape in another pose or motion (they are sampled whole, in their own
// frame; planes excepted).
bool same_boundary_samples(const std::vector<Collider>& a, const std::vector<Collider>& b);

template <class Exec>
class SphSolverT final : public SolverOn<Exec, SphSolver> {
  EDDY_SOLVER_ON(SphSolver);

 public:
  SphSolverT(const SphParams& p, Exec ex) : Base(p, std::move(ex)), grid_(ex_), bgrid_(ex_) { validate(p); }

  std::size_t boundary_size() const override { return nb_; }
  float particle_mass() const override { return c_.mass; }
  float particle_radius() const override { return c_.r; }
  float speed_of_sound() const override { return c_.c0; }
  float expected_speed() const override { return expected_; }

  // Animated parameters: the constants follow (at the loaded radius and
  // speed of sound), the particles and their warm state stay.
  void retune(const SphParams& p) override {
    validate(p);
    if (p.method != params_.method)
      throw Error("SPH: the method cannot change while the solver runs (it is not animatable)");
    params_ = p;
    if (c_.r > 0.0f) {
      const SphConstants old = c_;
      c_ = sph_constants(params_, c_.r, c_.c0);
      // The boundary particles' spacing and depth follow the kernel and spacing parameters.
      if (old.h != c_.h || old.kernel != c_.kernel || old.boundary_depth != c_.boundary_depth ||
          old.boundary_weight != c_.boundary_weight)
        boundary_dirty_ = true;
    }
  }

  // Two-way coupling: per collider, the walls' pressure (boundary
  // particles' or springs'), their friction and the velocity the collision
  // projection removes, as impulses m a dt and m dv.
  bool measures_reactions() const override { return true; }
  void track_reactions(bool on) override { reactions_.enable(on); }
  void reactions(std::vector<ColliderImpulse>& out, uint64_t* lost) const override {
    reactions_.sum(ex_, x_, ncoll_, out, lost);
  }

  void load(const Points& pts) override {
    if (!(pts.radius > 0.0f)) throw Error("SPH: particles have no radius (points.radius must be > 0)");
    if (pts.size() > 0xfffffff0u) throw Error("SPH: too many particles for 32-bit indices");
    n_ = static_cast<uint32_t>(pts.size());
    // The speed the scene is expected to reach, and the region the boundary
    // samples cover: estimated from the particles the simulation starts
    // with, then carried in the output's detail values (a frame loaded from
    // the one before keeps them, as a solver kept between frames would).
    const auto kept = [&](const char* name, std::size_t count) -> const std::vector<double>* {
      const auto it = pts.detail.find(name);
      return it != pts.detail.end() && it->second.size() == count ? &it->second : nullptr;
    };
    // (A source's first particles come after the start frame: until there
    // are some, nothing is estimated, and the region grows as they spread.)
    const auto* kept_speed = kept(kSphExpectedSpeed, 1);
    expected_ = params_.expected_speed > 0                 ? params_.expected_speed
                : kept_speed && (*kept_speed)[0] > 0.0 ? float((*kept_speed)[0])
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
    clearances_.load(n_);
    steps_ = 0;
    // The region boundary particles must cover: the particles, grown by
    // their own extent (room to splash), and every finite collider.
    Bounds3 domain = empty_bounds();
    if (const auto* d = kept(kSphDomain, 6))
      domain = {vec3(float((*d)[0]), float((*d)[1]), float((*d)[2])), vec3(float((*d)[3]), float((*d)[4]), float((*d)[5]))};
    Bounds3 at = empty_bounds();
    for (uint32_t i = 0; i < n_; ++i) at = {vmin(at.lo, pts.P()[i]), vmax(at.hi, pts.P()[i])};
    const bool inside = n_ == 0 || (at.lo.x >= domain.lo.x && at.lo.y >= domain.lo.y && at.lo.z >= domain.lo.z &&
                                    at.hi.x <= domain.hi.x && at.hi.y <= domain.hi.y && at.hi.z <= domain.hi.z);
    if (!inside) {  // the particles, grown by their own extent (room to splash), with what was covered
      const Vec3f grow = (at.hi - at.lo) + vec3(4.0f * c_.h);
      domain = {vmin(domain.lo, at.lo - grow), vmax(domain.hi, at.hi + grow)};
    }
    // The samples of still colliders are a function of the colliders
    // (set_colliders marks a change), the region, the spacing and the
    // particle count's cap: the same again, they are the same samples, and
    // sampling is skipped. Moving ones are sampled where they are now.
    const std::size_t cap = std::max<std::size_t>(8u * n_, 4000000u);
    const std::array<float, 3> how{2.0f * c_.r * params_.boundary_spacing, c_.boundary_depth, c_.h};
    if (moving_ || !(domain.lo == domain_.lo && domain.hi == domain_.hi) || cap != sample_cap_ || how != sampled_with_)
      boundary_dirty_ = true;
    domain_ = domain;
    sample_cap_ = cap;
    sampled_with_ = how;
    begin_reactions();
    if (n_) {
      // Placed samples of still colliders are where they were (their
      // volumes too): a frame loaded from the one before keeps them.
      if (boundary_dirty_ || !boundary_placed_) prepare_boundary(0.0f);
      // Density of the loaded state, for a store() with no step after it
      // (a step finds the neighbours and the density first): the one an SPH
      // frame stored with these positions (its detail values mark it; the
      // attribute is rho), or computed.
      const Points::Attribute* stored = pts.find("density");
      if (kept(kSphDomain, 6) && stored && stored->type == AttribType::Float) {
        std::vector<float> rel(pts.get_float("density"), pts.get_float("density") + n_);
        for (float& x : rel) x /= c_.rho0;  // carried as rho / rho0
        ex_.upload(density_, rel.data(), n_);
      } else {
        find_neighbors();
        compute_density();
      }
    }
  }

  // Off: every particle meets every collider in the projection and the
  // boundary search's test, the reference the clearances (project()) are
  // tested against.
  void set_shortcuts(bool on) { clearances_.enable(on); }

  // New colliders resample the boundary particles, except moving ones that
  // only moved on (bodies, posed anew each step; animated colliders, each
  // frame): their samples are kept in their own frame and placed again.
  void set_colliders(const std::vector<Collider>& cs) override {
    if (same_colliders(cs, colliders_host_) && !colliders_host_.empty()) return;
    if (!same_boundary_samples(cs, colliders_host_) || colliders_host_.empty()) boundary_dirty_ = true;
    colliders_host_ = cs;
    Base::set_colliders(cs);
    moving_ = wall_friction_ = surface_moves_ = false;
    for (const auto& c : cs) {
      moving_ |= collider_moves(c);
      wall_friction_ |= c.friction > 0.0f;
      surface_moves_ |= collider_moves(c) || (c.type == ShapeType::Grid && c.grid_velocity);
    }
    boundary_placed_ = false;
  }

  void store(Points& out) const override {
    store_particles(ex_, out, n_, c_.r, x_, v_, carried_);
    if (expected_ > 0) out.detail[kSphExpectedSpeed] = {expected_};
    out.detail[kSphDomain] = {domain_.lo.x, domain_.lo.y, domain_.lo.z, domain_.hi.x, domain_.hi.y, domain_.hi.z};
    float* rho = store_attribute(ex_, out, "density", density_);
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
               (wall_g_.size() + wall_gs_.size()) * sizeof(Vec3f) + (pair_gs_.size() + wall_v_.size()) * 4 +
               (x4_.size() + v4_.size()) * sizeof(Vec4f);
    b += carried_.bytes() + reactions_.bytes() + clearances_.bytes();
    return b + grid_.memory_bytes() + bgrid_.memory_bytes();
  }

  float suggest_dt() const override {
    // A partner's surfaces among the particles (bodies) count as particles do.
    const float d = 2.0f * c_.r, v = std::max(max_speed_, this->partner() ? float(this->partner()->max_speed()) : 0.0f);
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
    dt = std::min(dt, viscous_dt_limit(c_.h, c_.rho0, c_.mu));
    if (max_accel_ > 0) dt = std::min(dt, 0.25f * std::sqrt(c_.h / max_accel_));
    // The wall springs: omega dt <= 1 (symplectic Euler is stable below 2).
    if (c_.walls == int(SphWalls::SpringDamper) && ncoll_ > 0) dt = std::min(dt, 1.0f / std::sqrt(c_.spring_k));
    return dt;
  }

  // The step: the shared stages around the method's own (wcsph_step in
  // wcsph.h, dfsph_step in dfsph.h).
  void take_step(float dt, float time, StageClock& clock, SphStepStats& s) override {
    SphStageTimes times;
    time_ = time;
    if (boundary_dirty_ || moving_ || !boundary_placed_) prepare_boundary(time);
    find_neighbors();
    begin_reactions();
    times.neighbors = clock.lap();
    // DFSPH's warm starts ride on the density pass, which visits the pairs
    // anyway: the divergence solver's velocity change is applied there, the
    // density solver's kept for add_accel (each goes through the pairs'
    // gradients only, so where it is summed does not matter as long as it
    // is applied before its solve).
    const bool warm = params_.method == SphMethod::Dfsph && params_.warm_start && steps_ > 0;
    const SphErrorStats e = compute_density(warm && params_.divergence_solver ? dt : 0.0f, warm);
    s.mean_density_error = 100.0f * e.sum / float(n_);
    s.max_density_error = 100.0f * e.max;
    times.density = clock.lap();
    if (params_.method == SphMethod::Wcsph)
      wcsph_step(dt, clock, times);
    else
      dfsph_step(dt, warm, clock, s, times);
    if (c_.xsph > 0) xsph();
    const SphCounts moved = project(time + dt);
    s.projected = moved.all;
    s.projected_pressed = moved.pressed;
    commit(s);
    times.integrate = clock.lap();
    times_ = times;
    s.neighbor_pairs = grid_.pair_count();
    s.boundary_pairs = nb_ ? bgrid_.pair_count() : 0;
    ++steps_;
  }

  // ---- stages (public: nvcc's extended lambdas need public enclosing functions)

  // Shared by both methods (stages.h).
  void find_neighbors();
  void reorder();
  SphErrorStats compute_density(float warm_dt = 0.0f, bool warm_density = false);
  void compute_forces(float dt, bool with_pressure);
  void add_accel(float dt, bool warm = false);
  void integrate(float dt, bool with_accel);
  void xsph();
  SphCounts project(float t);
  void commit(SphStepStats& s);
  void begin_reactions();

  // Walls (walls.h): boundary particles on the collider surfaces.
  void prepare_boundary(float t);

  // Surface tension (surface_tension.h).
  void compute_normals();

  // WCSPH (wcsph.h).
  void wcsph_step(float dt, StageClock& clock, SphStageTimes& times);

  // DFSPH (dfsph.h).
  void dfsph_step(float dt, bool warm, StageClock& clock, SphStepStats& s, SphStageTimes& times);
  SphErrorStats compute_residual(float scale, bool add_density, bool divergence);
  void apply_kappa(float dt);
  SphErrorStats jacobi(float dt, float eta, bool density, Vec<float>& total, int& iters);
  int divergence_solve(float dt, bool warmed);
  SphErrorStats density_solve(float dt, int& iters, bool warmed);
  void record_wall_pressure(float dt);

  template <class T>
  void zero(Vec<T>& b) {
    T* p = b.data();
    ex_.for_each(uint32_t(b.size()), [=] EDDY_HD(uint32_t i) { p[i] = T(0); });
  }

 private:
  NeighborGrid<Exec> grid_, bgrid_;
  SphConstants c_;
  uint32_t nb_ = 0;
  uint64_t steps_ = 0;
  float expected_ = 0, max_accel_ = 0, time_ = 0;
  bool moving_ = false, boundary_dirty_ = true;  // dirty: sample anew
  bool wall_friction_ = false;                    // some collider has friction
  bool surface_moves_ = false;                    // some collider's surface has a velocity (moves or deforms)
  bool boundary_placed_ = false;                  // the samples stand where their colliders are
  Bounds3 domain_ = empty_bounds();
  std::size_t sample_cap_ = 0;           // the boundary samples' largest count,
  std::array<float, 3> sampled_with_{};  // their spacing, depth and the kernel radius, when last sampled
  Vec<Vec3f> x_, v_, a_, normal_, tmp3_;
  Vec<float> density_, pressure_, alpha_, kappa_, kappa_v_, residual_, lap_;
  // DFSPH: sum of pressure x dt over the steps since begin_frame(), and
  // their time; store() writes the mean (see density_solve).
  Vec<float> pressure_sum_;
  double pressure_time_ = 0.0;
  Vec<uint8_t> near_;  // per particle: within h of a collider (boundary neighbour search)
  // DFSPH, from compute_density: each fluid pair's V grad W_ij, as its scale
  // (V grad W_ij = (x_i - x_j) pair_gs, per list slot: 4 bytes a pair, the
  // positions being read anyway); per particle the walls' sum_b V_b grad W_ib
  // and sum_b V_b v_b . grad W_ib.
  Vec<float> pair_gs_;
  // DFSPH's solves: positions (w: the iteration's stiffness) and velocities
  // padded to 16 bytes for the pair passes (jacobi).
  Vec<Vec4f> x4_, v4_;
  Vec<Vec3f> wall_g_;
  Vec<float> wall_v_;
  // DFSPH, tracking reactions: wall_g_ split by collider, in the particles'
  // reaction slots ((kReactionSlots n)).
  Vec<Vec3f> wall_gs_;
  Vec<float> tmpf_;  // scratch: a permuted float attribute, the solvers' per-iteration stiffness
  Vec<Vec3f> bx_, blocal_;
  Vec<float> bpsi_;
  Vec<uint32_t> bcol_;
  std::vector<Collider> colliders_host_;
};

}  // namespace eddy

// The stages, one file per concern; the shared stages last, since they call
// the per-particle functions of the others.
#include "eddy/core/sph/walls.h"
#include "eddy/core/sph/surface_tension.h"
#include "eddy/core/sph/wcsph.h"
#include "eddy/core/sph/dfsph.h"
#include "eddy/core/sph/stages.h"

#pragma once
// The PBF step, written once over an executor (see cpu_executor.h for the
// contract). Included only by the files that instantiate it:
// core/src/pbf/pbf_cpu.cpp (TBB) and gpu/src/pbf_cuda.cu (CUDA).
//
// step(dt) reads like the algorithm of Macklin & Mueller 2013, Algorithm 1:
//   predict            v += dt g, x* = x + dt v                      (lines 1-4)
//   find neighbours    grid on x*, periodic Z-order reordering        (lines 5-7)
//   solve              Jacobi iterations of lambda, dp, collisions    (lines 8-19)
//   update velocity    v = (x* - x) / dt, wall friction/restitution   (line 21)
//   non-pressure       vorticity confinement, XSPH viscosity          (line 22)
//   commit             x = x*                                          (line 23)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "eddy/core/solver_buffers.h"
#include "eddy/core/collider.h"
#include "eddy/core/error.h"
#include "eddy/core/grow_buffer.h"
#include "eddy/core/kernels.h"
#include "eddy/core/neighbor_grid.h"
#include "eddy/core/pair_batch.h"
#include "eddy/core/pbf/pbf.h"
#include "eddy/core/points.h"
#include "eddy/core/reduce_ops.h"

namespace eddy {

// Constants derived once from the parameters and the particle radius,
// captured by value in every loop.
struct PbfConstants {
  float r = 0;          // particle radius, m
  float h = 0;          // support radius, m
  float mass = 0;       // kg per particle
  float inv_rho0 = 0;   // 1 / rest density
  float volume0 = 0;    // mass / rest density, m^3
  float eps_abs = 0;    // epsilon in 1/m^2
  float scorr_scale = 0;    // k / sum|grad C|^2, m^2
  float scorr_inv_wdq = 0;  // 1 / W(dq)
  float scorr_n = 4;
  int kernel = 0;       // KernelPair
  int wall_density = 1;
  int wall_samples = 0;     // wall table resolution
  float wall_inv_step = 0;  // samples per metre of wall distance
};

// x^n for the s_corr exponent: repeated squaring when n is a small integer
// (the default 4), powf otherwise.
EDDY_HD_INLINE float scorr_pow(float x, float n) {
  if (n == 4.0f) {
    const float x2 = x * x;
    return x2 * x2;
  }
  const int ni = int(n);
  if (float(ni) == n && ni >= 1 && ni <= 8) {
    float y = x;
    for (int k = 1; k < ni; ++k) y *= x;
    return y;
  }
  return powf(x, n);
}

// The walls as rest-density fluid beyond the collider surface: at distance d
// a half-space adds psi(d) to density / rho0, with derivative dpsi(d), and
// pushes through its virtual particles' s_corr by S(d) (per unit s_corr
// scale), along the wall normal. A planar approximation of Koschier &
// Bender 2017's density maps; tabulated, linear interpolation, 0 for d >= h.
struct WallSample {
  float psi, dpsi, scorr;
};
EDDY_HD_INLINE WallSample wall_lookup(const float* table, const PbfConstants& c, float d) {
  const float u = fminf(fmaxf(d, 0.0f) * c.wall_inv_step, float(c.wall_samples - 1));
  const int i = int(u) < c.wall_samples - 2 ? int(u) : c.wall_samples - 2;
  const float t = u - float(i);
  const float* a = table + 3 * i;
  return {a[0] * (1 - t) + a[3] * t, a[1] * (1 - t) + a[4] * t, a[2] * (1 - t) + a[5] * t};
}

struct PbfReduceStats {
  float err_sum, err_max;
  EDDY_HD_INLINE PbfReduceStats operator+(const PbfReduceStats& o) const {
    return {err_sum + o.err_sum, fmaxf(err_max, o.err_max)};
  }
};
struct PbfSpeedStats {
  float speed2_max;
  uint32_t nonfinite;
  EDDY_HD_INLINE PbfSpeedStats operator+(const PbfSpeedStats& o) const {
    return {fmaxf(speed2_max, o.speed2_max), nonfinite + o.nonfinite};
  }
};

// The wall table for wall_lookup: samples (psi, dpsi, S) triples over d in
// [0, h], calibrated so a lattice layer one radius (half a spacing) from a
// wall is at rest density.
std::vector<float> pbf_wall_table(const PbfParams& p, float radius, int samples);
PbfConstants pbf_constants(const PbfParams& p, float radius);

template <class Exec>
class PbfSolverT final : public SolverOn<Exec, PbfSolver> {
  EDDY_SOLVER_ON(PbfSolver);

 public:
  PbfSolverT(const PbfParams& p, Exec ex) : Base(p, std::move(ex)), grid_(ex_) { validate(p); }

  float particle_mass() const override { return c_.mass; }

  // Two-way coupling: the walls' pressure (their share of each particle's
  // position correction), the projection out of the colliders and the
  // friction and restitution at them, per collider, as impulses m dx / dt
  // and m dv.
  bool measures_reactions() const override { return true; }
  void track_reactions(bool on) override { reactions_.enable(on); }
  void reactions(std::vector<ColliderImpulse>& out, uint64_t* lost) const override {
    reactions_.sum(ex_, x_, ncoll_, out, lost);
  }
  float particle_radius() const override { return c_.r; }

  // Off: every density pass of the solve is a full one (lambda and the
  // gradient sums) and every particle meets every collider in each
  // projection and velocity pass: the reference the two shortcuts (the
  // measuring pass, see solve(); the clearances, see collide()) are tested
  // against.
  void set_shortcuts(bool on) {
    shortcuts_ = on;
    clearances_.enable(on);
  }

  // Animated parameters: the constants follow (at the loaded radius), the
  // particles and their warm state stay.
  void retune(const PbfParams& p) override {
    validate(p);
    params_ = p;
    if (c_.r > 0.0f) derive_constants(c_.r);
  }

  // The constants and the wall table, from the parameters at particle radius r.
  void derive_constants(float r) {
    c_ = pbf_constants(params_, r);
    const std::vector<float> table = pbf_wall_table(params_, c_.r, c_.wall_samples);
    ex_.upload(wall_table_, table.data(), table.size());
  }

  void load(const Points& pts) override {
    if (!(pts.radius > 0.0f)) throw Error("PBF: particles have no radius (points.radius must be > 0)");
    if (pts.size() > 0xfffffff0u) throw Error("PBF: too many particles for 32-bit indices");
    n_ = static_cast<uint32_t>(pts.size());
    derive_constants(pts.radius);
    ex_.upload(x_, pts.P(), n_);
    ex_.upload(v_, pts.v(), n_);
    max_speed_ = 0.0f;
    for (uint32_t i = 0; i < n_; ++i) max_speed_ = std::max(max_speed_, length(pts.v()[i]));
    for (auto* buf : {&xp_, &dp_, &v_new_, &omega_, &wall_dp_, &tmp3_}) buf->resize(n_);
    for (auto* buf : {&lambda_, &density_, &tmp1_}) buf->resize(n_);
    clearances_.load(n_);
    xp4_.resize(n_);
    carried_.load(ex_, pts, {"density"});
    steps_ = 0;
    // Density of the loaded state, so store() right after load() is
    // meaningful: the one a PBF frame stored with these positions (rho /
    // rho0, and no detail values: an SPH frame's carry its state and its
    // density is rho), or, from other points (an emitter's), computed (a
    // neighbour search and a density pass, which the next step would
    // repeat: at 24 fps with a few substeps a tenth of the frame).
    const Points::Attribute* stored = pts.find("density");
    if (stored && stored->type == AttribType::Float && pts.detail.empty()) {
      ex_.upload(density_, pts.get_float("density"), n_);
    } else if (n_) {
      grid_.build(x_.data(), n_, c_.h);
      grid_.find_neighbors(x_.data());
      compute_density(x_.data(), 0.0f, /*with_lambda=*/false);
    }
  }

  void store(Points& out) const override {
    store_particles(ex_, out, n_, c_.r, x_, v_, carried_);
    store_attribute(ex_, out, "density", density_);
  }

  std::size_t memory_bytes() const override {
    size_t b = (x_.size() + v_.size() + xp_.size() + dp_.size() + v_new_.size() + omega_.size() +
                wall_dp_.size() + tmp3_.size()) * sizeof(Vec3f) + xp4_.size() * sizeof(Vec4f) +
               (lambda_.size() + density_.size() + tmp1_.size() + pair_w_.size() + pair_g_.size()) * 4;
    b += carried_.bytes() + reactions_.bytes() + clearances_.bytes() + react_wall_.size() * sizeof(Vec3f);
    return b + grid_.memory_bytes();
  }

  void take_step(float dt, float time, StageClock& clock, PbfStepStats& s) override {
    predict(dt);
    times_.predict = clock.lap();
    find_neighbors();
    times_.neighbors = clock.lap();
    solve(dt, time + dt, s);
    times_.solve = clock.lap();
    update_velocity(dt, time + dt);
    if (params_.vorticity > 0.0f || params_.xsph > 0.0f) non_pressure_forces(dt);
    commit(s);
    times_.velocity = clock.lap();
    s.neighbor_pairs = grid_.pair_count();
    ++steps_;
  }

  // ---- stages (public: nvcc's extended lambdas need public enclosing functions)

  // (x, v) => (v = v + dt (g + force fields), x* = x + dt v)
  void predict(float dt) {
    Vec3f* x = x_.data();
    Vec3f* v = v_.data();
    Vec3f* xp = xp_.data();
    const Vec3f g = params_.gravity;
    const ForceField* fields = fields_.data();
    const uint32_t nf = nfields_;
    float* clear = clearances_.bounds();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      const Vec3f vi = v[i] + (g + fields_accel(fields, nf, x[i], v[i])) * dt;
      v[i] = vi;
      xp[i] = x[i] + vi * dt;
      if (clear) clear[i] = lower_clearance(clear[i], vi * dt, xp[i]);
    });
  }

  // x* => grid, neighbour lists; every reorder_interval steps all attributes
  // are permuted into the grid's Z-order.
  void find_neighbors() {
    grid_.build(xp_.data(), n_, c_.h);
    if (params_.reorder_interval > 0 && steps_ % params_.reorder_interval == 0) {
      reorder();
      grid_.mark_reordered();
    }
    grid_.find_neighbors(xp_.data());
  }

  void reorder() {
    clearances_.invalidate();  // (measured again by the solve's first projection)
    const uint32_t* order = grid_.sorted_order();
    for (Vec<Vec3f>* buf : {&x_, &v_, &xp_}) permute_into(ex_, *buf, tmp3_, order, n_);
    carried_.permute(ex_, order, n_);
  }

  // Jacobi iterations until the mean density error target, within
  // [min_iterations, max_iterations]. The loop stops on the error of the
  // corrected state, so it measures once more than it corrects. Where it
  // will most likely stop (at max_iterations, or past min_iterations when
  // the state before the last correction already met the target) that pass
  // only measures: the density and the kernels the velocity passes read,
  // without lambda and the gradient sums, a third cheaper. Should the
  // corrected state miss the target after all, the full pass follows. The
  // result is the same to the bit either way.
  void solve(float dt, float t_end, PbfStepStats& s) {
    reactions_.reset(ex_, n_);
    if (reactions_.on()) react_wall_.resize(size_t(n_) * kReactionSlots);
    collide(xp_.data(), t_end, dt);
    const auto stops = [&](int it, float error) {
      return it >= params_.max_iterations || (it >= params_.min_iterations && error <= params_.max_density_error);
    };
    float before = INFINITY;  // the error before the last correction (%)
    for (int it = 0;; ++it) {
      const bool measure_only = shortcuts_ && stops(it, before);
      PbfReduceStats e = compute_density(xp_.data(), t_end, /*with_lambda=*/!measure_only);
      if (measure_only && !stops(it, 100.0f * e.err_sum / float(n_)))
        e = compute_density(xp_.data(), t_end, /*with_lambda=*/true);
      s.mean_density_error = 100.0f * e.err_sum / float(n_);
      s.max_density_error = 100.0f * e.err_max;
      s.iterations = it;
      if (stops(it, s.mean_density_error)) break;
      compute_delta();
      apply_delta(t_end, dt);
      before = s.mean_density_error;
    }
  }

  // x* => density, lambda (M&M eq. 1, 8-11); returns the compression error.
  // Without lambda: the density and the pairs' kernels only.
  PbfReduceStats compute_density(const Vec3f* xp, float t, bool with_lambda) {
    const PbfConstants c = c_;
    const PairKernels K(c.h, c.kernel);
    const NeighborView nb = grid_.neighbors();
    const Collider* cols = colliders_.data();
    const uint32_t ncoll = c.wall_density ? ncoll_ : 0;
    const float* table = wall_table_.data();
    // Particles clear of every wall by more than h reach none (collide()).
    const float* clear = clearances_.bounds();
    const float clear_of_walls = c.h - c.r + kClearanceMargin * c.r;
    float* density = density_.data();
    float* lambda = lambda_.data();
    float* err = tmp1_.data();
    Vec3f* wall_dp = wall_dp_.data();
    const ReactionView R = with_lambda ? reactions_.view() : ReactionView{};
    Vec3f* pending = R.on() ? react_wall_.data() : nullptr;
    const float w0 = K.W(0.0f);
    // Each pair's W and g (grad W = r g), for the passes that follow on the
    // same positions: the correction (this iteration) and, after the last
    // density pass, the viscosity and vorticity.
    grow_buffer(pair_w_, size_t(grid_.pair_count()) + n_ + kPairLanes);
    grow_buffer(pair_g_, size_t(grid_.pair_count()) + n_ + kPairLanes);
    float* pw = pair_w_.data();
    float* pg = pair_g_.data();
    const Vec4f* xp4 = pad(xp, nullptr);
    // All the sums where lambda follows; else W alone, unless vorticity
    // confinement will read the pairs' g.
    const bool gradients = with_lambda || params_.vorticity > 0.0f;
    ex_.for_each_simd(n_, [=] EDDY_HD(uint32_t i) {
      const Vec3f xi = xp[i];
      // Per lane: sum_j W_ij, sum_j grad W_ij, sum_j |grad W_ij|^2.
      constexpr int L = kPairLanes;
      float aw[L] = {}, agx[L] = {}, agy[L] = {}, agz[L] = {}, ag2[L] = {};
      if (gradients) {
        for_pair_batches(nb, i, xp4, c.h, [&](const PairBatch& b) {
          float w[L], g[L];
          K.scalars<L>(b.r2, w, g);
          store_lanes(pw, b, w);
          store_lanes(pg, b, g);
          EDDY_LANES
          for (int l = 0; l < L; ++l) {
            const float gx = b.rx[l] * g[l], gy = b.ry[l] * g[l], gz = b.rz[l] * g[l];
            aw[l] += w[l];
            agx[l] += gx;
            agy[l] += gy;
            agz[l] += gz;
            ag2[l] += gx * gx + gy * gy + gz * gz;  // (components: g^2 alone can overflow at tiny r)
          }
        });
      } else {
        for_pair_batches(nb, i, xp4, c.h, [&](const PairBatch& b) {
          float w[L], g[L];
          K.scalars<L>(b.r2, w, g);  // (g unused: the compiler drops its division)
          store_lanes(pw, b, w);
          EDDY_LANES
          for (int l = 0; l < L; ++l) aw[l] += w[l];
        });
      }
      const float wsum = w0 + lane_sum(aw);
      const Vec3f gi = lane_sum3(agx, agy, agz);  // sum_j grad W_ij
      const float g2 = lane_sum(ag2);                                       // sum_j |grad W_ij|^2
      // density / rho0, from the particles and the walls
      float rel = wsum * c.mass * c.inv_rho0;
      Vec3f wg = vec3(0.0f), ws = vec3(0.0f);  // wall gradient of C_i, wall s_corr push
      // Walls within h, combined as independent half-spaces: the fluid's share
      // of the kernel is prod_w (1 - psi_w), so overlapping walls at edges and
      // corners are not counted twice (within 1 % of the lattice value there).
      constexpr int kMaxWalls = 12;
      WallSample near[kMaxWalls];
      Vec3f normal[kMaxWalls];
      uint32_t owner[kMaxWalls];
      float push[kMaxWalls];  // 1: the wall's s_corr pushes, 0: a body's does not
      int nw = 0;
      float keep = 1.0f;  // prod_w (1 - psi_w)
      const uint32_t nc = clear && clear[i] > clear_of_walls ? 0u : ncoll;
      for (uint32_t k = 0; k < nc && nw < kMaxWalls; ++k) {
        SdfSample walls[3];
        const int m = collider_walls(cols[k], xi, t, walls);
        for (int w = 0; w < m && nw < kMaxWalls; ++w) {
          if (walls[w].distance >= c.h) continue;
          near[nw] = wall_lookup(table, c, walls[w].distance);
          normal[nw] = walls[w].normal;
          owner[nw] = k;
          push[nw] = cols[k].body ? 0.0f : 1.0f;
          keep *= 1.0f - near[nw].psi;
          ++nw;
        }
      }
      // The walls' s_corr balances the push the liquid's own s_corr gives
      // particles towards the wall, so it scales with how full the liquid
      // neighbourhood is: 0 for a lone droplet (which then rests on the wall
      // instead of hovering), 1 from a half-full neighbourhood up (measured
      // on the settling tank: scaling all the way to a full one lets the wall
      // layer jitter, mean speed 0.048 against 0.017 m/s).
      const float self = w0 * c.mass * c.inv_rho0;
      const float room = keep - self;  // what a full liquid neighbourhood adds besides self
      const float full = room > 1e-6f ? fminf(fmaxf(2.0f * (rel - self) / room, 0.0f), 1.0f) : 1.0f;
      rel += 1.0f - keep;
      for (int w = 0; w < nw; ++w) {
        const float others = keep / (1.0f - near[w].psi);
        wg += normal[w] * (near[w].dpsi * others);
        ws += normal[w] * (near[w].scorr * others * full * push[w]);
      }
      density[i] = rel / c.inv_rho0;
      const float C = fmaxf(rel - 1.0f, 0.0f);
      err[i] = C;
      if (with_lambda) {
        const Vec3f grad_i = gi * c.volume0 + wg;  // grad_{x_i} C_i
        const float denom = length2(grad_i) + g2 * c.volume0 * c.volume0 + c.eps_abs;
        const float li = -C / denom;
        lambda[i] = li;
        // The walls' part of dp_i: lambda_i grad(wall) plus their s_corr push.
        wall_dp[i] = wg * li + ws * c.scorr_scale;
        if (R.on()) {
          // Each wall's share, applied (and so given as impulse) by apply_delta.
          for (int s = 0; s < kReactionSlots; ++s) pending[size_t(i) * kReactionSlots + s] = vec3(0.0f);
          for (int w = 0; w < nw; ++w) {
            const int s = R.slot(i, int32_t(owner[w]));
            if (s < 0) continue;
            const float others = keep / (1.0f - near[w].psi);
            pending[size_t(i) * kReactionSlots + s] +=
                normal[w] * (others * (near[w].dpsi * li + near[w].scorr * full * push[w] * c.scorr_scale));
          }
        }
      }
    });
    return ex_.reduce(
        n_, PbfReduceStats{0.0f, 0.0f}, [=] EDDY_HD(uint32_t i) { return PbfReduceStats{err[i], err[i]}; },
        SumOp{});
  }

  // lambda => dp_i = V0 sum_j (lambda_i + lambda_j + s_corr) grad W_ij + walls  (M&M eq. 12, 14),
  // with the kernels the density pass stored.
  void compute_delta() {
    const PbfConstants c = c_;
    const NeighborView nb = grid_.neighbors();
    const float* pw = pair_w_.data();
    const float* pg = pair_g_.data();
    const float* lambda = lambda_.data();
    const Vec4f* xl = pad(xp_.data(), lambda);  // (x*_j, lambda_j)
    const Vec3f* wall_dp = wall_dp_.data();
    Vec3f* dp = dp_.data();
    ex_.for_each_simd(n_, [=] EDDY_HD(uint32_t i) {
      const float li = lambda[i];
      constexpr int L = kPairLanes;
      float ax[L] = {}, ay[L] = {}, az[L] = {};
      for_pair_batches(nb, i, xl, c.h, [&](const PairBatch& b) {
        float w[L], g[L], s[L];
        load_lanes(pw, b, w);
        load_lanes(pg, b, g);
        EDDY_LANES
        for (int l = 0; l < L; ++l) s[l] = li + b.w[l];
        if (c.scorr_n == 4.0f) {  // (the default, tested once per batch: the lanes then vectorise)
          for (int l = 0; l < L; ++l) s[l] -= c.scorr_scale * scorr_pow(w[l] * c.scorr_inv_wdq, 4.0f);
        } else {
          for (int l = 0; l < L; ++l) s[l] -= c.scorr_scale * scorr_pow(w[l] * c.scorr_inv_wdq, c.scorr_n);
        }
        EDDY_LANES
        for (int l = 0; l < L; ++l) {
          const float k = g[l] * s[l];
          ax[l] += b.rx[l] * k;
          ay[l] += b.ry[l] * k;
          az[l] += b.rz[l] * k;
        }
      });
      const Vec3f d = lane_sum3(ax, ay, az);
      dp[i] = d * c.volume0 + wall_dp[i];
    });
  }

  // Positions padded for the pair passes' gathers, with w[i] (or 0) beside each.
  const Vec4f* pad(const Vec3f* x, const float* w) {
    pad_into(ex_, xp4_.data(), x, w, n_);
    return xp4_.data();
  }

  void apply_delta(float t, float dt) {
    Vec3f* xp = xp_.data();
    const Vec3f* dp = dp_.data();
    const ReactionView R = reactions_.view();
    const Vec3f* pending = R.on() ? react_wall_.data() : nullptr;
    const float m_dt = c_.mass / dt;
    float* clear = clearances_.bounds();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      xp[i] += dp[i];
      if (clear) clear[i] = lower_clearance(clear[i], dp[i], xp[i]);
      if (R.on())
        for (int s = 0; s < kReactionSlots; ++s) {
          const size_t q = size_t(i) * kReactionSlots + s;
          if (R.k[q] >= 0) R.J[q] += pending[q] * m_dt;
        }
    });
    collide(xp, t, dt);
  }

  // Projects positions out of the colliders to a particle radius from the
  // surface. Where every collider is an analytic shape that does not move,
  // each particle keeps a clearance: a lower bound on its distance to the
  // colliders, less r, measured here and lowered by every move since (the
  // distances are 1-Lipschitz; lower_clearance in collider.h). A particle
  // whose clearance exceeds a hundredth of r is not pushed, so the
  // projections skip its colliders, as do the friction pass beyond its band
  // and the density passes beyond h: in a tank, all but the layers at the
  // walls. The same result to the bit (the margin outweighs the distances'
  // rounding); set_colliders, load and reordering measure again.
  void collide(Vec3f* xp, float t, float dt) {
    if (ncoll_ == 0) return;
    const Collider* cols = colliders_.data();
    const uint32_t ncoll = ncoll_;
    const float r = c_.r;
    const ReactionView R = reactions_.view();
    const float m_dt = c_.mass / dt;
    float* clear = clearances_.measuring();
    const bool skip = clearances_.valid();
    const float margin = kClearanceMargin * r;
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      if (skip && clear[i] > margin) return;
      float nearest;
      xp[i] = push_out_of_colliders(
          cols, ncoll, xp[i], t, r, r,
          [&](uint32_t k, const SdfSample& sd, Vec3f) {
            if (R.on()) R.add(i, int32_t(k), sd.normal * ((r - sd.distance) * m_dt));
          },
          &nearest);
      if (clear) clear[i] = nearest - r;
    });
    clearances_.measured();
  }

  // (x, x*, v_pre) => v = (x* - x)/dt, then at walls: restitution on the
  // normal approach speed and Coulomb friction on the tangential speed, with
  // the normal velocity change as the impulse (Bridson et al. 2002).
  void update_velocity(float dt, float t) {
    const Vec3f* x = x_.data();
    const Vec3f* xp = xp_.data();
    Vec3f* v = v_.data();
    const Collider* cols = colliders_.data();
    const uint32_t ncoll = ncoll_;
    const float band = 1.5f * c_.r;              // friction acts within this distance of a wall
    const float touch = c_.r * (1.0f + 1e-3f);   // restitution only on contact (projected to r)
    const float inv_dt = 1.0f / dt;
    const ReactionView R = reactions_.view();
    const float m = c_.mass;
    // Clear of the friction band by the margin: no collider acts (collide()).
    const float* clear = clearances_.bounds();
    const float clear_of_band = band - c_.r + kClearanceMargin * c_.r;
    ex_.for_each(n_, [=] EDDY_HD(uint32_t i) {
      const Vec3f pre = v[i];
      Vec3f vn = (xp[i] - x[i]) * inv_dt;
      const uint32_t nc = clear && clear[i] > clear_of_band ? 0u : ncoll;
      for (uint32_t k = 0; k < nc; ++k) {
        const Collider& col = cols[k];
        const SdfSample sd = collider_sdf(col, xp[i], t);
        if (sd.distance >= band) continue;
        const Vec3f u = collider_velocity(col, xp[i], t);
        const Vec3f rel = vn - u;
        const float un_pre = dot(pre - u, sd.normal);
        float un = dot(rel, sd.normal);
        if (un_pre < 0.0f && sd.distance <= touch) un = fmaxf(un, -col.restitution * un_pre);
        const Vec3f ut = rel - sd.normal * dot(rel, sd.normal);
        const float impulse = fmaxf(un - un_pre, 0.0f);
        const float ut_len = length(ut);
        const float keep = ut_len > 0.0f ? fmaxf(0.0f, 1.0f - col.friction * impulse / ut_len) : 0.0f;
        const Vec3f before = vn;
        vn = u + ut * keep + sd.normal * un;
        if (R.on()) R.add(i, int32_t(k), (vn - before) * m);
      }
      v[i] = vn;
    });
  }

  // Vorticity confinement (M&M eq. 15-16) and XSPH viscosity (eq. 17), both
  // gathered from the neighbours' velocities of this step, with the kernels
  // the last density pass stored (on these positions: the solve ends with it).
  void non_pressure_forces(float dt) {
    const PbfConstants c = c_;
    const NeighborView nb = grid_.neighbors();
    const float* pw = pair_w_.data();
    const float* pg = pair_g_.data();
    const Vec3f* xp = xp_.data();
    const Vec3f* v = v_.data();
    const float* density = density_.data();
    Vec3f* v_new = v_new_.data();
    Vec3f* omega = omega_.data();
    const float cx = params_.xsph;
    const bool vort = params_.vorticity > 0.0f;
    ex_.for_each_simd(n_, [=] EDDY_HD(uint32_t i) {
      const Vec3f xi = xp[i], vi = v[i];
      constexpr int L = kPairLanes;
      float dvx[L] = {}, dvy[L] = {}, dvz[L] = {}, wx[L] = {}, wy[L] = {}, wz[L] = {};
      for_pair_batches(nb, i, xi, xp, c.h, [&](const PairBatch& b) {
        float w[L], g[L], ux[L], uy[L], uz[L], Vj[L];
        for (int l = 0; l < L; ++l) {  // v_j - v_i and V_j (0 and m/rho_i in the spare lanes: j = i)
          const uint32_t j = b.j[l];
          const Vec3f u = v[j] - vi;
          ux[l] = u.x;
          uy[l] = u.y;
          uz[l] = u.z;
          Vj[l] = c.mass / density[j];
        }
        load_lanes(pw, b, w);
        load_lanes(pg, b, g);
        EDDY_LANES
        for (int l = 0; l < L; ++l) {
          const float k = Vj[l] * w[l];
          dvx[l] += ux[l] * k;
          dvy[l] += uy[l] * k;
          dvz[l] += uz[l] * k;
        }
        if (vort) {
          EDDY_LANES
          for (int l = 0; l < L; ++l) {
            // cross(grad W, v_j - v_i) V_j, grad W = r g
            const float gv = g[l] * Vj[l];
            wx[l] += (b.ry[l] * uz[l] - b.rz[l] * uy[l]) * gv;
            wy[l] += (b.rz[l] * ux[l] - b.rx[l] * uz[l]) * gv;
            wz[l] += (b.rx[l] * uy[l] - b.ry[l] * ux[l]) * gv;
          }
        }
      });
      const Vec3f dv = lane_sum3(dvx, dvy, dvz);
      v_new[i] = vi + dv * cx;
      omega[i] = vort ? lane_sum3(wx, wy, wz) : vec3(0.0f);
    });
    if (vort) {
      const float eps = params_.vorticity;
      Vec3f* vout = v_.data();
      ex_.for_each_simd(n_, [=] EDDY_HD(uint32_t i) {
        const Vec3f xi = xp[i];
        const float wi = length(omega[i]);
        constexpr int L = kPairLanes;
        float ex[L] = {}, ey[L] = {}, ez[L] = {};
        for_pair_batches(nb, i, xi, xp, c.h, [&](const PairBatch& b) {
          float g[L], k[L];
          for (int l = 0; l < L; ++l) k[l] = (length(omega[b.j[l]]) - wi) * c.mass / density[b.j[l]];
          load_lanes(pg, b, g);
          EDDY_LANES
          for (int l = 0; l < L; ++l) {
            ex[l] += b.rx[l] * (g[l] * k[l]);
            ey[l] += b.ry[l] * (g[l] * k[l]);
            ez[l] += b.rz[l] * (g[l] * k[l]);
          }
        });
        const Vec3f eta = lane_sum3(ex, ey, ez);
        const Vec3f N = normalize_or(eta, vec3(0.0f));
        vout[i] = v_new[i] + cross(N, omega[i]) * (eps * dt);
      });
    } else {
      std::swap(v_, v_new_);
    }
  }

  // x = x*; statistics of the committed state.
  void commit(PbfStepStats& s) {
    std::swap(x_, xp_);
    const Vec3f* x = x_.data();
    const Vec3f* v = v_.data();
    const PbfSpeedStats st = ex_.reduce(
        n_, PbfSpeedStats{0.0f, 0u},
        [=] EDDY_HD(uint32_t i) {
          const bool ok = is_finite(x[i]) && is_finite(v[i]);
          return PbfSpeedStats{ok ? length2(v[i]) : 0.0f, ok ? 0u : 1u};
        },
        SumOp{});
    s.max_speed = sqrtf(st.speed2_max);
    s.nonfinite = st.nonfinite;
    max_speed_ = s.max_speed;
  }

 private:
  NeighborGrid<Exec> grid_;
  PbfConstants c_;
  uint64_t steps_ = 0;
  bool shortcuts_ = true;  // see set_shortcuts(); the clearances (less r here) in the base, see collide()
  Vec<Vec3f> x_, v_, xp_, dp_, v_new_, omega_, wall_dp_, tmp3_;
  Vec<Vec4f> xp4_;  // x* padded, with a per-pass value in w (pad)
  Vec<float> lambda_, density_, tmp1_;
  Vec<float> pair_w_, pair_g_;  // (list slot) W_ij and g_ij of the last density pass
  Vec<Vec3f> react_wall_;  // (kReactionSlots n) each wall's share of this iteration's dp, while tracking
  Vec<float> wall_table_;
};

}  // namespace eddy

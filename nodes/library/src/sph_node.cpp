// SPHSolver: the SPH solvers of core/ (WCSPH and DFSPH) as a stateful node.
// Frame f continues from the node's own output at f - 1; the solver object
// (scratch arrays, neighbour grids, boundary particles) is kept between
// frames and reloaded only when the previous frame is not the one it produced.
#include <cstdio>
#include <sstream>

#include "eddy/core/sph/sph.h"
#include "eddy/gpu/gpu.h"
#include "eddy/graph/node.h"
#include "library.h"

namespace eddy::library {

namespace {

SphParams read_params(const CookContext& c) {
  SphParams p;
  read_table_params(c, sph_param_table(), p);
  return p;
}

class SphNode final : public LiquidSolverNode<SphSolver> {
  std::unique_ptr<SphSolver> make_solver(const CookContext& ctx) override {
    return make_on_device(ctx, read_params(ctx), make_sph_solver_cpu, gpu::make_sph_solver_cuda);
  }

  void load(CookContext& ctx, const Points& from) override {
    solver_->load(from);
    for (const auto& w : sph_warnings(*solver_, float(ctx.param_float("time_step")))) ctx.warn(w);
  }

  void retune(const CookContext& ctx) override { solver_->retune(read_params(ctx)); }

  void advance(CookContext& ctx, double t0, double frame_dt) override {
    // Linked bodies step in the solver's steps, whose length counts their
    // speed (StepPartner::max_speed).
    if (bodies_.linked()) bodies_.begin_frame(ctx.frame());
    const SphFrameStats st = sph_advance_frame(*solver_, t0, frame_dt, float(ctx.param_float("time_step")),
                                               ctx.frame(), [&](int s, double fraction, const SphStepStats& ss) {
                                                 char buf[96];
                                                 std::snprintf(buf, sizeof buf, "step %d, dt %.2e s, %d iterations",
                                                               s, ss.dt, ss.iterations);
                                                 step_progress(ctx, fraction, buf);
                                               });
    const bool dfsph = solver_->params().method == SphMethod::Dfsph;
    char buf[320];
    char iters[96] = "";
    if (dfsph)
      std::snprintf(iters, sizeof iters, "%.1f pressure / %.1f divergence iterations, ", st.mean_iterations,
                    st.mean_divergence_iterations);
    std::snprintf(buf, sizeof buf,
                  "%zu particles (%zu boundary), %d steps (dt %.2e..%.2e s), %sdensity error mean %.3f %% max "
                  "%.2f %%, max speed %.3f m/s",
                  solver_->size(), solver_->boundary_size(), st.steps, st.min_dt, st.max_dt, iters,
                  st.mean_density_error, st.max_density_error, st.max_speed);
    std::string line = buf;
    // Free particles (below rest density: no pressure) meet walls through
    // collisions alone: spray, a surge front's sheet. Reported, not warned.
    if (st.projected > st.projected_pressed)
      line += ", " + std::to_string(st.projected - st.projected_pressed) +
              " collision(s) of free particles with colliders";
    ctx.info(line + bodies_.info());
    if (!dfsph && st.max_speed > 0.3f * solver_->speed_of_sound()) {
      std::ostringstream m;
      m.precision(3);
      m << "max speed " << st.max_speed << " m/s is over 0.3 x the speed of sound (" << solver_->speed_of_sound()
        << " m/s): the liquid compresses noticeably; raise speed_of_sound or expected_speed";
      ctx.warn(m.str());
    }
    if (st.projected_pressed > 0) {
      std::ostringstream m;
      m << st.projected_pressed
        << " compressed particle step(s) had to be put back out of a collider this frame (the walls' pressure let "
           "them through); a smaller max_dt or stiffer walls help";
      ctx.warn(m.str());
    }
  }
};

}  // namespace

void register_sph(Registry& r) {
  NodeSpec s = solver_spec(
      "SPHSolver",
      "Smoothed particle hydrodynamics. wcsph: weakly compressible SPH with the Tait equation of state "
      "p = B((rho/rho0)^gamma - 1), B = rho0 c0^2 / gamma, Monaghan's symmetric pressure force, viscosity "
      "with Mueller et al.'s viscosity-kernel Laplacian, optional XSPH. dfsph: divergence-free SPH (Bender & "
      "Koschier 2017), a density solver and a divergence solver with error targets, as SPlisHSPlasH uses by "
      "default. Walls are boundary particles on the collider surfaces (Akinci et al. 2012) or a "
      "spring-damper layer; surface tension after Akinci et al. 2013 or Mueller et al.'s colour field. The "
      "time step adapts to the CFL, acoustic, viscous and force conditions. At the start frame it outputs the "
      "input particles; frame f continues from frame f - 1. SI units. Stops with an error naming the frame "
      "when the simulation becomes unstable. Rigid bodies linked into `bodies` float, sink and are pushed by the "
      "liquid, which they push back (two-way coupling, in the same steps).",
      "Particles with P, v, density, pressure and the input's attributes.");
  CoupledBodies::spec(s);
  s.steps_animations = true;
  table_params(s, sph_param_table(), "method")
      .param_float("time_step", 0.0, 0.0, 1.0, "s",
                   "0: adaptive (CFL, acoustic, viscous and force conditions); otherwise equal steps of at most "
                   "this length.");
  table_params(s, sph_param_table());
  r.add(std::move(s.make<SphNode>()));
}

}  // namespace eddy::library

// PBFSolver: the position based fluids solver of core/ as a stateful node.
// Frame f continues from the node's own output at f - 1; the solver object
// (scratch arrays, neighbour grid) is kept between frames and reloaded only
// when the previous frame is not the one it produced.
#include <cstdio>

#include "eddy/core/pbf/pbf.h"
#include "eddy/gpu/gpu.h"
#include "eddy/graph/node.h"
#include "library.h"

namespace eddy::library {

namespace {

PbfParams read_params(const CookContext& c) {
  PbfParams p;
  read_table_params(c, pbf_param_table(), p);
  if (c.param_string("solve") == "fixed") {
    p.min_iterations = p.max_iterations = int(c.param_int("iterations"));
    p.max_density_error = 0.0f;
  }
  return p;
}

class PbfNode final : public LiquidSolverNode<PbfSolver> {
  std::unique_ptr<PbfSolver> make_solver(const CookContext& ctx) override {
    return make_on_device(ctx, read_params(ctx), make_pbf_solver_cpu, gpu::make_pbf_solver_cuda);
  }

  void retune(const CookContext& ctx) override { solver_->retune(read_params(ctx)); }

  void advance(CookContext& ctx, double t0, double frame_dt) override {
    SubstepPolicy policy{int(ctx.param_int("substeps")), int(ctx.param_int("max_substeps")),
                         float(ctx.param_float("cfl"))};
    if (bodies_.linked()) {
      // The CFL condition counts the bodies too: a body's surface moving
      // through the liquid is a wall the particles must not skip.
      policy.min_substeps = pbf_substeps(policy, bodies_.max_speed(), length(solver_->params().gravity), frame_dt,
                                         solver_->particle_radius());
      bodies_.begin_frame(ctx.frame());
    }
    const PbfFrameStats st = pbf_advance_frame(*solver_, t0, frame_dt, policy, ctx.frame(), solver_->particle_radius(),
                                               [&](int s, int n, const PbfStepStats& ss) {
                                                 char buf[96];
                                                 std::snprintf(buf, sizeof buf, "substep %d/%d, %d iterations", s, n,
                                                               ss.iterations);
                                                 step_progress(ctx, double(s) / n, buf);
                                               });
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%zu particles, %d substeps, %.1f iterations, density error mean %.2f %% max %.2f %%, "
                  "max speed %.3f m/s (CFL %.2f)",
                  solver_->size(), st.substeps, st.mean_iterations, st.mean_density_error, st.max_density_error,
                  st.max_speed, st.max_cfl);
    ctx.info(buf + bodies_.info());
  }
};

}  // namespace

void register_pbf(Registry& r) {
  const SubstepPolicy sub;
  NodeSpec s = solver_spec(
      "PBFSolver",
      "Position based fluids (Macklin & Mueller 2013): each substep predicts positions under gravity, finds "
      "neighbours, runs Jacobi iterations of the density constraint (lambda with relaxation epsilon, s_corr "
      "tensile correction) with collision projection, updates velocities with wall friction and restitution, "
      "then applies vorticity confinement and XSPH viscosity. At the start frame it outputs the input "
      "particles; frame f continues from frame f - 1. SI units. Reports per frame the mean and max density "
      "error, the iterations used and the max speed, and stops with an error naming the frame when the "
      "simulation becomes unstable. Rigid bodies linked into `bodies` float, sink and are pushed by the liquid, "
      "which they push back (two-way coupling, in the same substeps).",
      "Particles with P, v, density and the input's attributes.");
  CoupledBodies::spec(s);
  s.steps_animations = true;
  s.param_int("substeps", sub.min_substeps, 1, 1000, "", "Fewest substeps per frame; dt = 1 / (fps x substeps).")
      .param_int("max_substeps", sub.max_substeps, 1, 1000, "",
                 "Most substeps per frame, when the CFL condition asks for more than `substeps`.")
      .param_float("cfl", sub.cfl, 0.0, 10.0, "diameters",
                   "CFL condition: take enough substeps that the fastest particle moves at most this many particle "
                   "diameters in one (0: always `substeps`).");
  table_params(s, pbf_param_table(), "kernel_scale")
      .param_enum("solve", {"error_target", "fixed"}, "error_target",
                  "error_target: iterate until the mean density error is below max_density_error, between "
                  "min_iterations and max_iterations; fixed: always `iterations`.")
      .param_int("iterations", 4, 1, 1000, "", "Iterations per substep in fixed mode.");
  table_params(s, pbf_param_table());
  s.check = [](const ParamSet& p, const CheckContext& c) {
    const int64_t lo = std::get<int64_t>(p.at("substeps")), hi = std::get<int64_t>(p.at("max_substeps"));
    if (hi < lo)
      throw Error(c.where + ".params.max_substeps: " + std::to_string(hi) + " is below substeps (" +
                  std::to_string(lo) + ")");
  };
  r.add(std::move(s.make<PbfNode>()));
}

}  // namespace eddy::library

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
  p.rest_density = float(c.param_float("rest_density"));
  p.gravity = c.param_vec3f("gravity");
  p.kernel = enum_param(c, "kernel", kKernelPairNames);
  p.kernel_scale = float(c.param_float("kernel_scale"));
  if (c.param_string("solve") == "fixed") {
    p.min_iterations = p.max_iterations = int(c.param_int("iterations"));
    p.max_density_error = 0.0f;
  } else {
    p.min_iterations = int(c.param_int("min_iterations"));
    p.max_iterations = int(c.param_int("max_iterations"));
    p.max_density_error = float(c.param_float("max_density_error"));
  }
  p.epsilon = float(c.param_float("epsilon"));
  p.scorr_k = float(c.param_float("scorr_k"));
  p.scorr_n = float(c.param_float("scorr_n"));
  p.scorr_dq = float(c.param_float("scorr_dq"));
  p.xsph = float(c.param_float("xsph"));
  p.vorticity = float(c.param_float("vorticity"));
  p.wall_density = c.param_bool("wall_density");
  p.reorder_interval = int(c.param_int("reorder_interval"));
  p.max_cfl = float(c.param_float("max_cfl"));
  return p;
}

class PbfNode final : public SolverNode<PbfSolver> {
  std::unique_ptr<PbfSolver> make_solver(const CookContext& ctx) override {
    return make_on_device(ctx, read_params(ctx), make_pbf_solver_cpu, gpu::make_pbf_solver_cuda);
  }

  void advance(CookContext& ctx, double t0, double frame_dt) override {
    const SubstepPolicy policy{int(ctx.param_int("substeps")), int(ctx.param_int("max_substeps")),
                               float(ctx.param_float("cfl"))};
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
    ctx.info(buf);
  }
};

}  // namespace

void register_pbf(Registry& r) {
  const PbfParams d;
  const SubstepPolicy sub;
  NodeSpec s;
  s.type = "PBFSolver";
  s.stateful = true;
  s.describe("Solvers",
             "Position based fluids (Macklin & Mueller 2013): each substep predicts positions under gravity, finds "
             "neighbours, runs Jacobi iterations of the density constraint (lambda with relaxation epsilon, s_corr "
             "tensile correction) with collision projection, updates velocities with wall friction and restitution, "
             "then applies vorticity confinement and XSPH viscosity. At the start frame it outputs the input "
             "particles; frame f continues from frame f - 1. SI units. Reports per frame the mean and max density "
             "error, the iterations used and the max speed, and stops with an error naming the frame when the "
             "simulation becomes unstable.")
      .input("particles", "points", "Initial particles (read at the start frame), with a particle radius.")
      .input("colliders", "colliders", "Collider shapes (optional; any number).", true, true)
      .output("particles", "points",
              "Particles with P, v, density and the input's attributes; an `id` (input order) is added when the "
              "input has none, since the solver reorders particles in memory.")
      .param_int("substeps", sub.min_substeps, 1, 1000, "", "Fewest substeps per frame; dt = 1 / (fps x substeps).")
      .param_int("max_substeps", sub.max_substeps, 1, 1000, "",
                 "Most substeps per frame, when the CFL condition asks for more than `substeps`.")
      .param_float("cfl", sub.cfl, 0.0, 10.0, "diameters",
                   "CFL condition: take enough substeps that the fastest particle moves at most this many particle "
                   "diameters in one (0: always `substeps`).")
      .param_enum("device", {"cpu", "cuda"}, "cpu", "Where the solver runs: cpu (TBB) or cuda (the GPU).")
      .param_float("rest_density", d.rest_density, 1.0, 1e5, "kg/m^3", "Rest density rho0 (water: 1000).")
      .param_vec3("gravity", {d.gravity.x, d.gravity.y, d.gravity.z}, {}, {}, "m/s^2", "Gravity.")
      .param_enum("kernel", enum_names(kKernelPairNames), enum_name(kKernelPairNames, d.kernel),
                  "Smoothing kernels: cubic spline for density and gradient (consistent, the default), or poly6 "
                  "density with spiky gradient (the paper's choice).")
      .param_float("kernel_scale", d.kernel_scale, 1.0, 4.0, "spacings",
                   "Support radius h in particle spacings (2 r); 2 gives about 30 neighbours.")
      .param_enum("solve", {"error_target", "fixed"}, "error_target",
                  "error_target: iterate until the mean density error is below max_density_error, between "
                  "min_iterations and max_iterations; fixed: always `iterations`.")
      .param_int("iterations", 4, 1, 1000, "", "Iterations per substep in fixed mode.")
      .param_int("min_iterations", d.min_iterations, 0, 1000, "", "Fewest iterations per substep (error_target).")
      .param_int("max_iterations", d.max_iterations, 1, 1000, "", "Most iterations per substep (error_target).")
      .param_float("max_density_error", d.max_density_error, 0.001, 100.0, "%",
                   "Target mean compression error (error_target).")
      .param_float("epsilon", d.epsilon, 0.0, 10.0, "",
                   "Relaxation added to the lambda denominator, as a fraction of sum |grad C|^2 of a full "
                   "neighbourhood (resolution independent); softens the constraint.")
      .param_float("scorr_k", d.scorr_k, 0.0, 10.0, "",
                   "Tensile correction strength k of s_corr = -k (W(r)/W(dq))^n, in units of the lambda of a 100 % "
                   "density violation; counters particle clumping at the surface.")
      .param_float("scorr_n", d.scorr_n, 1.0, 16.0, "", "Exponent n of s_corr.")
      .param_float("scorr_dq", d.scorr_dq, 0.01, 0.99, "h", "Reference distance |dq| of s_corr, as a fraction of h.")
      .param_float("xsph", d.xsph, 0.0, 1.0, "", "XSPH viscosity c: blends each velocity towards its neighbours'.")
      .param_float("vorticity", d.vorticity, 0.0, 1000.0, "m/s",
                   "Vorticity confinement epsilon: re-injects the swirl numerical damping removes (0: off).")
      .param_bool("wall_density", d.wall_density,
                  "Colliders contribute the density of a rest-density half-space beyond their surface, so liquid "
                  "at walls is neither sucked in nor stacked (planar approximation of density maps).")
      .param_int("reorder_interval", d.reorder_interval, 0, 1000000, "steps",
                 "Reorder all particle attributes in Z-order every this many steps, for memory locality (0: never).")
      .param_float("max_cfl", d.max_cfl, 0.1, 10000.0, "diameters",
                   "Stop with an error when the fastest particle moves more than this many particle diameters in "
                   "one substep (a blow-up).");
  s.check = [](const ParamSet& p, const CheckContext& c) {
    const int64_t lo = std::get<int64_t>(p.at("substeps")), hi = std::get<int64_t>(p.at("max_substeps"));
    if (hi < lo)
      throw Error(c.where + ".params.max_substeps: " + std::to_string(hi) + " is below substeps (" +
                  std::to_string(lo) + ")");
  };
  r.add(std::move(s.make<PbfNode>()));
}

}  // namespace eddy::library

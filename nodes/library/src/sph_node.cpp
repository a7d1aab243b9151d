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
  p.method = enum_param(c, "method", kSphMethodNames);
  p.rest_density = float(c.param_float("rest_density"));
  p.gravity = c.param_vec3f("gravity");
  p.kernel = enum_param(c, "kernel", kKernelPairNames);
  p.kernel_scale = float(c.param_float("kernel_scale"));
  p.speed_of_sound = float(c.param_float("speed_of_sound"));
  p.expected_speed = float(c.param_float("expected_speed"));
  p.gamma = float(c.param_float("gamma"));
  p.clamp_negative_pressure = c.param_bool("clamp_negative_pressure");
  p.max_density_error = float(c.param_float("max_density_error"));
  p.max_divergence_error = float(c.param_float("max_divergence_error"));
  p.min_iterations = int(c.param_int("min_iterations"));
  p.max_iterations = int(c.param_int("max_iterations"));
  p.divergence_solver = c.param_bool("divergence_solver");
  p.warm_start = c.param_bool("warm_start");
  p.viscosity = float(c.param_float("viscosity"));
  p.xsph = float(c.param_float("xsph"));
  p.walls = enum_param(c, "walls", kSphWallsNames);
  p.boundary_spacing = float(c.param_float("boundary_spacing"));
  p.wall_stiffness = float(c.param_float("wall_stiffness"));
  p.wall_damping = float(c.param_float("wall_damping"));
  p.surface_tension = enum_param(c, "surface_tension", kSurfaceTensionNames);
  p.tension = float(c.param_float("tension"));
  p.color_threshold = float(c.param_float("color_threshold"));
  p.cfl = float(c.param_float("cfl"));
  p.max_dt = float(c.param_float("max_dt"));
  p.reorder_interval = int(c.param_int("reorder_interval"));
  p.max_cfl = float(c.param_float("max_cfl"));
  return p;
}

class SphNode final : public SolverNode<SphSolver> {
  std::unique_ptr<SphSolver> make_solver(const CookContext& ctx) override {
    return make_on_device(ctx, read_params(ctx), make_sph_solver_cpu, gpu::make_sph_solver_cuda);
  }

  void load(CookContext& ctx, const Points& from) override {
    solver_->load(from);
    for (const auto& w : sph_warnings(*solver_, float(ctx.param_float("time_step")))) ctx.warn(w);
  }

  void advance(CookContext& ctx, double t0, double frame_dt) override {
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
    ctx.info(line);
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
  const SphParams d;
  NodeSpec s;
  s.type = "SPHSolver";
  s.stateful = true;
  s.describe("Solvers",
             "Smoothed particle hydrodynamics. wcsph: weakly compressible SPH with the Tait equation of state "
             "p = B((rho/rho0)^gamma - 1), B = rho0 c0^2 / gamma, Monaghan's symmetric pressure force, viscosity "
             "with Mueller et al.'s viscosity-kernel Laplacian, optional XSPH. dfsph: divergence-free SPH (Bender & "
             "Koschier 2017), a density solver and a divergence solver with error targets, as SPlisHSPlasH uses by "
             "default. Walls are boundary particles on the collider surfaces (Akinci et al. 2012) or a "
             "spring-damper layer; surface tension after Akinci et al. 2013 or Mueller et al.'s colour field. The "
             "time step adapts to the CFL, acoustic, viscous and force conditions. At the start frame it outputs the "
             "input particles; frame f continues from frame f - 1. SI units. Stops with an error naming the frame "
             "when the simulation becomes unstable.")
      .input("particles", "points", "Initial particles (read at the start frame), with a particle radius.")
      .input("colliders", "colliders", "Collider shapes (optional; any number).", true, true)
      .output("particles", "points",
              "Particles with P, v, density, pressure and the input's attributes; an `id` (input order) is added "
              "when the input has none, since the solver reorders particles in memory.")
      .param_enum("method", enum_names(kSphMethodNames), enum_name(kSphMethodNames, d.method),
                  "wcsph: weakly compressible (explicit, small steps); dfsph: divergence-free, incompressible to "
                  "max_density_error (larger steps, iterations per step).")
      .param_enum("device", {"cpu", "cuda"}, "cpu", "Where the solver runs: cpu (TBB) or cuda (the GPU).")
      .param_float("time_step", 0.0, 0.0, 1.0, "s",
                   "0: adaptive (CFL, acoustic, viscous and force conditions); otherwise equal steps of at most "
                   "this length.")
      .param_float("cfl", d.cfl, 0.01, 2.0, "diameters",
                   "CFL number: the fastest particle moves at most this many particle diameters per step.")
      .param_float("max_dt", d.max_dt, 1e-5, 1.0, "s", "Longest adaptive step.")
      .param_float("rest_density", d.rest_density, 1.0, 1e5, "kg/m^3", "Rest density rho0 (water: 1000).")
      .param_vec3("gravity", {d.gravity.x, d.gravity.y, d.gravity.z}, {}, {}, "m/s^2", "Gravity.")
      .param_enum("kernel", enum_names(kKernelPairNames), enum_name(kKernelPairNames, d.kernel),
                  "Density and gradient kernels: the cubic spline (the default: a column at rest settles), or poly6 "
                  "density with spiky gradient (Mueller et al. 2003; measured to boil a column at rest under the "
                  "Tait equation).")
      .param_float("kernel_scale", d.kernel_scale, 1.5, 4.0, "spacings",
                   "Support radius h in particle spacings (2 r); 2 gives about 30 neighbours.")
      .param_float("speed_of_sound", d.speed_of_sound, 0.0, 1e4, "m/s",
                   "WCSPH speed of sound c0 (0: ten times expected_speed, so density varies by about 1 %).")
      .param_float("expected_speed", d.expected_speed, 0.0, 1e4, "m/s",
                   "Largest speed the scene should reach (0: the fastest initial particle plus free fall over the "
                   "particles' height and their drop to the nearest collider).")
      .param_float("gamma", d.gamma, 1.0, 10.0, "", "Tait exponent gamma (water: 7).")
      .param_bool("clamp_negative_pressure", d.clamp_negative_pressure,
                  "WCSPH: no negative pressure, so the free surface does not clump (tensile instability).")
      .param_float("max_density_error", d.max_density_error, 1e-4, 100.0, "%",
                   "DFSPH: the density solver iterates until the mean compression is below this.")
      .param_float("max_divergence_error", d.max_divergence_error, 1e-4, 100.0, "%",
                   "DFSPH: the divergence solver iterates until the mean rate of compression over a step is below "
                   "this.")
      .param_int("min_iterations", d.min_iterations, 0, 10000, "", "DFSPH: fewest solver iterations per step.")
      .param_int("max_iterations", d.max_iterations, 1, 10000, "", "DFSPH: most solver iterations per step.")
      .param_bool("divergence_solver", d.divergence_solver, "DFSPH: make velocities divergence-free each step.")
      .param_bool("warm_start", d.warm_start, "DFSPH: start each solve from half the last step's stiffness.")
      .param_float("viscosity", d.viscosity, 0.0, 1000.0, "Pa s",
                   "Dynamic viscosity mu (Mueller et al. 2003's viscosity kernel). Water: 0.001; graphics scenes use "
                   "0.01-1 for calmer or thicker liquids.")
      .param_float("xsph", d.xsph, 0.0, 1.0, "", "XSPH: blends each velocity towards its neighbours' (0: off).")
      .param_enum("walls", enum_names(kSphWallsNames), enum_name(kSphWallsNames, d.walls),
                  "boundary_particles: collider surfaces sampled with particles that add density and pressure "
                  "(Akinci et al. 2012; accurate pressure at walls); spring_damper: a penalty force within one "
                  "particle radius of each collider.")
      .param_float("boundary_spacing", d.boundary_spacing, 0.25, 2.0, "spacings",
                   "Spacing of boundary particles, in particle spacings.")
      .param_float("wall_stiffness", d.wall_stiffness, 1e-4, 100.0, "",
                   "Spring-damper walls: stiffness k = wall_stiffness x (c0 / r)^2.")
      .param_float("wall_damping", d.wall_damping, 0.0, 10.0, "",
                   "Spring-damper walls: damping ratio zeta = c / (2 sqrt(k)); damps motion into the wall only.")
      .param_enum("surface_tension", enum_names(kSurfaceTensionNames), enum_name(kSurfaceTensionNames, d.surface_tension),
                  "akinci2013: cohesion and curvature (Akinci et al. 2013), robust; color_field: sigma kappa n from "
                  "the colour field (Mueller et al. 2003) where |grad c| passes color_threshold.")
      .param_float("tension", d.tension, 0.0, 1e4, "",
                   "Surface tension strength: akinci2013's gamma (about 0.1-5), or color_field's sigma in N/m "
                   "(water: 0.0728).")
      .param_float("color_threshold", d.color_threshold, 0.0, 0.99, "",
                   "color_field: particles whose |grad c| is below this share of a flat surface's are interior and "
                   "get no force.")
      .param_int("reorder_interval", d.reorder_interval, 0, 1000000, "steps",
                 "Reorder all particle attributes in Z-order every this many steps, for memory locality (0: never).")
      .param_float("max_cfl", d.max_cfl, 0.1, 10000.0, "diameters",
                   "Stop with an error when the fastest particle moves more than this many particle diameters in "
                   "one step (a blow-up).");
  r.add(std::move(s.make<SphNode>()));
}

}  // namespace eddy::library

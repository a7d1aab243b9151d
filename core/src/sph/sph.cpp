// Backend-independent parts of the SPH solver: parameter checks, constants
// calibrated on a full lattice neighbourhood, the speed estimate behind the
// default speed of sound, warnings, and the frame driver with its adaptive
// time step and instability checks.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "eddy/core/error.h"
#include "eddy/core/frame_steps.h"
#include "eddy/core/kernels.h"
#include "eddy/core/sph/solver.h"

namespace eddy {

const ParamTable<SphParams>& sph_param_table() {
  static const ParamTable<SphParams> table = [] {
    ParamTable<SphParams> t("SPH");
    t.choice("method", &SphParams::method, kSphMethodNames,
             "wcsph: weakly compressible (explicit, small steps); dfsph: divergence-free, incompressible to "
             "max_density_error (larger steps, iterations per step).")
        .real("cfl", &SphParams::cfl, 0.01, 2.0, "diameters",
              "CFL number: the fastest particle moves at most this many particle diameters per step.")
        .real("max_dt", &SphParams::max_dt, 1e-5, 1.0, "s", "Longest adaptive step.");
    liquid_fields(t,
                  "Density and gradient kernels: the cubic spline (the default: a column at rest settles), or poly6 "
                  "density with spiky gradient (Mueller et al. 2003; measured to boil a column at rest under the "
                  "Tait equation).",
                  1.5)
        .real("speed_of_sound", &SphParams::speed_of_sound, 0.0, 1e4, "m/s",
              "WCSPH speed of sound c0 (0: ten times expected_speed, so density varies by about 1 %).")
        .real("expected_speed", &SphParams::expected_speed, 0.0, 1e4, "m/s",
              "Largest speed the scene should reach (0: the fastest initial particle plus free fall over the "
              "particles' height and their drop to the nearest collider, estimated when the solver loads them: a "
              "frame resumed from the cache estimates it anew from that frame, so set it for a resume that takes "
              "the same time steps).")
        .real("gamma", &SphParams::gamma, 1.0, 10.0, "", "Tait exponent gamma (water: 7).")
        .flag("clamp_negative_pressure", &SphParams::clamp_negative_pressure,
              "WCSPH: no negative pressure, so the free surface does not clump (tensile instability).")
        .real("max_density_error", &SphParams::max_density_error, 1e-4, 100.0, "%",
              "DFSPH: the density solver iterates until the mean compression is below this.")
        .real("max_divergence_error", &SphParams::max_divergence_error, 1e-4, 100.0, "%",
              "DFSPH: the divergence solver iterates until the mean rate of compression over a step is below "
              "this.")
        .integer("min_iterations", &SphParams::min_iterations, 0, 10000, "",
                 "DFSPH: fewest density-solver iterations per step.")
        .integer("min_divergence_iterations", &SphParams::min_divergence_iterations, 0, 10000, "",
                 "DFSPH: fewest divergence-solver iterations per step (1, as in Bender & Koschier 2017 and "
                 "SPlisHSPlasH: more only while the error is above max_divergence_error).")
        .integer("max_iterations", &SphParams::max_iterations, 1, 10000, "",
                 "DFSPH: most iterations per step, of either solver.")
        .flag("divergence_solver", &SphParams::divergence_solver, "DFSPH: make velocities divergence-free each step.")
        .flag("warm_start", &SphParams::warm_start, "DFSPH: start each solve from half the last step's stiffness.")
        .real("viscosity", &SphParams::viscosity, 0.0, 1000.0, "Pa s",
              "Dynamic viscosity mu (Mueller et al. 2003's viscosity kernel). Water: 0.001; graphics scenes use "
              "0.01-1 for calmer or thicker liquids.")
        .real("xsph", &SphParams::xsph, 0.0, 1.0, "", "XSPH: blends each velocity towards its neighbours' (0: off).")
        .choice("walls", &SphParams::walls, kSphWallsNames,
                "boundary_particles: collider surfaces sampled with particles that add density and pressure "
                "(Akinci et al. 2012; accurate pressure at walls); spring_damper: a penalty force within one "
                "particle radius of each collider.")
        .real("boundary_spacing", &SphParams::boundary_spacing, 0.25, 2.0, "spacings",
              "Spacing of boundary particles, in particle spacings.")
        .real("wall_stiffness", &SphParams::wall_stiffness, 1e-4, 100.0, "",
              "Spring-damper walls: stiffness k = wall_stiffness x (c0 / r)^2.")
        .real("wall_damping", &SphParams::wall_damping, 0.0, 10.0, "",
              "Spring-damper walls: damping ratio zeta = c / (2 sqrt(k)); damps motion into the wall only.")
        .choice("surface_tension", &SphParams::surface_tension, kSurfaceTensionNames,
                "akinci2013: cohesion and curvature (Akinci et al. 2013), robust; color_field: sigma kappa n from "
                "the colour field (Mueller et al. 2003) where |grad c| passes color_threshold.")
        .real("tension", &SphParams::tension, 0.0, 1e4, "",
              "Surface tension strength: akinci2013's gamma (about 0.1-5), or color_field's sigma in N/m (water: "
              "0.0728).")
        .real("color_threshold", &SphParams::color_threshold, 0.0, 0.99, "",
              "color_field: particles whose |grad c| is below this share of a flat surface's are interior and get "
              "no force.");
    liquid_guard_fields(t, "step");
    return t;
  }();
  return table;
}

void validate(const SphParams& p) {
  sph_param_table().check(p);
  require_param(p.max_iterations >= p.min_iterations, "SPH", "max_iterations", "must be >= min_iterations");
  require_param(p.max_iterations >= p.min_divergence_iterations, "SPH", "max_iterations",
                "must be >= min_divergence_iterations");
  require_param(p.min_dt > 0 && p.min_dt <= p.max_dt, "SPH", "min_dt", "must be in (0, max_dt] s");
}

float sph_surface_gradient(float s, float h) {
  // Lattice points of the half-space y <= 0 around the origin particle.
  const Poly6 W(h);
  const int m = int(std::ceil(h / s));
  double wsum = 0, gy = 0;
  for (int i = -m; i <= m; ++i)
    for (int j = -m; j <= m; ++j)
      for (int k = -m; k <= m; ++k) {
        const Vec3f r = vec3(float(i) * s, float(j) * s, float(k) * s);
        wsum += W.W(length2(r));
        if (j > 0) continue;  // the half-space below and the origin's own layer
        gy += W.grad(vec3(0.0f) - r).y;
      }
  return float(std::fabs(gy) / wsum);  // volumes 1 / sum W
}

float sph_boundary_depth(float s, float h, float boundary_spacing, KernelPair kernel) {
  const PairKernels W(h, int(kernel));
  const int m = int(std::ceil(h / s)) + 1;
  // What the wall must stand for: the lattice's share beyond a wall half a
  // spacing (one radius) below a particle, as a fraction of a full neighbourhood.
  double full = 0, beyond = 0;
  for (int i = -m; i <= m; ++i)
    for (int j = -m; j <= m; ++j)
      for (int k = -m; k <= m; ++k) {
        const double w = W.W(float((i * i + j * j + k * k) * double(s) * s));
        full += w;
        if (k < 0) beyond += w;
      }
  const double target = beyond / full;
  // What one layer of boundary particles at spacing sb, with Akinci's
  // volumes 1 / sum_k W_bk, gives a particle at height z above it, averaged
  // over where the particle sits above the layer's cells.
  const float sb = boundary_spacing * s;
  const int mb = int(std::ceil(h / sb)) + 1;
  double delta = 0;  // sum_k W_bk within the layer
  for (int i = -mb; i <= mb; ++i)
    for (int j = -mb; j <= mb; ++j) delta += W.W(float((i * i + j * j) * double(sb) * sb));
  auto share = [&](double z) {
    const int offsets = 4;
    double got = 0;
    for (int oi = 0; oi < offsets; ++oi)
      for (int oj = 0; oj < offsets; ++oj) {
        const double ox = sb * (oi + 0.5) / offsets, oy = sb * (oj + 0.5) / offsets;
        for (int i = -mb; i <= mb; ++i)
          for (int j = -mb; j <= mb; ++j) {
            const double dx = i * sb - ox, dy = j * sb - oy;
            got += W.W(float(dx * dx + dy * dy + z * z));
          }
      }
    return got / (offsets * offsets * delta);
  };
  // The share falls with height: bisect for the height that gives the target.
  double lo = 0.5 * s, hi = h;
  if (share(lo) <= target) return 0.0f;
  for (int it = 0; it < 50; ++it) {
    const double mid = 0.5 * (lo + hi);
    (share(mid) > target ? lo : hi) = mid;
  }
  return float(0.5 * (lo + hi) - 0.5 * s);
}

SphConstants sph_constants(const SphParams& p, float radius, float c0) {
  SphConstants c;
  c.r = radius;
  const float spacing = 2.0f * radius;
  c.h = p.kernel_scale * spacing;
  const LatticeSums ls = lattice_sums(spacing, c.h, p.kernel);
  c.kernel = int(p.kernel);
  // A particle inside a lattice of spacing 2r is at rest density exactly.
  c.mass = float(p.rest_density / ls.w_sum);
  c.rho0 = p.rest_density;
  c.inv_rho0 = 1.0f / p.rest_density;
  c.volume0 = float(1.0 / ls.w_sum);
  c.c0 = c0;
  c.gamma = p.gamma;
  c.B = p.rest_density * c0 * c0 / p.gamma;
  c.clamp = p.clamp_negative_pressure ? 1 : 0;
  c.boundary_weight = p.boundary_spacing * p.boundary_spacing;
  c.boundary_depth = sph_boundary_depth(spacing, c.h, p.boundary_spacing, p.kernel);
  c.mu = p.viscosity;
  c.walls = int(p.walls);
  c.spring_k = p.wall_stiffness * (c0 / radius) * (c0 / radius);
  c.spring_c = 2.0f * p.wall_damping * std::sqrt(c.spring_k);
  c.tension_model = int(p.surface_tension);
  c.tension = p.surface_tension == SurfaceTension::None ? 0.0f : p.tension;
  c.color_threshold = p.color_threshold * sph_surface_gradient(spacing, c.h);
  c.xsph = p.xsph;
  const float full = p.kernel_scale / 2.0f;
  c.min_neighbors = 20.0f * full * full * full;
  return c;
}

float sph_estimate_speed(const Points& pts, const std::vector<Collider>& colliders, Vec3f gravity) {
  float v0 = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) v0 = std::max(v0, length(pts.v()[i]));
  const float g = length(gravity);
  if (pts.size() == 0 || g == 0) return v0;
  const Vec3f up = gravity * (-1.0f / g);
  float lo = 3e38f, hi = -3e38f;
  Vec3f lowest = pts.P()[0];
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const float y = dot(pts.P()[i], up);
    if (y < lo) {
      lo = y;
      lowest = pts.P()[i];
    }
    hi = std::max(hi, y);
  }
  // The drop below the lowest particle: its distance to the nearest collider.
  float drop = 0;
  if (!colliders.empty()) {
    drop = 3e38f;
    for (const auto& c : colliders) drop = std::min(drop, collider_sdf(c, lowest, 0.0f).distance);
    drop = std::max(drop, 0.0f);
  }
  return v0 + std::sqrt(2.0f * g * (hi - lo + drop));
}

namespace {
bool same_collider(const Collider& x, const Collider& y) {
  return x.type == y.type && x.inside == y.inside && x.center == y.center && x.rotation.r0 == y.rotation.r0 &&
         x.rotation.r1 == y.rotation.r1 && x.rotation.r2 == y.rotation.r2 && x.size == y.size &&
         x.velocity == y.velocity && x.angular_velocity == y.angular_velocity && x.friction == y.friction &&
         x.restitution == y.restitution && x.body == y.body && x.grid == y.grid && x.grid_velocity == y.grid_velocity && x.grid_time == y.grid_time &&
         x.grid_dims[0] == y.grid_dims[0] && x.grid_dims[1] == y.grid_dims[1] && x.grid_dims[2] == y.grid_dims[2] &&
         x.grid_origin == y.grid_origin && x.grid_dx == y.grid_dx;
}
}  // namespace

bool same_colliders(const std::vector<Collider>& a, const std::vector<Collider>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!same_collider(a[k], b[k])) return false;
  return true;
}

bool same_boundary_samples(const std::vector<Collider>& a, const std::vector<Collider>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const Collider &x = a[k], &y = b[k];
    const bool moving = (x.body || collider_moves(x)) && (y.body || collider_moves(y));
    const bool moved = moving && x.type == y.type && x.inside == y.inside && x.size == y.size &&
                       x.type != ShapeType::Grid && x.type != ShapeType::Plane;
    if (!moved && !same_collider(x, y)) return false;
  }
  return true;
}

std::vector<std::string> sph_warnings(const SphSolver& s, float fixed_dt) {
  std::vector<std::string> out;
  const SphParams& p = s.params();
  if (p.method != SphMethod::Wcsph) return out;
  const float c0 = s.speed_of_sound(), v = s.expected_speed();
  if (v > 0 && c0 < 10.0f * v) {
    std::ostringstream m;
    m.precision(3);
    const float mach = v / c0;
    m << "speed of sound c0 = " << c0 << " m/s is below ten times the expected speed " << v
      << " m/s (Mach " << mach << "; density varies by about Mach^2, over 1 % above Mach 0.1): the liquid will "
      << "compress visibly and may become unstable; raise speed_of_sound (0 picks " << 10.0f * v << " m/s)";
    out.push_back(m.str());
  }
  // The acoustic condition: a sound wave crosses at most 0.4 particle diameters per step.
  const float acoustic = 0.4f * 2.0f * s.particle_radius() / (c0 + v);
  if (fixed_dt > acoustic) {
    std::ostringstream m;
    m.precision(3);
    m << "time step " << fixed_dt << " s exceeds the acoustic limit " << acoustic << " s for c0 = " << c0
      << " m/s (0.4 particle diameters per step): expect the simulation to become unstable";
    out.push_back(m.str());
  }
  return out;
}

SphFrameStats sph_advance_frame(SphSolver& solver, double time, double frame_dt, float fixed_dt, int frame,
                                const SphStepProgress& progress) {
  const SphParams& p = solver.params();
  StepChecks checks;
  checks.cfl_length = 2.0f * solver.particle_radius();
  checks.max_cfl = p.max_cfl;
  checks.min_dt = p.min_dt;
  checks.cfl_hint = "; check the forces, the speed of sound or the time step";
  SphFrameStats f;
  f.min_dt = 3e38f;
  double iter_sum = 0, div_sum = 0, err_sum = 0;
  FrameStepper steps(frame_dt, fixed_dt);
  solver.begin_frame();
  f.steps = advance_frame_steps(solver, steps, time, frame, checks,
                                [&](int step, double dt, const SphStepStats& st, float) {
    f.min_dt = std::min(f.min_dt, float(dt));
    f.max_dt = std::max(f.max_dt, float(dt));
    iter_sum += st.iterations;
    div_sum += st.divergence_iterations;
    err_sum += st.mean_density_error;
    f.max_density_error = std::max(f.max_density_error, st.max_density_error);
    f.max_speed = std::max(f.max_speed, st.max_speed);
    f.projected += st.projected;
    f.projected_pressed += st.projected_pressed;
    if (progress) progress(step, steps.fraction(), st);
  });
  if (f.steps) {
    f.mean_iterations = float(iter_sum / f.steps);
    f.mean_divergence_iterations = float(div_sum / f.steps);
    f.mean_density_error = float(err_sum / f.steps);
  } else {
    f.min_dt = 0;
  }
  return f;
}

}  // namespace eddy

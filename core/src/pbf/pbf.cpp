// Backend-independent parts of the PBF solver: parameter checks, the
// constants calibrated on a full lattice neighbourhood, the wall table, and
// the frame driver with its instability checks.
#include <cmath>
#include <sstream>

#include "eddy/core/error.h"
#include "eddy/core/frame_steps.h"
#include "eddy/core/kernels.h"
#include "eddy/core/pbf/solver.h"

namespace eddy {

const ParamTable<PbfParams>& pbf_param_table() {
  static const ParamTable<PbfParams> table = [] {
    ParamTable<PbfParams> t("PBF");
    liquid_fields(t,
                  "Smoothing kernels: cubic spline for density and gradient (consistent, the default), or poly6 "
                  "density with spiky gradient (the paper's choice).",
                  1.0)
        .integer("min_iterations", &PbfParams::min_iterations, 0, 1000, "",
                 "Fewest iterations per substep (error_target).")
        .integer("max_iterations", &PbfParams::max_iterations, 0, 1000, "",
                 "Most iterations per substep (error_target; 0: density only, no correction).")
        .real("max_density_error", &PbfParams::max_density_error, 0.0, 100.0, "%",
              "Target mean compression error (error_target; 0: always max_iterations).")
        .real("epsilon", &PbfParams::epsilon, 0.0, 10.0, "",
              "Relaxation added to the lambda denominator, as a fraction of sum |grad C|^2 of a full "
              "neighbourhood (resolution independent); softens the constraint.")
        .real("scorr_k", &PbfParams::scorr_k, 0.0, 10.0, "",
              "Tensile correction strength k of s_corr = -k (W(r)/W(dq))^n, in units of the lambda of a 100 % "
              "density violation; counters particle clumping at the surface.")
        .real("scorr_n", &PbfParams::scorr_n, 1.0, 16.0, "", "Exponent n of s_corr.")
        .real("scorr_dq", &PbfParams::scorr_dq, 0.01, 0.99, "h",
              "Reference distance |dq| of s_corr, as a fraction of h.")
        .real("xsph", &PbfParams::xsph, 0.0, 1.0, "", "XSPH viscosity c: blends each velocity towards its neighbours'.")
        .real("vorticity", &PbfParams::vorticity, 0.0, 1000.0, "m/s",
              "Vorticity confinement epsilon: re-injects the swirl numerical damping removes (0: off).")
        .flag("wall_density", &PbfParams::wall_density,
              "Colliders contribute the density of a rest-density half-space beyond their surface, so liquid at "
              "walls is neither sucked in nor stacked (planar approximation of density maps).");
    liquid_guard_fields(t, "substep");
    return t;
  }();
  return table;
}

void validate(const PbfParams& p) {
  pbf_param_table().check(p);
  require_param(p.max_iterations >= p.min_iterations, "PBF", "max_iterations", "must be >= min_iterations");
}

std::vector<float> pbf_wall_table(const PbfParams& p, float radius, int samples) {
  // Integrals over the half-space beyond a wall at distance d, by the
  // trapezoid rule on a fine grid from h downwards. With the slab at depth z
  // and rho = |x - y|, the slab area element is 2 pi rho d rho, so
  //   density:  psi(d) = int_d^h G(z) dz,      G(z) = 2 pi int_z^h W(rho) rho d rho
  //   s_corr:   S(d)   = int_d^h 2 pi z F(z) dz, F(z) = int_z^h (W(rho)/W(dq))^n |W'(rho)| d rho
  // psi is the wall's share of the density; S is the push the wall's virtual
  // particles give through s_corr (per unit s_corr scale), along the normal.
  const float spacing = 2.0f * radius;
  const float h = p.kernel_scale * spacing;
  const KernelPair kernel = p.kernel;
  const Spiky spiky(h);
  const CubicSpline cubic(h);
  const double dq = double(p.scorr_dq) * h;
  const double w_dq = kernel_W(kernel, h, float(dq * dq));
  auto slope = [&](double rho) {  // |dW/drho| of the gradient kernel
    const Vec3f g = kernel == KernelPair::Poly6Spiky ? spiky.grad(vec3(float(rho), 0, 0)) : cubic.grad(vec3(float(rho), 0, 0));
    return std::fabs(double(g.x));
  };
  const int fine = 4096;
  const double dz = double(h) / fine;
  std::vector<double> G(fine + 1, 0.0), psi(fine + 1, 0.0), F(fine + 1, 0.0), S(fine + 1, 0.0);
  auto gfun = [&](double z) { return kernel_W(kernel, h, float(z * z)) * z; };
  auto ffun = [&](double z) { return std::pow(kernel_W(kernel, h, float(z * z)) / w_dq, double(p.scorr_n)) * slope(z); };
  for (int k = fine - 1; k >= 0; --k) {
    const double z0 = k * dz, z1 = (k + 1) * dz;
    G[k] = G[k + 1] + 2.0 * M_PI * 0.5 * (gfun(z0) + gfun(z1)) * dz;
    psi[k] = psi[k + 1] + 0.5 * (G[k] + G[k + 1]) * dz;
    F[k] = F[k + 1] + 0.5 * (ffun(z0) + ffun(z1)) * dz;
    S[k] = S[k + 1] + 2.0 * M_PI * 0.5 * (z0 * F[k] + z1 * F[k + 1]) * dz;
  }
  // Calibration: a lattice layer at one radius from the wall must sit at rest
  // density exactly, as if the lattice continued beyond the wall. The
  // continuous half-space over-counts that (by 2.6 % for poly6 at h = 2
  // spacings, 3.8 % for the cubic spline), which would push liquid off every
  // wall, so the tables are scaled to the lattice's missing share at d = r.
  const LatticeSums full = lattice_sums(spacing, h, kernel);
  const int m = static_cast<int>(std::ceil(h / spacing));
  double beyond = 0;  // lattice points on the far side of a wall half a spacing below the origin
  for (int i = -m; i <= m; ++i)
    for (int j = -m; j <= m; ++j)
      for (int k = -m - 1; k < 0; ++k)
        beyond += kernel_W(kernel, h, float((i * i + j * j + k * k) * double(spacing) * spacing));
  const double target = beyond / full.w_sum;
  auto at = [&](const std::vector<double>& v, double d) {
    const double u = d / dz;
    const int k = std::min(fine - 1, int(u));
    return v[k] * (1 - (u - k)) + v[k + 1] * (u - k);
  };
  const double psi_r = at(psi, 0.5 * spacing);
  const double scale = psi_r > 0 ? target / psi_r : 1.0;
  std::vector<float> table(size_t(samples) * 3);
  for (int s = 0; s < samples; ++s) {
    const double d = double(h) * s / (samples - 1);
    table[3 * s] = float(scale * at(psi, d));
    table[3 * s + 1] = float(-scale * at(G, d));
    table[3 * s + 2] = float(scale * at(S, d));
  }
  return table;
}

PbfConstants pbf_constants(const PbfParams& p, float radius) {
  PbfConstants c;
  c.r = radius;
  const float spacing = 2.0f * radius;
  c.h = p.kernel_scale * spacing;
  c.kernel = static_cast<int>(p.kernel);
  const LatticeSums ls = lattice_sums(spacing, c.h, p.kernel);
  // A particle inside a lattice of spacing 2r is at rest density exactly.
  c.mass = static_cast<float>(p.rest_density / ls.w_sum);
  c.inv_rho0 = 1.0f / p.rest_density;
  c.volume0 = static_cast<float>(1.0 / ls.w_sum);
  const double grad_norm = double(c.volume0) * c.volume0 * ls.grad2_sum;  // sum |grad C|^2, 1/m^2
  c.eps_abs = static_cast<float>(p.epsilon * grad_norm);
  c.scorr_scale = static_cast<float>(p.scorr_k / grad_norm);
  c.scorr_n = p.scorr_n;
  const float dq = p.scorr_dq * c.h;
  c.scorr_inv_wdq = static_cast<float>(1.0 / kernel_W(p.kernel, c.h, dq * dq));
  c.wall_density = p.wall_density ? 1 : 0;
  c.wall_samples = 65;
  c.wall_inv_step = float(c.wall_samples - 1) / c.h;
  return c;
}

int pbf_substeps(const SubstepPolicy& policy, float max_speed, float gravity, double frame_dt, float radius) {
  if (policy.min_substeps < 1) throw Error("PBF: substeps must be >= 1");
  if (policy.max_substeps < policy.min_substeps) throw Error("PBF: max_substeps must be >= substeps");
  int n = policy.min_substeps;
  if (policy.cfl > 0 && radius > 0) {
    const double travel = (double(max_speed) + double(gravity) * frame_dt) * frame_dt;
    const double per_step = double(policy.cfl) * 2.0 * radius;
    n = std::max(n, int(std::ceil(travel / per_step)));
  }
  return std::min(n, policy.max_substeps);
}

PbfFrameStats pbf_advance_frame(PbfSolver& solver, double time, double frame_dt, const SubstepPolicy& policy,
                                int frame, float particle_radius, const SubstepProgress& progress) {
  const int substeps =
      pbf_substeps(policy, solver.max_speed(), length(solver.params().gravity), frame_dt, particle_radius);
  StepChecks checks;
  checks.step_name = "substep";
  checks.cfl_length = 2.0f * particle_radius;
  checks.max_cfl = solver.params().max_cfl;
  checks.cfl_hint = "; raise substeps or check the forces";
  PbfFrameStats f;
  double iter_sum = 0, err_sum = 0;
  FrameStepper steps = FrameStepper::equal(frame_dt, substeps);
  advance_frame_steps(solver, steps, time, frame, checks, [&](int s, double, const PbfStepStats& st, float cfl) {
    f.substeps = s;
    iter_sum += st.iterations;
    err_sum += st.mean_density_error;
    f.max_density_error = std::max(f.max_density_error, st.max_density_error);
    f.max_speed = std::max(f.max_speed, st.max_speed);
    f.max_cfl = std::max(f.max_cfl, cfl);
    if (progress) progress(s, substeps, st);
  });
  f.mean_iterations = static_cast<float>(iter_sum / substeps);
  f.mean_density_error = static_cast<float>(err_sum / substeps);
  return f;
}

}  // namespace eddy

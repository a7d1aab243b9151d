// Backend-independent parts of the MPM solver: material names, parameter
// checks, constants, and the frame driver with its substeps and
// instability checks.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "eddy/core/error.h"
#include "eddy/core/frame_steps.h"
#include "eddy/core/mpm/solver.h"

namespace eddy {

namespace {

void require(bool ok, const std::string& name, const std::string& what) { require_param(ok, "MPM", name, what); }

}  // namespace

const char* to_string(MpmMaterial m) { return enum_name(kMpmMaterialNames, m); }

MpmMaterial mpm_material_from_name(std::string_view name, const std::string& where) {
  if (const auto m = enum_from_name(kMpmMaterialNames, name)) return *m;
  throw Error(where + ": unknown material '" + std::string(name) + "'; valid materials are water, jelly, snow, sand");
}

void mpm_lame(const MpmMaterialParams& m, float& mu, float& lambda) {
  mu = m.youngs_modulus / (2.0f * (1.0f + m.poisson_ratio));
  lambda = m.youngs_modulus * m.poisson_ratio / ((1.0f + m.poisson_ratio) * (1.0f - 2.0f * m.poisson_ratio));
}

float mpm_grid_spacing(const MpmParams& p, float radius) {
  return p.dx > 0 ? p.dx : 2.0f * radius * std::cbrt(p.particles_per_cell);
}

void validate(const MpmParams& p) {
  require(p.dx >= 0, "dx", "must be >= 0 m (0: from the particle radius and particles_per_cell)");
  require(p.particles_per_cell >= 1 && p.particles_per_cell <= 64, "particles_per_cell", "must be in [1, 64]");
  require(p.flip_ratio >= 0 && p.flip_ratio <= 1, "flip_ratio", "must be in [0, 1]");
  require(p.domain_max.x > p.domain_min.x && p.domain_max.y > p.domain_min.y && p.domain_max.z > p.domain_min.z,
          "domain", "the maximum corner must be above the minimum on every axis");
  require(p.domain_friction >= 0, "domain_friction", "must be >= 0");
  for (int m = 0; m < kMpmMaterialCount; ++m) {
    const MpmMaterialParams& q = p.materials[m];
    const std::string name = kMpmMaterialNames[m].name;
    require(q.density > 0, name + "_density", "must be > 0 kg/m^3");
    if (m == int(MpmMaterial::Water)) {
      require(q.bulk_modulus > 0, name + "_bulk_modulus", "must be > 0 Pa");
      require(q.viscosity >= 0, name + "_viscosity", "must be >= 0 Pa s");
      continue;
    }
    require(q.youngs_modulus > 0, name + "_youngs_modulus", "must be > 0 Pa");
    require(q.poisson_ratio >= 0 && q.poisson_ratio < 0.5f, name + "_poisson_ratio", "must be in [0, 0.5)");
    if (m == int(MpmMaterial::Snow)) {
      require(q.critical_compression > 0 && q.critical_compression < 1, "snow_critical_compression",
              "must be in (0, 1)");
      require(q.critical_stretch > 0, "snow_critical_stretch", "must be > 0");
      require(q.hardening >= 0, "snow_hardening", "must be >= 0");
    }
    if (m == int(MpmMaterial::Sand))
      require(q.friction_angle > 0 && q.friction_angle < 90, "sand_friction_angle", "must be in (0, 90) degrees");
  }
  require(p.cfl > 0 && p.cfl <= 1, "cfl", "must be in (0, 1] cells");
  require(p.max_dt > 0, "max_dt", "must be > 0 s");
  require(p.min_dt > 0 && p.min_dt <= p.max_dt, "min_dt", "must be in (0, max_dt]");
  require(p.max_cfl > 0, "max_cfl", "must be > 0 cells");
  require(p.reorder_interval >= 0, "reorder_interval", "must be >= 0");
  require(p.max_grid_bytes >= 0, "max_grid_bytes", "must be >= 0 (0: half the physical memory)");
}

MpmConstants mpm_constants(const MpmParams& p, float radius) {
  MpmConstants c;
  c.dx = mpm_grid_spacing(p, radius);
  c.inv_dx = 1.0f / c.dx;
  const float spacing = 2.0f * radius;
  c.volume = spacing * spacing * spacing;
  for (int m = 0; m < kMpmMaterialCount; ++m) {
    c.mass[m] = p.materials[m].density * c.volume;
    mpm_lame(p.materials[m], c.mu[m], c.lambda[m]);
  }
  c.bulk = p.materials[0].bulk_modulus;
  c.viscosity = p.materials[0].viscosity;
  const MpmMaterialParams& snow = p.materials[int(MpmMaterial::Snow)];
  c.theta_c = snow.critical_compression;
  c.theta_s = snow.critical_stretch;
  c.hardening = snow.hardening;
  const float phi = p.materials[int(MpmMaterial::Sand)].friction_angle * float(M_PI) / 180.0f;
  const float sp = std::sin(phi);
  c.sand_alpha = std::sqrt(2.0f / 3.0f) * 2.0f * sp / (3.0f - sp);
  c.transfer = int(p.transfer);
  c.flip = p.flip_ratio;
  c.boundary = int(p.boundary);
  c.domain_friction = p.domain_friction;
  c.domain_lo = p.domain_min;
  c.domain_hi = p.domain_max;
  c.gravity = p.gravity;
  return c;
}

MpmFrameStats mpm_advance_frame(MpmSolver& solver, double time, double frame_dt, float fixed_dt, int frame,
                                const MpmStepProgress& progress) {
  const MpmParams& p = solver.params();
  StepChecks checks;
  checks.step_name = "substep";
  checks.cfl_length = solver.dx();
  checks.cfl_unit = "cells";
  checks.max_cfl = p.max_cfl;
  checks.min_dt = p.min_dt;
  checks.nonfinite_what = "position, velocity or deformation gradient";
  checks.cfl_hint = "; stiffer materials need a smaller cfl or max_dt";
  MpmFrameStats f;
  f.min_dt = 3e38f;
  FrameStepper steps(frame_dt, fixed_dt);
  f.steps = advance_frame_steps(solver, steps, time, frame, checks,
                                [&](int step, double dt, const MpmStepStats& st, float) {
    f.min_dt = std::min(f.min_dt, float(dt));
    f.max_dt = std::max(f.max_dt, float(dt));
    f.max_speed = std::max(f.max_speed, st.max_speed);
    f.grid_blocks = st.grid_blocks;
    if (progress) progress(step, steps.fraction(), st);
  });
  if (!f.steps) f.min_dt = 0;
  return f;
}

}  // namespace eddy

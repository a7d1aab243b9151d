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

const ParamTable<MpmParams>& mpm_param_table() {
  static const ParamTable<MpmParams> table = [] {
    ParamTable<MpmParams> t("MPM");
    // A field of material m.
    auto of = [](MpmMaterial m, float MpmMaterialParams::*f) {
      return [m, f](MpmParams& p) -> float& { return p.materials[int(m)].*f; };
    };
    using M = MpmMaterialParams;
    constexpr MpmMaterial water = MpmMaterial::Water, jelly = MpmMaterial::Jelly, snow = MpmMaterial::Snow,
                          sand = MpmMaterial::Sand;
    t.real("dx", &MpmParams::dx, 0.0, 100.0, "m",
           "Grid spacing (0: from the particle radius and particles_per_cell, dx = 2r ppc^(1/3)).")
        .real("particles_per_cell", &MpmParams::particles_per_cell, 1.0, 64.0, "",
              "Particles per grid cell when dx is 0 (8: dx is twice the particle spacing).")
        .vector("gravity", &MpmParams::gravity, "m/s^2", "Gravity.")
        .choice("transfer", &MpmParams::transfer, kMpmTransferNames,
                "apic: affine particle-in-cell (conserves angular momentum, little dissipation); pic: velocities "
                "only (dissipative); flip: a FLIP/PIC blend (lively, noisier).")
        .real("flip_ratio", &MpmParams::flip_ratio, 0.0, 1.0, "", "flip: the share of FLIP in the blend.")
        .choice("boundary", &MpmParams::boundary, kMpmBoundaryNames,
                "How colliders and the domain walls act: separate (material may leave a wall; Coulomb friction), "
                "slip (no normal motion) or sticky (the material moves with the wall).")
        .real("domain_friction", &MpmParams::domain_friction, 0.0, 10.0, "", "Coulomb friction of the domain walls.")
        .real("water_density", of(water, &M::density), 1.0, 1e5, "kg/m^3", "Water: rest density.")
        .real("water_bulk_modulus", of(water, &M::bulk_modulus), 1.0, 1e10, "Pa",
              "Water: bulk modulus K of the equation of state (Kirchhoff stress K J (J - 1)); 1e6 gives a sound "
              "speed of 32 m/s, ample for splashes of a few m/s.")
        .real("water_viscosity", of(water, &M::viscosity), 0.0, 1e4, "Pa s",
              "Water: dynamic viscosity (0: inviscid; real water's 0.001 is below what the grid resolves; 1-10 for "
              "honey-like liquids).");
    // The elastic constants of a solid material: "<key>_density",
    // "<key>_youngs_modulus", "<key>_poisson_ratio", each documented after
    // "<Label>: ".
    auto elastic = [&](MpmMaterial m, const std::string& key, const std::string& label, const std::string& density,
                       const std::string& youngs, const std::string& poisson) -> ParamTable<MpmParams>& {
      return t.real(key + "_density", of(m, &M::density), 1.0, 1e5, "kg/m^3", label + ": " + density)
          .real(key + "_youngs_modulus", of(m, &M::youngs_modulus), 1.0, 1e10, "Pa", label + ": " + youngs)
          .real(key + "_poisson_ratio", of(m, &M::poisson_ratio), 0.0, 0.49, "", label + ": " + poisson);
    };
    elastic(jelly, "jelly", "Jelly", "rest density.", "Young's modulus E (fixed corotated elasticity).",
            "Poisson's ratio.");
    elastic(snow, "snow", "Snow", "rest density (Stomakhin et al. 2013: 400).",
            "initial Young's modulus E0 (Stomakhin et al. 2013: 1.4e5).", "Poisson's ratio (0.2).")
        .real("snow_critical_compression", of(snow, &M::critical_compression), 1e-4, 0.99, "",
              "Snow: theta_c, compression beyond which it deforms plastically (2.5e-2).")
        .real("snow_critical_stretch", of(snow, &M::critical_stretch), 1e-4, 10.0, "",
              "Snow: theta_s, stretch beyond which it deforms plastically (7.5e-3).")
        .real("snow_hardening", of(snow, &M::hardening), 0.0, 100.0, "",
              "Snow: hardening xi; moduli scale by exp(xi (1 - Jp)) as it is compacted (10).");
    elastic(sand, "sand", "Sand", "rest density (2200).", "Young's modulus (Klar et al. 2016: 3.537e5).",
            "Poisson's ratio (0.3).")
        .real("sand_friction_angle", of(sand, &M::friction_angle), 1.0, 89.0, "deg",
              "Sand: internal friction angle of the Drucker-Prager cone; a pile settles near this slope.")
        .real("cfl", &MpmParams::cfl, 0.01, 1.0, "cells", "Substep length as a share of dx / (wave speed + max speed).")
        .real("max_dt", &MpmParams::max_dt, 1e-6, 1.0, "s", "Longest substep.")
        .real("max_cfl", &MpmParams::max_cfl, 0.1, 100.0, "cells",
              "Stop with an error when the fastest particle moves more than this many cells in one substep.")
        .integer("reorder_interval", &MpmParams::reorder_interval, 0, 1000000, "substeps",
                 "Reorder particles in memory by grid block every this many substeps (0: never).");
    return t;
  }();
  return table;
}

void validate(const MpmParams& p) {
  mpm_param_table().check(p);
  require(p.domain_max.x > p.domain_min.x && p.domain_max.y > p.domain_min.y && p.domain_max.z > p.domain_min.z,
          "domain", "the maximum corner must be above the minimum on every axis");
  require(p.min_dt > 0 && p.min_dt <= p.max_dt, "min_dt", "must be in (0, max_dt]");
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

std::vector<Collider> MpmSolver::own_walls() const {
  const MpmParams& p = params();
  Collider c;
  c.type = ShapeType::Box;
  c.inside = 1;
  c.center = (p.domain_min + p.domain_max) * 0.5f;
  c.size = (p.domain_max - p.domain_min) * 0.5f;
  c.friction = p.domain_friction;
  return {c};
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

// MPMSolver: the MLS-MPM solver of core/ as a stateful node, and
// MPMMaterial, which sets the `material` attribute it reads.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "eddy/core/mpm/mpm.h"
#include "eddy/gpu/gpu.h"
#include "eddy/graph/node.h"
#include "library.h"

namespace eddy::library {

namespace {

MpmParams read_params(const CookContext& c) {
  MpmParams p;
  read_table_params(c, mpm_param_table(), p);
  const Vec3f center = c.param_vec3f("domain_center"), size = c.param_vec3f("domain_size");
  p.domain_min = center - size * 0.5f;
  p.domain_max = center + size * 0.5f;
  p.max_grid_bytes = c.param_float("max_grid_memory") * 1e9;
  return p;
}

class MpmNode final : public LiquidSolverNode<MpmSolver> {
  std::unique_ptr<MpmSolver> make_solver(const CookContext& ctx) override {
    return make_on_device(ctx, read_params(ctx), make_mpm_solver_cpu, gpu::make_mpm_solver_cuda);
  }

  void retune(const CookContext& ctx) override { solver_->retune(read_params(ctx)); }

  void load(CookContext& ctx, const Points& from) override {
    const std::string& mat = ctx.param_string("material");
    const bool use_attr = mat == "from_attribute";
    const MpmMaterial all = use_attr ? MpmMaterial::Water : mpm_material_from_name(mat, ctx.where() + ".material");
    if (ctx.previous() && !from.has("F0"))
      ctx.warn("resuming from a frame without the solver state (store_state was off): elastic materials restart "
               "from rest");
    if (!use_attr && from.has("material")) {  // one material for all overrides the attribute
      Points copy(from);
      copy.remove("material");
      solver_->load(copy, all);
    } else {
      solver_->load(from, all);
    }
    if (!ctx.previous() && bodies_.bodies()) {
      const int32_t* ids = use_attr ? from.get_int("material") : nullptr;
      bool water = !use_attr ? all == MpmMaterial::Water : !ids;
      for (std::size_t i = 0; ids && !water && i < from.size(); ++i) water = ids[i] == int32_t(MpmMaterial::Water);
      if (water) warn_small_bodies(ctx, *bodies_.bodies());
    }
    if (solver_->dropped() > 0)
      ctx.warn(std::to_string(solver_->dropped()) + " particle(s) outside the domain were left out");
    const float ppc = std::pow(solver_->dx(), 3.0f) / solver_->particle_volume();
    if (ppc < 1.0f) {
      std::ostringstream m;
      m.precision(3);
      m << "dx = " << solver_->dx() << " m holds " << ppc
        << " particles per cell; MPM needs several (8 is usual) or the material tears apart";
      ctx.warn(m.str());
    }
  }

  // Bodies under eight cells across float high in MPM water and move in it
  // as through a thick liquid (docs/architecture.md, "Coupling"): named at
  // the start frame.
  void warn_small_bodies(CookContext& ctx, const Bodies& b) const {
    const double dx = solver_->dx();
    for (std::size_t i = 0; i < b.size(); ++i) {
      const BodyGeometry& g = b.geometry[i];
      const double across = g.shape == BodyShape::Box    ? 2.0 * g.half.minCoeff()
                            : g.shape == BodyShape::Mesh ? (g.mesh->hi - g.mesh->lo).minCoeff()
                                                         : 2.0 * g.radius;
      if (across >= 8.0 * dx) continue;
      std::ostringstream m;
      m.precision(3);
      m << "body '" << b.name[i] << "' is " << across / dx << " cells across at dx = " << dx
        << " m: in MPM water a body under 8 cells floats high and moves as through a thick liquid (use a finer "
           "dx, or PBFSolver or SPHSolver for buoyancy)";
      ctx.warn(m.str());
    }
  }

  void advance(CookContext& ctx, double t0, double frame_dt) override {
    // Linked bodies name the frame in their errors; their speed counts in
    // the substeps' CFL bound through the solver's partner (max_speed).
    bodies_.begin_frame(ctx.frame());
    const MpmFrameStats st = mpm_advance_frame(*solver_, t0, frame_dt, float(ctx.param_float("time_step")),
                                               ctx.frame(), [&](int s, double fraction, const MpmStepStats& ss) {
                                                 char buf[96];
                                                 std::snprintf(buf, sizeof buf, "substep %d, dt %.2e s", s, ss.dt);
                                                 step_progress(ctx, fraction, buf);
                                               });
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%zu particles, dx %.4g m, %d substeps (dt %.2e..%.2e s), %u grid blocks, max speed %.3f m/s",
                  solver_->size(), double(solver_->dx()), st.steps, st.min_dt, st.max_dt, st.grid_blocks,
                  st.max_speed);
    ctx.info(buf + bodies_.info());
  }

  void store(const CookContext& ctx, Points& out) const override { solver_->store(out, ctx.param_bool("store_state")); }
};

class MaterialNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    auto pts = std::make_shared<Points>(*ctx.input<Points>("particles"));
    const MpmMaterial m = mpm_material_from_name(ctx.param_string("material"), ctx.where() + ".material");
    pts->add("material", AttribType::Int);
    int32_t* mat = pts->get_int("material");
    for (std::size_t i = 0; i < pts->size(); ++i) mat[i] = int32_t(m);
    ctx.output_shared<Points>("particles", pts);
  }
};

}  // namespace

void register_mpm(Registry& r) {
  {
    std::vector<std::string> material_items = enum_names(kMpmMaterialNames);
    material_items.insert(material_items.begin(), "from_attribute");
    NodeSpec s = solver_spec(
        "MPMSolver",
        "Material point method: MLS-MPM (Hu et al. 2018) with APIC transfers (Jiang et al. 2015) on quadratic "
        "B-splines over a sparse grid, for water, jelly, snow and sand, also mixed in one simulation. Each "
        "particle's material comes from its integer `material` attribute (0 water, 1 jelly, 2 snow, 3 sand; set by "
        "MPMMaterial) or from `material`. Water follows a J-based equation of state, jelly fixed corotated "
        "elasticity, snow Stomakhin et al. 2013's plasticity with hardening, sand Drucker-Prager plasticity in "
        "Hencky strain (Klar et al. 2016). Colliders act on the grid nodes where the material touches them (its "
        "volume fraction and theirs overfill the node), sticky, slip or separate with their friction; the domain box's faces are walls, and only blocks of the grid near particles are allocated. "
        "A box container's faces each hold the material at its edges and corners, and a particle carried past "
        "any collider's surface is put back on it, so nothing leaves a tank. "
        "Substeps adapt to the CFL and elastic wave speed. SI units. Stops with an error naming the frame when "
        "the simulation becomes unstable. Rigid bodies linked into `bodies` are pushed by the material and push "
        "it back: each grid node a body's surface holds gives the body the node's change of momentum. Sand bears "
        "them (a stone-like box dropped on a bed rests a few millimetres into it); the domain box's faces are "
        "their walls too. In water a body wants a fine grid, eight "
        "cells or more across (the node warns below that): a box of half the water's density, 12 x 8 x 12 cells, "
        "floats within 8 % of its draft without friction, while the default friction 0.5 holds it up to a quarter "
        "high where it stops; at 6 x 4 x 6 cells it moves as through a thick liquid and floats high (0.4 of its "
        "draft after 3 s, still sinking). For buoyancy to "
        "the percent use PBFSolver or SPHSolver.",
        "Particles with P, v, material, J (volume ratio) and the input's attributes; with store_state also "
        "the deformation gradient F (rows F0, F1, F2), the affine matrix C (C0..C2) and Jp.");
    CoupledBodies::spec(s, "material");
    s.param_enum("material", material_items, "from_attribute",
                 "from_attribute: each particle's `material` attribute (water where the input has none); otherwise "
                 "one material for every particle.");
    table_params(s, mpm_param_table(), "boundary")
        .param_vec3("domain_center", {0.0, 1.0, 0.0}, {}, {}, "m", "Centre of the simulation domain.")
        .param_vec3("domain_size", {4.0, 4.0, 4.0}, 1e-6, {}, "m",
                    "Edge lengths of the domain; its faces are walls. Particles outside it at the start are left "
                    "out. Only the grid near particles is allocated, so a large domain costs little.");
    table_params(s, mpm_param_table(), "sand_friction_angle")
        .param_float("time_step", 0.0, 0.0, 1.0, "s",
                     "0: adaptive substeps (CFL and elastic wave speed); otherwise equal substeps of at most this.");
    table_params(s, mpm_param_table())
        .param_float("max_grid_memory", 0.0, 0.0, 1e6, "GB",
                     "Refuse a dx whose grid would need more memory than this (0: half this machine's memory).")
        .param_bool("store_state", true,
                    "Write F, C and Jp on the output particles, so the solver resumes exactly from a cached frame; "
                    "off: lighter output, and a resume restarts elastic materials from rest.");
    s.steps_animations = true;
    r.add(std::move(s.make<MpmNode>()));
  }
  {
    NodeSpec s("MPMMaterial", "Solvers",
               "Sets the integer `material` attribute that MPMSolver reads (0 water, 1 jelly, 2 snow, 3 sand) on "
               "every input particle; merge several with MergePoints for a mixed simulation.");
    s.input("particles", "points", "Particles.")
        .output("particles", "points", "The particles with `material` set.")
        .param_enum("material", kMpmMaterialNames, MpmMaterial::Water, "The material.");
    r.add(std::move(s.make<MaterialNode>()));
  }
}

}  // namespace eddy::library

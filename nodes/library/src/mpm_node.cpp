// MPMSolver: the MLS-MPM solver of core/ as a stateful node, and the nodes
// that prepare its particles: MPMMaterial (sets the `material` attribute)
// and ParticlesFromMesh (fills a closed mesh with particles: a jelly bunny,
// a snowball).
#include <cmath>
#include <cstdio>
#include <sstream>

#include "eddy/core/io.h"
#include "eddy/core/mat3.h"
#include "eddy/core/mesh.h"
#include "eddy/core/mpm/mpm.h"
#include "eddy/gpu/gpu.h"
#include "eddy/core/mesh_sdf.h"
#include "eddy/graph/node.h"
#include "eddy/surfacing/surfacing.h"
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

class MpmNode final : public SolverNode<MpmSolver> {
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

  void advance(CookContext& ctx, double t0, double frame_dt) override {
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
    ctx.info(buf);
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

class FromMeshNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto mesh = ctx.input<Mesh>("mesh");
    require_closed(*mesh, ctx.where() + ": input 'mesh'");
    const double r = ctx.param_float("particle_radius");
    const Vec3f center = ctx.param_vec3f("center"), vel = ctx.param_vec3f("velocity");
    const Bounds3 bounds = mesh_bounds(*mesh);
    const Vec3f lo = bounds.lo, hi = bounds.hi;
    const double spacing = 2.0 * r;
    int64_t n[3];
    double count = 1;
    for (int a = 0; a < 3; ++a) {
      n[a] = int64_t(std::floor((at(hi, a) - at(lo, a)) / spacing)) + 1;
      count *= double(n[a]);
    }
    if (count > 2.0e9 || count * 512.0 > physical_memory_bytes()) {
      std::ostringstream m;
      m << ctx.where() << ": particle_radius " << r << " m fills the mesh's bounding box with " << count
        << " lattice points, more than this machine can simulate; raise particle_radius";
      throw Error(m.str());
    }
    // The mesh's signed distance, sampled at half the spacing, decides inside.
    const SampledSdf sdf = mesh_to_sdf(*mesh, r, 2.0 * r, ctx.threads());
    const Collider c = grid_collider(sdf);
    Points pts;
    pts.radius = float(r);
    std::vector<Vec3f> inside;
    const Vec3f start = (lo + hi) * 0.5f - vec3(float((n[0] - 1) * spacing), float((n[1] - 1) * spacing),
                                                float((n[2] - 1) * spacing)) * 0.5f;
    for (int64_t z = 0; z < n[2]; ++z)
      for (int64_t y = 0; y < n[1]; ++y)
        for (int64_t x = 0; x < n[0]; ++x) {
          const Vec3f p = start + vec3(float(x * spacing), float(y * spacing), float(z * spacing));
          if (collider_sdf(c, p, 0.0f).distance < 0.0f) inside.push_back(p + center);
        }
    pts.resize(inside.size());
    pts.add("id", AttribType::Int);
    for (std::size_t i = 0; i < inside.size(); ++i) {
      pts.P()[i] = inside[i];
      pts.v()[i] = vel;
      pts.get_int("id")[i] = int32_t(i);
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "%zu particles inside the mesh (spacing %.4g m)", pts.size(), spacing);
    ctx.info(buf);
    ctx.output("particles", std::move(pts));
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
        "Substeps adapt to the CFL and elastic wave speed. SI units. Stops with an error naming the frame when "
        "the simulation becomes unstable.",
        "Particles with P, v, material, J (volume ratio) and the input's attributes; with store_state also "
        "the deformation gradient F (rows F0, F1, F2), the affine matrix C (C0..C2) and Jp.");
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
  {
    NodeSpec s("ParticlesFromMesh", "Emitters",
               "Fills a closed mesh (from ReadMesh) with particles on a cubic lattice of spacing 2 x particle_radius: "
               "the lattice points inside the mesh, decided by its signed distance. Adds `id`.");
    s.input("mesh", "mesh", "A closed mesh.")
        .output("particles", "points", "Particles with P, v and id; radius = particle_radius.")
        .param_vec3("center", {0.0, 0.0, 0.0}, {}, {}, "m", "Offset added to the mesh's positions.")
        .param_float("particle_radius", 0.01, 1e-4, 10.0, "m", "Particle radius r; the lattice spacing is 2r.")
        .param_vec3("velocity", {0.0, 0.0, 0.0}, {}, {}, "m/s", "Initial velocity of every particle.");
    r.add(std::move(s.make<FromMeshNode>()));
  }
}

}  // namespace eddy::library

// The documented reconstruction pipeline as nodes:
//   PrimToVDBPointDataGrid -> SmoothLiquidSDF -> SDFToPrim
// Each node adapts graph values to surfacing/ and reports what it made.
#include <chrono>
#include <cstdio>

#include "eddy/core/io.h"
#include "eddy/graph/node.h"
#include "eddy/surfacing/surfacing.h"
#include "library.h"

namespace eddy::library {

namespace {

// The particles of a node that takes either VDB points or particles.
std::shared_ptr<const Points> particles_in(CookContext& ctx) {
  const bool has_vdb = ctx.input_count("vdb") > 0, has_pts = ctx.input_count("particles") > 0;
  if (has_vdb == has_pts)
    throw Error(has_vdb ? "connect either 'vdb' or 'particles', not both"
                        : "no input: connect VDB points to 'vdb' (PrimToVDBPointDataGrid) or particles to 'particles'");
  if (has_pts) return ctx.input<Points>("particles");
  const auto vols = ctx.input<Volumes>("vdb");
  const std::string name = ctx.param_string("pointsGrid");
  for (const auto& g : vols->grids)
    if (g.grid_class() == GridClass::Points && (name.empty() || g.name() == name))
      return std::make_shared<const Points>(vdb_to_points(g));
  std::string have;
  for (const auto& g : vols->grids) have += (have.empty() ? "" : ", ") + ("'" + g.name() + "' (" + to_string(g.grid_class()) + ")");
  throw Error("input 'vdb' holds no points grid" + (name.empty() ? std::string() : " named '" + name + "'") +
              (have.empty() ? std::string(" (it is empty)") : "; it has " + have));
}

class PointsToVdbNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto pts = ctx.input<Points>("particles");
    double dx = ctx.param_float("Dx");
    if (dx <= 0) {
      if (!(pts->radius > 0)) throw Error("the particles carry no radius, so Dx cannot default to their diameter; set Dx");
      dx = 2.0 * pts->radius;
    }
    Volumes out;
    out.grids.push_back(points_to_vdb(*pts, dx, split_names(ctx.param_string("attributes")), ctx.param_string("name")));
    char buf[160];
    std::snprintf(buf, sizeof buf, "%zu points, voxel %.4g m, %s", pts->size(), dx,
                  format_bytes(double(out.grids[0].memory_bytes())).c_str());
    ctx.info(buf);
    ctx.output("vdb", std::move(out));
  }
};

class LiquidSdfNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto pts = particles_in(ctx);
    LiquidSdfParams p;
    read_table_params(ctx, liquid_sdf_param_table(), p);
    LiquidSdfStats st;
    Volumes out;
    out.grids.push_back(smooth_liquid_sdf(*pts, p, &st));
    double velocity_s = 0;
    if (ctx.param_bool("velocity") && pts->size() > 0) {
      const auto t = std::chrono::steady_clock::now();
      out.grids.push_back(liquid_velocity(*pts, out.grids[0], p, st));
      velocity_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    }
    char buf[360], aniso[80] = "";
    if (p.kernel == LiquidKernel::Anisotropic)
      std::snprintf(aniso, sizeof aniso, "%zu stretched (%.2f s), ", st.anisotropic, st.anisotropy_s);
    std::snprintf(buf, sizeof buf,
                  "%zu particles (r %.4g m), voxel %.4g m, %s%zu droplets, %llu active voxels; "
                  "rasterise %.2f s, filter %.2f s, droplets %.2f s, velocity %.2f s",
                  st.particles, st.radius, st.dx, aniso, st.droplets, (unsigned long long)st.active_voxels,
                  st.rasterize_s, st.filter_s, st.droplet_s, velocity_s);
    ctx.info(buf);
    ctx.output("sdf", std::move(out));
  }
};

class SdfToPrimNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto vols = ctx.input<Volumes>("sdf");
    const std::string name = ctx.param_string("grid");
    const Volume* chosen = nullptr;
    for (const auto& g : vols->grids)
      if (name.empty() ? g.grid_class() == GridClass::LevelSet : g.name() == name) {
        chosen = &g;
        break;
      }
    if (!chosen) {
      if (!name.empty()) throw Error("input 'sdf' has no grid named '" + name + "'");
      std::string have;
      for (const auto& g : vols->grids)
        have += (have.empty() ? "" : ", ") + ("'" + g.name() + "' (" + to_string(g.grid_class()) + ")");
      throw Error("input 'sdf' holds no level set" + (have.empty() ? std::string(" (it is empty)") : "; it has " + have));
    }
    MeshingParams p;
    read_table_params(ctx, meshing_param_table(), p);
    Mesh m = sdf_to_mesh(*chosen, p);
    const std::string vname = ctx.param_string("velocityGrid");
    const Volume* vel = vname.empty() ? nullptr : vols->find(vname);
    if (vel) {
      if (vel->value_type() != "vec3s")
        throw Error("input 'sdf' grid '" + vname + "' holds " + vel->value_type() +
                    ", not vec3s velocities (set velocityGrid to the velocity grid's name, or empty)");
      sample_velocity(m, *vel);
    }
    ctx.info(std::to_string(m.points.size()) + " points, " + std::to_string(m.face_count()) + " faces" +
             (vel ? ", velocities from '" + vname + "'" : std::string()));
    ctx.output("mesh", std::move(m));
  }
};

}  // namespace

void register_surfacing(Registry& r) {
  {
    NodeSpec s("PrimToVDBPointDataGrid", "Surfacing",
               "Particles to an OpenVDB PointDataGrid (VDB points) holding P, v and the attributes asked for, "
               "the first step of the liquid surfacing chain and the point cache Houdini reads. A Dx so small "
               "that the grid would not fit in memory is refused before anything is allocated.");
    s.input("particles", "points", "Particles.")
        .output("vdb", "volumes", "One PointDataGrid.")
        .param_float("Dx", 0.0, 0.0, {}, "m",
                     "Voxel size of the point grid; usually the particle diameter (0: the particles' diameter).")
        .param_string("attributes", "", "Attributes to store besides P and v, separated by spaces (* for all).")
        .param_string("name", "points", "Grid name.");
    r.add(std::move(s.make<PointsToVdbNode>()));
  }
  {
    NodeSpec s("SmoothLiquidSDF", "Surfacing",
               "A smooth narrow-band level set of the liquid (grid \"surface\"): spheres of influenceScale x the "
               "particle radius are rasterised, renormalised, smoothed, eroded back to surfaceScale x radius from "
               "the centres, and particles left outside are kept as droplet spheres. Thin sheets stay connected, a "
               "single particle gives a sphere, a flat layer a flat surface.");
    s.input("vdb", "volumes", "VDB points (from PrimToVDBPointDataGrid), or connect 'particles' instead.", true)
        .input("particles", "points", "Particles, instead of 'vdb'.", true)
        .output("sdf", "volumes", "The level set \"surface\" (and the velocity grid \"v\").");
    table_params(s, liquid_sdf_param_table())
        .param_string("pointsGrid", "", "Name of the points grid in 'vdb' (empty: the first).")
        .param_bool("velocity", false,
                    "Also output a vec3s grid \"v\" within two of its voxels of the surface, at a voxel of the "
                    "particle radius (or Dx if coarser): the particles' velocity averaged over the influence radius "
                    "(Houdini's v volume, for motion blur; SDFToPrim puts it on the mesh points).");
    r.add(std::move(s.make<LiquidSdfNode>()));
  }
  {
    NodeSpec s("SDFToPrim", "Surfacing",
               "A level set to a closed mesh, wound outward (counter-clockwise seen from outside, as Houdini and "
               "Blender expect) with point normals from the level set's gradient, and point velocities where "
               "the input carries a velocity grid.");
    s.input("sdf", "volumes", "Volumes holding a level set.")
        .output("mesh", "mesh", "The surface mesh.")
        .param_string("grid", "", "Name of the level set to mesh (empty: the first level set).");
    table_params(s, meshing_param_table())
        .param_string("velocityGrid", "v",
                      "Vec3 grid in 'sdf' sampled onto the points as their velocity v (written to .ply as vx vy "
                      "vz); nothing when 'sdf' has no grid of this name, or when empty.");
    r.add(std::move(s.make<SdfToPrimNode>()));
  }
}

}  // namespace eddy::library

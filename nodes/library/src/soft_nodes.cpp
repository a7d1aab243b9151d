// Soft-body and cloth nodes: Cloth and SoftBody make them from meshes,
// PDSolver steps them by Projective Dynamics (core/pd), Grid makes the
// square mesh a cloth starts from.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eddy/core/mesh_velocity.h"
#include "eddy/core/pd/pd.h"
#include "eddy/gpu/gpu.h"
#include "eddy/graph/node.h"
#include "eddy/graph/soft_value.h"
#include "library.h"

namespace eddy::library {

std::shared_ptr<const SoftBodies> SolverState<SoftBodies>::start(const CookContext& ctx) {
  if (const Outputs* prev = ctx.previous()) return prev->at("soft").as<SoftBodies>();
  if (ctx.input_count("soft") == 1) return ctx.input<SoftBodies>("soft");
  auto all = std::make_shared<SoftBodies>();
  for (std::size_t k = 0; k < ctx.input_count("soft"); ++k) all->append(*ctx.input<SoftBodies>("soft", k));
  return all;
}

namespace {

// The material and pin parameters Cloth and SoftBody share (defaults differ).
NodeSpec& material_params(NodeSpec& s, const SoftMaterial& d, bool cloth) {
  s.param_string("name", "", "The object's name in reports (empty: the node id).")
      .param_float("young_modulus", d.young_modulus, 1.0, 1e12, "Pa",
                   cloth ? "Young's modulus of the sheet's material; with `thickness` it sets the stretch stiffness "
                           "(E t, N/m: woven cotton about 1e3 to 1e4)."
                         : "Young's modulus (jelly: 1e3 to 1e4; rubber: 1e6 to 1e7). Stiffer materials need more "
                           "iterations or shorter steps to look as stiff.")
      .param_float("poisson_ratio", d.poisson_ratio, 0.0, 0.49, "",
                   "Poisson's ratio: 0 lets the material change volume freely, towards 0.5 it keeps its volume.")
      .param_float("density", d.density, 1e-3, 1e6, "kg/m^3", "Density (water: 1000).");
  if (cloth)
    s.param_float("thickness", d.thickness, 1e-6, 1.0, "m",
                  "Thickness of the sheet: mass per area is density x thickness, stretch stiffness E x thickness.")
        .param_float("bend_stiffness", d.bend_stiffness, 0.0, 1e6, "N m",
                     "Bending rigidity D (energy D/2 per area times the squared mean curvature 2H; cotton about "
                     "1e-6 to 1e-5, 0: folds freely).");
  s.param_float("strain_min", d.strain_min, 0.01, 1.0, "",
                "Principal stretches between strain_min and strain_max cost nothing (1, 1: every deformation "
                "resists; a cloth with 0.9 buckles into softer wrinkles).")
      .param_float("strain_max", d.strain_max, 1.0, 100.0, "", "See strain_min.")
      .param_float("friction", d.friction, 0.0, 10.0, "",
                   "Coulomb coefficient of the surface; a contact's is the mean of its two surfaces'.")
      .param_vec3("velocity", {0.0, 0.0, 0.0}, {}, {}, "m/s", "Initial velocity.")
      .param_enum("pin", {"none", "box"}, "none",
                  "box: every node inside the box (at the start frame) is held where it is.")
      .param_vec3("pin_center", {0.0, 1.0, 0.0}, {}, {}, "m", "Centre of the pin box.")
      .param_vec3("pin_size", {0.1, 0.1, 0.1}, 0.0, {}, "m", "Edge lengths of the pin box.");
  return s;
}

SoftMaterial read_material(const CookContext& ctx, bool cloth) {
  SoftMaterial m;
  m.young_modulus = ctx.param_float("young_modulus");
  m.poisson_ratio = ctx.param_float("poisson_ratio");
  m.density = ctx.param_float("density");
  if (cloth) {
    m.thickness = ctx.param_float("thickness");
    m.bend_stiffness = ctx.param_float("bend_stiffness");
  }
  m.strain_min = ctx.param_float("strain_min");
  m.strain_max = ctx.param_float("strain_max");
  m.friction = ctx.param_float("friction");
  return m;
}

std::string object_name(const CookContext& ctx) {
  const std::string n = ctx.param_string("name");
  return n.empty() ? ctx.node_id() : n;
}

// Velocity and pins from the parameters; a line for the report.
std::string finish_object(const CookContext& ctx, SoftBodies& s) {
  const Vec3d v = to_vec3d(ctx.param_vec3f("velocity"));
  for (auto& vi : s.v) vi = v;
  std::size_t pins = 0;
  if (ctx.param_string("pin") == "box") {
    const Vec3d c = to_vec3d(ctx.param_vec3f("pin_center")), half = 0.5 * to_vec3d(ctx.param_vec3f("pin_size"));
    pins = s.pin_box(0, c - half, c + half);
    if (pins == 0)
      throw Error(ctx.where() + ".params.pin_center: the pin box holds none of the " + std::to_string(s.size()) +
                  " nodes");
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "%zu nodes, %.4g kg, %zu pinned", s.size(), s.total_mass(), pins);
  return buf;
}

class ClothNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    SoftBodies s = make_cloth(*ctx.input<Mesh>("mesh"), read_material(ctx, true), object_name(ctx));
    const std::string line = finish_object(ctx, s);
    ctx.info(line + ", " + std::to_string(s.tris.size()) + " triangles");
    ctx.output("soft", std::move(s));
  }
};

class SoftBodyNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto mesh = ctx.input<Mesh>("mesh");
    const double cell = ctx.param_float("cell_size");
    Collider inside;
    const auto grid = sample_mesh_shape(ctx, *mesh, 0.5 * cell, inside);
    SoftBodies s = make_soft_body(*mesh, inside, cell, read_material(ctx, false), object_name(ctx));
    const std::string line = finish_object(ctx, s);
    ctx.info(line + ", " + std::to_string(s.tets.size()) + " tetrahedra");
    ctx.output("soft", std::move(s));
  }
};

class PdSolverNode final : public SolverNode<PdSolver, SoftBodies> {
  static PdParams read_params(const CookContext& ctx) {
    PdParams p;
    read_table_params(ctx, pd_param_table(), p);
    return p;
  }
  std::unique_ptr<PdSolver> make_solver(const CookContext& ctx) override {
    const PdParams p = read_params(ctx);
    auto solver = std::make_unique<PdSolver>(p, ctx.threads());
    if (ctx.param_string("device") == "cuda") {
      require_device_method(p);
      solver->set_device_iterations(gpu::make_pd_iterations_cuda());
    }
    return solver;
  }
  void retune(const CookContext& ctx) override { solver_->retune(read_params(ctx)); }
  // The scene's colliders, and linked rigid bodies stepped two ways with the
  // soft bodies (CoupledBodies: they are colliders of the soft bodies in
  // each step, and take back the impulses their surfaces gave).
  void meet(CookContext& ctx, const std::vector<Collider>& colliders) override {
    bodies_.meet(ctx, *solver_, colliders, solver_->params().gravity);
    solver_->set_attach_colliders(input_colliders(ctx, "attach"));
  }
  void release() override { bodies_.release(); }
  // At the start frame, the nodes near the `attach` colliders are pinned to them.
  void load(CookContext& ctx, const SoftBodies& from) override {
    if (ctx.previous() || ctx.input_count("attach") == 0) {
      solver_->load(from);
      return;
    }
    SoftBodies s = from;
    const std::size_t n = s.attach_to(input_colliders(ctx, "attach"), ctx.param_float("attach_distance"), float(ctx.time()));
    if (n == 0)
      throw Error(ctx.where() + ".params.attach_distance: no node lies within " +
                  std::to_string(ctx.param_float("attach_distance")) + " m of the colliders linked to 'attach'");
    ctx.info(std::to_string(n) + " nodes attached");
    solver_->load(s);
  }

  void advance(CookContext& ctx, double t0, double frame_dt) override {
    bodies_.begin_frame(ctx.frame());
    const PdFrameStats st = pd_advance_frame(*solver_, t0, frame_dt, ctx.frame(), [&](int s, int n) {
      if (s % 4 == 0 || s == n) step_progress(ctx, double(s) / n, "stepping soft bodies");
    });
    const PdStageTimes t = solver_->stage_times();
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "%zu nodes, %zu constraints, %d steps of %d iterations, up to %d nodes in contact, last "
                  "iteration moved nodes up to %.3g mm, max speed %.3f m/s; factorisation %.3g s, %d refactorised "
                  "for contacts; last step: local %.3g ms, global %.3g ms",
                  solver_->size(), solver_->constraints().size(), st.steps, solver_->params().iterations,
                  st.max_contacts, 1e3 * st.last_change, st.max_speed, solver_->factor_seconds(),
                  solver_->system().refactorisations(), 1e3 * t.local, 1e3 * t.global);
    ctx.info(buf + bodies_.info());
  }
  void finish(CookContext& ctx) override {
    ctx.output("mesh", solver_->state().deformed_surface());
    bodies_.output(ctx);
  }

  CoupledBodies bodies_;
};

// Soft bodies' surfaces as a collider of a liquid (one way): each frame the
// deformed closed surface is sampled as a signed distance about the nodes'
// centre of mass and moves on with their mean velocity and angular velocity
// (the liquid's substeps between two frames see it go that way); the rest of
// each surface point's velocity, the deformation's, is sampled beside it.
class ColliderSoftNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto soft = ctx.input<SoftBodies>("soft");
    if (soft->size() == 0) throw Error(ctx.where() + ": input 'soft' holds no soft body");
    // Centre of mass, momentum, and the angular velocity I^-1 L about the centre.
    const double mass = soft->total_mass();
    Vec3d c = Vec3d::Zero(), v = Vec3d::Zero(), L = Vec3d::Zero();
    for (std::size_t i = 0; i < soft->size(); ++i) c += soft->mass[i] * soft->x[i], v += soft->mass[i] * soft->v[i];
    c /= mass;
    v /= mass;
    Eigen::Matrix3d I = Eigen::Matrix3d::Zero();
    for (std::size_t i = 0; i < soft->size(); ++i) {
      const Vec3d r = soft->x[i] - c;
      L += soft->mass[i] * r.cross(soft->v[i] - v);
      I += soft->mass[i] * (r.squaredNorm() * Eigen::Matrix3d::Identity() - r * r.transpose());
    }
    const Vec3d w = I.determinant() > 0 ? Vec3d(I.ldlt().solve(L)) : Vec3d::Zero();
    Mesh m = soft->deformed_surface();
    if (const std::size_t open = measure_mesh(m).boundary_edges; open > 0)
      throw Error("input 'soft' has an open surface (" + std::to_string(open) +
                  " edges belong to one face only: a cloth?); ColliderSoft needs closed ones (SoftBody)");
    const Vec3f cf = to_vec3f(c);
    for (Vec3f& p : m.points) p = p - cf;
    Collider col;
    Colliders out;
    out.grids.push_back(sample_mesh_shape(ctx, m, ctx.param_float("voxel_size"), col));
    // What the rigid motion leaves out, the surface's own deformation
    // (a jelly squashing as it lands), as the grid's surface velocity, so
    // the liquid meets each point of the surface at that point's velocity.
    const std::vector<Vec3d> sv = soft->surface_velocity();
    std::vector<Vec3f> deform(sv.size());
    float fastest = 0;
    for (std::size_t k = 0; k < sv.size(); ++k) {
      deform[k] = to_vec3f(sv[k] - v - w.cross(to_vec3d(m.points[k])));
      fastest = std::max(fastest, length(deform[k]));
    }
    if (fastest > 0) {
      const float band = 4.0f * col.grid_dx + fastest / float(ctx.fps());  // as ColliderMesh's
      auto vel = std::make_shared<const std::vector<Vec3f>>(surface_velocity_on_grid(m, deform, col, band, ctx.threads()));
      col.grid_velocity = vel->data();
      col.grid_time = float(ctx.time());
      out.velocities.push_back(std::move(vel));
    }
    set_motion(col, cf, mat3_identity(), to_vec3f(v),
               to_vec3f(w), ctx.time());
    col.friction = float(ctx.param_float("friction"));
    out.shapes.push_back(col);
    ctx.output("colliders", std::move(out));
  }
};

// A flat rectangle of rows x columns quads (Houdini's Grid SOP).
class GridNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const Vec3f size = ctx.param_vec3f("size"), c = ctx.param_vec3f("center");
    const int nu = int(ctx.param_int("columns")), nv = int(ctx.param_int("rows"));
    const std::string plane = ctx.param_string("orientation");
    // The plane's axes (u, v), u x v its normal: zx lies flat (+y), xy faces +z, yz faces +x.
    const int a = plane == "xy" ? 0 : plane == "yz" ? 1 : 2, b = plane == "xy" ? 1 : plane == "yz" ? 2 : 0;
    Vec3f u = vec3(0.0f), v = vec3(0.0f);
    (&u.x)[a] = (&size.x)[a];
    (&v.x)[b] = (&size.x)[b];
    Mesh m = grid_mesh(c, u, v, nu, nv);
    compute_point_normals(m);
    ctx.info(std::to_string(m.points.size()) + " points, " + std::to_string(m.quads.size()) + " quads");
    ctx.output("mesh", std::move(m));
  }
};

}  // namespace

void register_soft(Registry& r) {
  {
    NodeSpec s("Grid", "Geometry",
               "A flat rectangle of quads (as Houdini's Grid): a cloth to drape, a sheet to pin.");
    s.output("mesh", "mesh", "The grid: (rows + 1) x (columns + 1) points, rows x columns quads.")
        .param_enum("orientation", {"zx", "xy", "yz"}, "zx",
                    "The plane: zx lies flat (normal +y), xy faces +z, yz faces +x.")
        .param_vec3("size", {1.0, 1.0, 1.0}, 0.0, {}, "m", "Extent along the plane's two axes (the third is unused).")
        .param_vec3("center", {0.0, 0.0, 0.0}, {}, {}, "m", "Centre.")
        .param_int("rows", 10, 1, 4096, "", "Quads along the plane's second axis.")
        .param_int("columns", 10, 1, 4096, "", "Quads along the plane's first axis.");
    r.add(std::move(s.make<GridNode>()));
  }
  {
    SoftMaterial d;
    d.young_modulus = 5e6;
    d.density = 300;
    d.thickness = 5e-4;
    d.bend_stiffness = 5e-6;
    NodeSpec s("Cloth", "Soft bodies",
               "A cloth from a triangle or quad mesh (quads split): one node per mesh point, its membrane resisting "
               "stretch and shear by triangle strain, its bending by the cotangent Laplacian at interior points "
               "(Bouaziz et al. 2014). The output is the input mesh deformed. Link into PDSolver. Cloth does "
               "not collide with itself.");
    s.input("mesh", "mesh", "The cloth's mesh (a Grid, or any read mesh).").output("soft", "soft", "The cloth.");
    material_params(s, d, true);
    r.add(std::move(s.make<ClothNode>()));
  }
  {
    SoftMaterial d;
    d.young_modulus = 1e4;
    NodeSpec s("SoftBody", "Soft bodies",
               "A soft body from a closed mesh: the cells of a lattice of `cell_size` whose centres lie inside the "
               "mesh, each cut into six tetrahedra, resisting strain (and, with poisson_ratio > 0, volume change) "
               "as Projective Dynamics constraints. The mesh's points ride in the tetrahedra by fixed weights, so "
               "the output is the input mesh deformed. Mass is density times the mesh's volume. Link into PDSolver.");
    s.input("mesh", "mesh", "A closed mesh wound outward.")
        .output("soft", "soft", "The soft body.")
        .param_float("cell_size", 0.05, 1e-4, 100.0, "m",
                     "Edge of the lattice cells: smaller follows the shape better and bends more truly, at the cost "
                     "of more tetrahedra (six per cell).");
    material_params(s, d, false);
    r.add(std::move(s.make<SoftBodyNode>()));
  }
  {
    NodeSpec s("ColliderSoft", "Colliders",
               "Soft bodies' deformed surfaces (closed: SoftBody, not Cloth) as a collider of a liquid, one way: "
               "sampled every frame as a signed distance, moving on at the bodies' mean velocity and angular "
               "velocity until the next frame; the liquid meets each point of the surface at that point's own "
               "velocity (the deformation's sampled beside the distance). The liquid does not push the soft "
               "bodies back.");
    s.input("soft", "soft", "Soft bodies (a PDSolver's output).")
        .output("colliders", "colliders", "The surfaces as one sampled shape.")
        .param_float("voxel_size", 0.0, 0.0, {}, "m",
                     "Sampling spacing; about the liquid's particle radius resolves contact well (0: 1/64 of the "
                     "surface's largest extent).")
        .param_float("friction", 0.0, 0.0, 10.0, "", "Coulomb coefficient the liquid meets.");
    s.time_dependent = true;
    r.add(std::move(s.make<ColliderSoftNode>()));
  }
  {
    NodeSpec s("PDSolver", "Solvers",
               "Soft bodies and cloth by Projective Dynamics (Bouaziz et al. 2014): each step minimises implicit "
               "Euler's objective by local-global iterations (every constraint projected in parallel, then one "
               "sparse solve with a matrix factored once). Collides with the colliders (static, moving, animated), "
               "with Coulomb friction. At the start frame it outputs the linked objects; frame f continues from "
               "frame f - 1. Rigid bodies linked into `bodies` are stepped with them two ways (a ball dropped on a trampoline, "
               "a box on a jelly). Soft bodies do not yet collide with each other.");
    s.stateful = true;
    s.steps_animations = true;
    s.input("soft", "soft", "Soft bodies and cloths (read at the start frame; any number of links).", false, true)
        .input("colliders", "colliders", "Collider shapes (optional; any number).", true, true)
        .input("forces", "forces", "Force fields (ForceField; any number), acting on every node (wind on a flag).",
               true, true)
        .input("attach", "colliders",
               "Colliders to attach to (optional; any number): at the start frame every node within "
               "attach_distance of one is pinned to it and moves with it from then on, animated or not (a flag "
               "on a swaying pole, a cloth held by a moving bar).",
               true, true)
        .output("soft", "soft", "The soft bodies at this frame.")
        .output("mesh", "mesh", "Their surfaces at this frame, merged, with point normals.");
    CoupledBodies::spec(s, "soft bodies", "step");
    table_params(s, pd_param_table());
    s.param_float("attach_distance", 0.01, 0.0, {}, "m",
                  "Nodes this close to an `attach` collider at the start frame (or inside it) are attached to it.")
        .param_enum("device", {"cpu", "cuda"}, "cpu",
                    "Where the local-global iterations run: cpu (TBB) or cuda (the GPU; needs method chebyshev). "
                    "Contacts, friction and velocities are found on the CPU either way.");
    r.add(std::move(s.make<PdSolverNode>()));
  }
}

}  // namespace eddy::library

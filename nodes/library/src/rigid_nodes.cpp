// Rigid-body nodes: RigidBody makes one body, RigidBodySolver steps them in
// frictional contact (SAP, core/rigid), WriteBodies writes their poses per
// frame, BodiesToMesh turns them into a mesh to surface, write or view.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <nlohmann/json.hpp>

#include "eddy/core/io.h"
#include "eddy/core/rigid/rigid.h"
#include "eddy/graph/node.h"
#include "library.h"

namespace eddy::library {

std::shared_ptr<const Bodies> SolverState<Bodies>::start(const CookContext& ctx) {
  if (const Outputs* prev = ctx.previous()) return prev->at("bodies").as<Bodies>();
  if (ctx.input_count("bodies") == 1) return ctx.input<Bodies>("bodies");
  auto all = std::make_shared<Bodies>();
  for (std::size_t k = 0; k < ctx.input_count("bodies"); ++k) all->append(*ctx.input<Bodies>("bodies", k));
  return all;
}

NodeSpec& CoupledBodies::spec(NodeSpec& s, const std::string& what, const std::string& step) {
  const RigidParams d;
  s.input("bodies", "bodies",
          "Rigid bodies stepped with the " + what + ", two ways (optional; any number, read at the start frame): "
          "they move as colliders of the " + what + ", which pushes them back; they meet the colliders and each "
          "other as in RigidBodySolver (SAP contact, its default contact parameters).",
          true, true)
      .output("bodies", "bodies", "The bodies of the frame (empty when none are linked).")
      .param_float("body_time_step", d.time_step, 1e-6, 0.1, "s",
                   "Longest step of the bodies: each " + what + " " + step + " takes equal body steps of at most this.");
  return s;
}

void CoupledBodies::meet(CookContext& ctx, SolverBase& liquid, const std::vector<Collider>& colliders,
                         const Vec3f& gravity) {
  if (ctx.input_count("bodies") == 0) {
    coupling_.reset();
    liquid.set_colliders(colliders);
    return;
  }
  // Made anew each frame from the bodies of the frame before (the whole state, as the liquid's).
  coupling_.reset();
  RigidParams p;
  p.gravity = gravity;
  p.time_step = float(ctx.param_float("body_time_step"));
  coupling_ = std::make_unique<BodyCoupling>(liquid, p, *SolverState<Bodies>::start(ctx), colliders);
  // Where the frame starts (the liquid's load looks at its colliders there).
  const int f = ctx.previous() ? ctx.frame() - 1 : ctx.frame();
  coupling_->place((f - ctx.start_frame()) / ctx.fps());
}

void CoupledBodies::begin_frame(int frame) {
  if (coupling_) coupling_->begin_frame(frame);
}

float CoupledBodies::max_speed() const {
  return coupling_ ? float(coupling_->max_speed()) : 0.0f;
}

std::string CoupledBodies::info() const {
  if (!coupling_) return "";
  const CouplingFrameStats& st = coupling_->frame_stats();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "; %zu bodies: %d steps, pushed with up to %.4g N, up to %d contacts, deepest penetration %.3g mm, "
                "max speed %.3f m/s",
                coupling_->rigid().size(), st.rigid.steps, st.max_force, st.rigid.max_contacts,
                1e3 * st.rigid.penetration, st.rigid.max_speed);
  std::string s = buf;
  if (st.lost) s += "; " + std::to_string(st.lost) + " liquid pushes not attributed to a body";
  return s;
}

void CoupledBodies::output(CookContext& ctx) const {
  Bodies b;
  if (coupling_) coupling_->rigid().store(b);
  ctx.output("bodies", std::move(b));
}

namespace {


// Rotation X, then Y, then Z (degrees), as the colliders' `rotate`.
Quatd euler_xyz_degrees(const Vec3f& deg) {
  const double k = 3.14159265358979323846 / 180.0;
  return Quatd(Eigen::AngleAxisd(deg.z * k, Vec3d::UnitZ()) * Eigen::AngleAxisd(deg.y * k, Vec3d::UnitY()) *
               Eigen::AngleAxisd(deg.x * k, Vec3d::UnitX()));
}

class RigidBodyNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    BodyGeometry g;
    g.shape = enum_param(ctx, "shape", kBodyShapeNames);
    g.half = 0.5 * to_vec3d(ctx.param_vec3f("size"));
    g.radius = ctx.param_float("radius");
    g.half_height = 0.5 * ctx.param_float("height");
    std::string name = ctx.param_string("name");
    if (name.empty()) name = ctx.node_id();
    const double density = ctx.param_float("density"), friction = ctx.param_float("friction");
    const Vec3d position = to_vec3d(ctx.param_vec3f("position")), velocity = to_vec3d(ctx.param_vec3f("velocity"));
    const Vec3d spin = to_vec3d(ctx.param_vec3f("angular_velocity"));
    Quatd rotation = euler_xyz_degrees(ctx.param_vec3f("rotation"));
    if (g.shape == BodyShape::Mesh) {
      // The body frame sits on the mesh's principal axes: the mesh as
      // modelled, turned by `rotation`, has its body turned by rotation * axes.
      const BodyMeshPlacement& m = mesh_shape(ctx);
      g.mesh = m.shape;
      rotation = rotation * m.axes;
    }
    Bodies b;
    if (ctx.input_count("points") == 0) {
      b.add(name, g, density, position, rotation, velocity, spin, friction);
    } else {
      // One body per point (Houdini's copy to points): at P (`position` is
      // not used), moving at the points' v when they carry it (else at
      // `velocity`), turned by `rotation` and then a random turn of up to
      // `random_rotation`.
      const auto pts = ctx.input<Points>("points");
      const Vec3f* P = pts->P();
      const Vec3f* v = pts->has("v") ? pts->v() : nullptr;
      std::mt19937 rng(uint32_t(ctx.param_int("seed")));
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      const double jitter = ctx.param_float("random_rotation") * 3.14159265358979323846 / 180.0;
      for (std::size_t i = 0; i < pts->size(); ++i) {
        Vec3d axis(u(rng), u(rng), u(rng));
        const double angle = jitter * std::abs(u(rng));
        const Quatd turn = axis.norm() > 1e-9 ? Quatd(Eigen::AngleAxisd(angle, axis.normalized())) : Quatd::Identity();
        b.add(name + "_" + std::to_string(i), g, density, to_vec3d(P[i]), turn * rotation, v ? to_vec3d(v[i]) : velocity,
              spin, friction);
      }
    }
    for (std::size_t i = 0; i < b.size(); ++i)
      b.set_contact(i, ctx.param_float("contact_stiffness"), ctx.param_float("dissipation_time"));
    char buf[200];
    if (b.size() == 0) std::snprintf(buf, sizeof buf, "no bodies (no input points)");
    else
      std::snprintf(buf, sizeof buf, "%zu %s: %.4g kg, inertia %.4g %.4g %.4g kg m^2 each", b.size(),
                    b.size() == 1 ? "body" : "bodies", b.mass[0], b.inertia[0].x(), b.inertia[0].y(),
                    b.inertia[0].z());
    std::string info = buf;
    if (g.mesh) {
      std::snprintf(buf, sizeof buf, "; mesh sampled on %d x %d x %d nodes at %.4g m, %zu surface samples",
                    g.mesh->sdf.dims[0], g.mesh->sdf.dims[1], g.mesh->sdf.dims[2], g.mesh->sdf.dx,
                    g.mesh->samples.size());
      info += buf;
    }
    ctx.info(info);
    ctx.output("bodies", std::move(b));
  }

 private:
  // The mesh's shape, kept while the mesh value and the voxel size stay (a
  // body whose parameters are animated cooks every frame).
  const BodyMeshPlacement& mesh_shape(const CookContext& ctx) {
    if (ctx.input_count("mesh") == 0)
      throw Error(ctx.where() + ": shape is mesh, so input 'mesh' must be linked to a closed mesh");
    const auto mesh = ctx.input<Mesh>("mesh");
    if (mesh->face_count() == 0) throw Error(ctx.where() + ": input 'mesh' has no faces");
    double dx = ctx.param_float("voxel_size");
    if (dx <= 0) {
      const Bounds3 b = mesh_bounds(*mesh);
      dx = max_component(b.hi - b.lo) / 40.0;
    }
    if (mesh != mesh_ || dx != dx_ || !placement_.shape) {
      try {
        placement_ = body_mesh(*mesh, dx, ctx.threads());
      } catch (const Error& e) {
        throw Error(ctx.where() + ": input 'mesh': " + e.what());
      }
      mesh_ = mesh;
      dx_ = dx;
    }
    return placement_;
  }
  std::shared_ptr<const Mesh> mesh_;
  double dx_ = 0;
  BodyMeshPlacement placement_;
};

class RigidSolverNode final : public SolverNode<RigidSolver, Bodies> {
  static RigidParams read_params(const CookContext& ctx) {
    RigidParams p;
    read_table_params(ctx, rigid_param_table(), p);
    return p;
  }
  std::unique_ptr<RigidSolver> make_solver(const CookContext& ctx) override {
    return std::make_unique<RigidSolver>(read_params(ctx));
  }
  void retune(const CookContext& ctx) override { solver_->retune(read_params(ctx)); }

  void advance(CookContext& ctx, double t0, double frame_dt) override {
    const RigidFrameStats st = rigid_advance_frame(*solver_, t0, frame_dt, ctx.frame(), [&](int s, int n) {
      if (s % 16 == 0 || s == n) step_progress(ctx, double(s) / n, "stepping bodies");
    });
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%zu bodies, %d steps, up to %d contacts, SAP at most %d iterations (%d steps short of its "
                  "tolerance), deepest penetration %.3g mm, max speed %.3f m/s",
                  solver_->size(), st.steps, st.max_contacts, st.max_iterations, st.unconverged, 1e3 * st.penetration,
                  st.max_speed);
    ctx.info(buf);
  }
};

nlohmann::json triple(const Vec3d& v) { return {v.x(), v.y(), v.z()}; }

class WriteBodiesNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto b = ctx.input<Bodies>("bodies");
    nlohmann::json list = nlohmann::json::array();
    for (std::size_t i = 0; i < b->size(); ++i) {
      const Quatd& q = b->q[i];
      list.push_back({{"name", b->name[i]},
                      {"shape", enum_name(kBodyShapeNames, b->geometry[i].shape)},
                      {"position", triple(b->x[i])},
                      {"orientation", {q.w(), q.x(), q.y(), q.z()}},
                      {"velocity", triple(b->v[i])},
                      {"angular_velocity", triple(b->w[i])}});
    }
    const nlohmann::json doc = {{"frame", ctx.frame()}, {"time", ctx.time()}, {"bodies", list}};
    const std::string path = ctx.output_path(ctx.param_string("path"));
    write_file_atomic(path, doc.dump(1) + "\n");
    ctx.info("wrote " + path);
    ctx.output_shared("bodies", b);
  }
};

class BodiesToMeshNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto b = ctx.input<Bodies>("bodies");
    Mesh m = bodies_to_mesh(*b, int(ctx.param_int("segments")));
    ctx.info(std::to_string(b->size()) + " bodies, " + std::to_string(m.face_count()) + " faces");
    ctx.output("mesh", std::move(m));
  }
};

}  // namespace

void register_rigid(Registry& r) {
  {
    NodeSpec s("RigidBody", "Bodies",
               "One rigid body of uniform density: a box, sphere, capsule or closed mesh, its mass and inertia computed "
               "from the shape, placed and set moving; or, with `points` connected, one such body on each point (a pile "
               "from a FluidBox lattice, say). Link any number into RigidBodySolver.");
    s.input("points", "points",
            "Optional: one body per point, at P (instead of `position`), moving at the points' v when they carry it.",
            true)
        .input("mesh", "mesh", "Shape mesh: a closed mesh wound outward (ReadMesh, say), as modelled.", true)
        .output("bodies", "bodies", "The body (or one per point).")
        .param_string("name", "", "The body's name in WriteBodies' files (empty: the node id).")
        .param_enum("shape", kBodyShapeNames, BodyShape::Box,
                    "The shape; mesh: the closed mesh linked into `mesh`, its mass and inertia by the divergence "
                    "theorem, meeting other shapes through its signed distance sampled at `voxel_size`.")
        .param_vec3("size", {0.2, 0.2, 0.2}, 0.0, {}, "m", "Box: edge lengths along its local x, y, z.")
        .param_float("radius", 0.1, 0.0, {}, "m", "Sphere and capsule: radius.")
        .param_float("height", 0.2, 0.0, {}, "m", "Capsule: length of its axis (local y) between the caps' centres.")
        .param_float("density", 500.0, 1e-3, 1e6, "kg/m^3", "Density (water: 1000; a body of 500 floats half out).")
        .param_float("voxel_size", 0.0, 0.0, {}, "m",
                     "Mesh: spacing of its sampled signed distance (0: a 40th of its largest extent); its surface "
                     "samples that meet other shapes stand two voxels apart.")
        .param_vec3("position", {0.0, 0.5, 0.0}, {}, {}, "m",
                    "Centre of mass at the start frame (a mesh is moved so that its centre of mass is here).")
        .param_vec3("rotation", {0.0, 0.0, 0.0}, {}, {}, "deg",
                    "Rotation, X then Y then Z (a mesh turns from its modelled orientation about its centre of mass).")
        .param_vec3("velocity", {0.0, 0.0, 0.0}, {}, {}, "m/s", "Initial velocity of the centre of mass.")
        .param_vec3("angular_velocity", {0.0, 0.0, 0.0}, {}, {}, "rad/s", "Initial angular velocity (world axes).")
        .param_float("friction", 0.5, 0.0, 10.0, "",
                     "Coulomb coefficient of the body's surface; a contact's is the mean of its two surfaces'.")
        .param_float("contact_stiffness", 0.0, 0.0, 1e12, "N/m",
                     "The body's own contact stiffness k (a rubber ball: 1e4); 0: the solver's. A surface with its "
                     "own meets one without as a rigid one; two with their own are springs in series.")
        .param_float("dissipation_time", 0.0, 0.0, 10.0, "s",
                     "The body's own dissipation time scale tau of its Kelvin-Voigt contact (bounce: lower); 0: the "
                     "solver's. Two surfaces with their own are dampers (k tau) in series.")
        .param_float("random_rotation", 0.0, 0.0, 180.0, "deg",
                     "With points: each body is turned further about a random axis by up to this angle.")
        .param_int("seed", 0, 0, {}, "", "With points: seed of the random turns.");
    r.add(std::move(s.make<RigidBodyNode>()));
  }
  {
    NodeSpec s("RigidBodySolver", "Solvers",
               "Rigid bodies falling, tumbling and stacking under gravity in frictional contact with each other and "
               "with the colliders: each step solves one convex problem over the bodies' velocities (SAP, Castro et "
               "al. 2022, as in Drake) with compliant contact and regularised Coulomb friction. At the start frame "
               "it outputs the input bodies; frame f continues from frame f - 1. Reports per frame the steps, "
               "contacts, solver iterations and the deepest penetration.");
    s.stateful = true;
    s.steps_animations = true;
    s.input("bodies", "bodies", "The bodies (read at the start frame; any number of links).", false, true)
        .input("colliders", "colliders", "Collider shapes (optional; any number).", true, true)
        .input("forces", "forces", "Force fields (ForceField; any number), acting at each body's centre of mass.",
               true, true)
        .output("bodies", "bodies", "The bodies at this frame.");
    table_params(s, rigid_param_table());
    r.add(std::move(s.make<RigidSolverNode>()));
  }
  {
    NodeSpec s("WriteBodies", "Output",
               "Writes the bodies of each frame as a JSON file: a top-level `bodies` list with each body's name, "
               "shape, position, orientation [w, x, y, z], velocity and angular_velocity (world axes, SI units). "
               "Passes its input through.");
    s.input("bodies", "bodies", "Bodies to write.").output("bodies", "bodies", "The input, unchanged.");
    output_path_param(s, "$OS/bodies.$F4.json", "File path (.json)", {".json"});
    r.add(std::move(s.make<WriteBodiesNode>()));
  }
  {
    NodeSpec s("BodiesToMesh", "Bodies",
               "The bodies' shapes in world space as one closed mesh, to surface, write or view.");
    s.input("bodies", "bodies", "Bodies.")
        .output("mesh", "mesh",
                "Boxes as six quads, spheres and capsules as surfaces of revolution, meshes as they are.")
        .param_int("segments", 24, 6, 256, "", "Sphere and capsule: faces around the axis.");
    r.add(std::move(s.make<BodiesToMeshNode>()));
  }
}

}  // namespace eddy::library

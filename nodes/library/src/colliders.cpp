// Collider nodes: analytic signed-distance shapes with a placement, a
// velocity (the shape moves with it) and contact parameters.
#include <algorithm>
#include <cstdio>

#include "eddy/core/mat3.h"
#include "eddy/core/mesh_sdf.h"
#include "eddy/core/mesh_velocity.h"
#include "eddy/graph/node.h"
#include "eddy/surfacing/surfacing.h"
#include "library.h"

namespace eddy::library {

namespace {

// The shape's rotation at a (fractional) frame: `rotate` (Euler degrees),
// or a plane's `normal`; none for the others.
Mat3f rotation_at(const CookContext& ctx, double frame) {
  if (ctx.spec().find_param("rotate")) return rotation_from_euler_degrees(ctx.param_vec3f_at("rotate", frame));
  if (ctx.spec().find_param("normal")) {
    const Vec3f n = ctx.param_vec3f_at("normal", frame);
    if (length(n) < 1e-9f) throw Error("parameter 'normal' is the zero vector; expected a direction");
    return rotation_y_to(n);
  }
  return mat3_scalar(1.0f);
}

// The shape with its placement (centre parameter `at`, rotation) and
// contact parameters. Static, it stands at `at` at time 0 and moves with
// `velocity` and `angular_velocity`. Animated (the placement an expression
// or keys), it stands where the animation puts it at this frame (moved on
// by those velocities) and, for the solvers' steps within the frame, moves
// as the animation does from this frame to the next: the velocity and
// angular velocity of that stretch, added to the parameters'.
Collider common(const CookContext& ctx, ShapeType type, const char* at) {
  Collider c;
  c.type = type;
  c.velocity = ctx.param_vec3f("velocity");
  c.angular_velocity = ctx.param_vec3f("angular_velocity");
  c.friction = static_cast<float>(ctx.param_float("friction"));
  c.restitution = static_cast<float>(ctx.param_float("restitution"));
  c.stiffness = static_cast<float>(ctx.param_float("contact_stiffness"));
  c.dissipation = static_cast<float>(ctx.param_float("dissipation_time"));
  if (ctx.spec().find_param("mode")) c.inside = ctx.param_string("mode") == "container" ? 1 : 0;
  const double f = ctx.frame();
  c.center = ctx.param_vec3f_at(at, f);
  c.rotation = rotation_at(ctx, f);
  const bool turns = ctx.animated("rotate") || ctx.animated("normal");
  if (!ctx.animated(at) && !turns) return c;
  const float fps = float(ctx.fps()), T = float(ctx.time());
  const Vec3f v = c.velocity + (ctx.param_vec3f_at(at, f + 1) - c.center) * fps;
  const Vec3f w =
      c.angular_velocity + (turns ? rotation_vector(rotation_at(ctx, f + 1) * transpose(c.rotation)) * fps : vec3(0.0f));
  // Where the parameters' own motion has taken the animated placement by now.
  const ColliderPose now = collider_pose(c, T);
  set_motion(c, now.center, now.rotation, v, w, T);
  return c;
}

template <class Fill>
class ShapeNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    Colliders out;
    out.shapes.push_back(Fill{}(ctx));
    ctx.output("colliders", std::move(out));
  }
};

struct BoxFill {
  Collider operator()(const CookContext& ctx) const {
    Collider c = common(ctx, ShapeType::Box, "center");
    c.size = ctx.param_vec3f("size") * 0.5f;
    return c;
  }
};
struct SphereFill {
  Collider operator()(const CookContext& ctx) const {
    Collider c = common(ctx, ShapeType::Sphere, "center");
    c.size = vec3(static_cast<float>(ctx.param_float("radius")));
    return c;
  }
};
struct EllipsoidFill {
  Collider operator()(const CookContext& ctx) const {
    Collider c = common(ctx, ShapeType::Ellipsoid, "center");
    c.size = ctx.param_vec3f("radii");
    return c;
  }
};
struct CapsuleFill {
  Collider operator()(const CookContext& ctx) const {
    Collider c = common(ctx, ShapeType::Capsule, "center");
    c.size = vec3(static_cast<float>(ctx.param_float("radius")), 0.5f * static_cast<float>(ctx.param_float("length")), 0);
    return c;
  }
};
struct PlaneFill {
  Collider operator()(const CookContext& ctx) const {
    return common(ctx, ShapeType::Plane, "origin");
  }
};

class MergeNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    Colliders out;
    for (std::size_t k = 0; k < ctx.input_count("colliders"); ++k) {
      const auto c = ctx.input<Colliders>("colliders", k);
      out.shapes.insert(out.shapes.end(), c->shapes.begin(), c->shapes.end());
      out.grids.insert(out.grids.end(), c->grids.begin(), c->grids.end());
      out.velocities.insert(out.velocities.end(), c->velocities.begin(), c->velocities.end());
    }
    ctx.output("colliders", std::move(out));
  }
};

}  // namespace

std::shared_ptr<const std::vector<float>> sample_mesh_shape(CookContext& ctx, const Mesh& mesh, double dx,
                                                            Collider& c) {
  require_closed(mesh, "input 'mesh'");
  if (dx <= 0) {
    const Bounds3 b = mesh_bounds(mesh);
    dx = max_component(b.hi - b.lo) / 64.0;
  }
  // A margin of a few voxels keeps the sampled box's own edge away from the surface.
  SampledSdf sdf = mesh_to_sdf(mesh, dx, 4.0 * dx, ctx.threads());
  const Collider g = grid_collider(sdf);
  c.type = g.type;
  for (int a = 0; a < 3; ++a) c.grid_dims[a] = g.grid_dims[a];
  c.grid_origin = g.grid_origin;
  c.grid_dx = g.grid_dx;
  auto values = std::make_shared<const std::vector<float>>(std::move(sdf.values));
  c.grid = values->data();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%zu faces sampled on %d x %d x %d nodes at %.4g m", mesh.face_count(),
                c.grid_dims[0], c.grid_dims[1], c.grid_dims[2], dx);
  ctx.info(buf);
  return values;
}

std::shared_ptr<const std::vector<float>> MeshShapeCache::sample(CookContext& ctx,
                                                                 const std::shared_ptr<const Mesh>& mesh, double dx,
                                                                 Collider& c) {
  if (!values_ || mesh != mesh_ || dx != dx_) {
    Collider sampled = c;
    values_ = sample_mesh_shape(ctx, *mesh, dx, sampled);
    grid_ = sampled;
    mesh_ = mesh;
    dx_ = dx;
  } else {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%zu faces, the %d x %d x %d samples of an earlier frame kept",
                  mesh->face_count(), grid_.grid_dims[0], grid_.grid_dims[1], grid_.grid_dims[2]);
    ctx.info(buf);
  }
  c.type = grid_.type;
  for (int a = 0; a < 3; ++a) c.grid_dims[a] = grid_.grid_dims[a];
  c.grid_origin = grid_.grid_origin;
  c.grid_dx = grid_.grid_dx;
  c.grid = values_->data();
  return values_;
}

namespace {

// A closed mesh as a sampled signed distance, placed like the other shapes.
// A deforming mesh (a sequence read with $F, or points carrying v) also has
// its surface velocity sampled, so liquid in contact moves with the surface.
class MeshColliderNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    Collider c = common(ctx, ShapeType::Grid, "center");
    const auto mesh = ctx.input<Mesh>("mesh");
    Colliders out;
    out.grids.push_back(samples_.sample(ctx, mesh, ctx.param_float("voxelSize"), c));
    // The points' velocities: their own v where the mesh carries it, else
    // from the previous frame's mesh when it has the same points and faces.
    std::vector<Vec3f> pv = mesh->velocities;
    std::string from = "the points' v";
    if (pv.size() != mesh->points.size()) {
      pv.clear();
      const auto before = ctx.input_before<Mesh>("mesh");
      if (before && before != mesh) {
        pv = sequence_velocities(*mesh, *before, ctx.fps());
        from = "the previous frame";
        if (pv.empty())
          ctx.info("the mesh's points or faces differ from the previous frame's: no surface velocity");
      }
    }
    float fastest = 0;
    for (const Vec3f& v : pv) fastest = std::max(fastest, length(v));
    if (fastest > 0) {
      // Four voxels each side (contact reads the velocity within a particle
      // radius, about a voxel, of the surface, trilinear over whole cells),
      // plus how far the surface moves in a frame, as the steps before this
      // frame look for it there.
      const float band = 4.0f * c.grid_dx + fastest / float(ctx.fps());
      auto vel = std::make_shared<const std::vector<Vec3f>>(surface_velocity_on_grid(*mesh, pv, c, band, ctx.threads()));
      c.grid_velocity = vel->data();
      c.grid_time = float(ctx.time());
      out.velocities.push_back(std::move(vel));
      char buf[120];
      std::snprintf(buf, sizeof buf, "surface velocity from %s, up to %.3g m/s", from.c_str(), fastest);
      ctx.info(buf);
    }
    out.shapes.push_back(c);
    ctx.output("colliders", std::move(out));
  }

 private:
  MeshShapeCache samples_;
};

NodeSpec shape(std::string type, std::string doc, bool closed) {
  NodeSpec s(std::move(type), "Colliders",
             std::move(doc));
  s.output("colliders", "colliders", "The collider shape.");
  if (closed)
    s.param_enum("mode", {"solid", "container"}, "solid",
                 "solid: liquid stays outside the shape; container: liquid stays inside it (a tank).");
  return s;
}

void contact_params(NodeSpec& s) {
  s.param_vec3("velocity", {0.0, 0.0, 0.0}, {}, {}, "m/s",
               "Linear velocity; the shape moves with it from the start frame, and liquid in contact is dragged along.")
      .param_vec3("angular_velocity", {0.0, 0.0, 0.0}, {}, {}, "rad/s",
                  "Angular velocity (world axes): the shape turns about its centre from the start frame (a paddle, a "
                  "turntable); liquid in contact moves with its surface.")
      .param_float("friction", 0.0, 0.0, 10.0, "",
                   "Coulomb friction coefficient at contact (0: free slip).")
      .param_float("restitution", 0.0, 0.0, 1.0, "",
                   "Share of the normal approach speed given back at contact (0: no bounce, right for liquids).")
      .param_float("contact_stiffness", 0.0, 0.0, 1e12, "N/m",
                   "Rigid bodies: the surface's own contact stiffness k (a rubber mat: 1e4); 0: the body's or the "
                   "solver's. Two surfaces with their own are springs in series.")
      .param_float("dissipation_time", 0.0, 0.0, 10.0, "s",
                   "Rigid bodies: the surface's own dissipation time scale tau; 0: the body's or the solver's.");
}

}  // namespace

void register_colliders(Registry& r) {
  {
    NodeSpec s = shape("ColliderBox", "An oriented box. As a container it is the glass tank that holds the liquid.", true);
    s.param_vec3("center", {0.0, 0.5, 0.0}, {}, {}, "m", "Centre of the box.")
        .param_vec3("size", {1.0, 1.0, 1.0}, 0.0, {}, "m", "Edge lengths.")
        .param_vec3("rotate", {0.0, 0.0, 0.0}, {}, {}, "deg", "Rotation, X then Y then Z.");
    contact_params(s);
    r.add(std::move(s.make<ShapeNode<BoxFill>>()));
  }
  {
    NodeSpec s = shape("ColliderSphere", "A sphere.", true);
    s.param_vec3("center", {0.0, 0.5, 0.0}, {}, {}, "m", "Centre.")
        .param_float("radius", 0.5, 0.0, {}, "m", "Radius.");
    contact_params(s);
    r.add(std::move(s.make<ShapeNode<SphereFill>>()));
  }
  {
    NodeSpec s = shape("ColliderEllipsoid", "An oriented ellipsoid with exact signed distance.", true);
    s.param_vec3("center", {0.0, 0.5, 0.0}, {}, {}, "m", "Centre.")
        .param_vec3("radii", {0.5, 0.3, 0.3}, 1e-6, {}, "m", "Semi-axes along local x, y, z.")
        .param_vec3("rotate", {0.0, 0.0, 0.0}, {}, {}, "deg", "Rotation, X then Y then Z.");
    contact_params(s);
    r.add(std::move(s.make<ShapeNode<EllipsoidFill>>()));
  }
  {
    NodeSpec s = shape("ColliderCapsule", "A capsule: the points within `radius` of a segment along local y.", true);
    s.param_vec3("center", {0.0, 0.5, 0.0}, {}, {}, "m", "Centre of the segment.")
        .param_float("radius", 0.1, 0.0, {}, "m", "Radius.")
        .param_float("length", 1.0, 0.0, {}, "m", "Length of the segment between the two cap centres.")
        .param_vec3("rotate", {0.0, 0.0, 0.0}, {}, {}, "deg", "Rotation, X then Y then Z (the axis is local y).");
    contact_params(s);
    r.add(std::move(s.make<ShapeNode<CapsuleFill>>()));
  }
  {
    NodeSpec s = shape("ColliderPlane", "An infinite plane; the liquid stays on the side the normal points to.", false);
    s.param_vec3("origin", {0.0, 0.0, 0.0}, {}, {}, "m", "A point on the plane.")
        .param_vec3("normal", {0.0, 1.0, 0.0}, {}, {}, "", "Direction pointing into the liquid's side.");
    contact_params(s);
    r.add(std::move(s.make<ShapeNode<PlaneFill>>()));
  }
  {
    NodeSpec s = shape("ColliderMesh",
                       "A closed mesh (from ReadMesh) as a collider: its signed distance sampled on a grid, "
                       "trilinear in between. The mesh is placed at `center` (its own origin goes there) and rotated; an "
                       "animated placement moves the samples, which are taken again only for a new mesh or voxel "
                       "size. A deforming mesh (a sequence read with $F, the same points and faces every frame, or "
                       "points carrying v) moves liquid in contact with its surface's velocity: the points' v, else "
                       "their motion since the previous frame, at the closest point of the surface.",
                       true);
    s.input("mesh", "mesh", "A closed mesh.");
    s.reads_previous_inputs = true;  // a sequence's velocity
    s.param_vec3("center", {0.0, 0.0, 0.0}, {}, {}, "m", "Where the mesh's origin goes.")
        .param_vec3("rotate", {0.0, 0.0, 0.0}, {}, {}, "deg", "Rotation about the mesh's origin, X then Y then Z.")
        .param_float("voxelSize", 0.0, 0.0, {}, "m",
                     "Sampling spacing; about the particle radius resolves contact well (0: 1/64 of the mesh's "
                     "largest extent).");
    contact_params(s);
    r.add(std::move(s.make<MeshColliderNode>()));
  }
  {
    NodeSpec s("MergeColliders", "Colliders",
               "Combines any number of collider sets into one, in link order.");
    s.input("colliders", "colliders", "Collider sets to merge.", true, true)
        .output("colliders", "colliders", "All shapes of the inputs.");
    r.add(std::move(s.make<MergeNode>()));
  }
}

}  // namespace eddy::library

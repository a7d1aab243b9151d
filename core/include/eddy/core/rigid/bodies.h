#pragma once
// Rigid bodies: shapes, mass properties and state, as structure of arrays
// over n bodies. Double precision: a body's pose and momentum are carried
// over tens of thousands of steps (a torque-free body must keep |L| to 1e-6
// over 10 s), and a scene's few thousand bodies cost nothing in memory.
//
// Each body has its own frame: origin at the centre of mass, axes along the
// principal axes of inertia, so the inertia tensor in body axes is the
// diagonal I0 and in world axes I(t) = R(t) I0 R(t)^T.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/enum_names.h"
#include "eddy/core/mesh.h"
#include "eddy/core/mesh_sdf.h"

namespace eddy {

using Vec3d = Eigen::Vector3d;
using Mat3d = Eigen::Matrix3d;
using Quatd = Eigen::Quaterniond;

enum class BodyShape : int32_t { Box = 0, Sphere = 1, Capsule = 2, Mesh = 3 };
inline constexpr EnumName<BodyShape> kBodyShapeNames[] = {{BodyShape::Box, "box"},
                                                         {BodyShape::Sphere, "sphere"},
                                                         {BodyShape::Capsule, "capsule"},
                                                         {BodyShape::Mesh, "mesh"}};

// A closed triangle mesh as a body's shape, in the body frame (centre of
// mass at the origin, axes along the principal axes of inertia); shared,
// never changed, by every body made from the same mesh.
//   mesh     the surface, for drawing and for its mass properties
//   sdf      its signed distance sampled on a grid (mesh_to_sdf), which the
//            other bodies' samples and the liquids meet: `grid` is the same
//            as a Grid collider in the body frame
//   samples  points on the surface that meet the other shapes: the corners
//            and points along the edges, thinned to one per cell of
//            `spacing` so that a fine mesh does not bring thousands of
//            contacts
//   lo, hi   the bounds of the mesh; reach: its farthest point from the
//            centre of mass
struct BodyMesh {
  Mesh mesh;
  SampledSdf sdf;
  Collider grid;
  std::vector<Vec3d> samples;
  double spacing = 0;
  Vec3d lo = Vec3d::Zero(), hi = Vec3d::Zero();
  double reach = 0;

  BodyMesh() = default;
  BodyMesh(const BodyMesh&) = delete;  // grid points into sdf
  BodyMesh& operator=(const BodyMesh&) = delete;
  // Fills grid, samples, bounds and reach from mesh and sdf (after loading them).
  void finish(double sample_spacing);
};

// A shape in its body frame (centre of mass at the origin):
//   Box      half extents `half` along the body axes
//   Sphere   `radius`
//   Capsule  `radius` around the segment y in [-half_height, half_height]
//   Mesh     `mesh` (body_mesh)
// Spheres and capsules are a core (a point, a segment) inflated by the
// radius; boxes and meshes have no radius.
struct BodyGeometry {
  BodyShape shape = BodyShape::Box;
  Vec3d half = Vec3d::Constant(0.5);  // m, box
  double radius = 0.0;                // m, sphere and capsule
  double half_height = 0.0;           // m, capsule: half the length of its axis segment
  std::shared_ptr<const BodyMesh> mesh;  // mesh
};

// A closed mesh, wound outward, as a body's shape: moved to its centre of
// mass and turned onto its principal axes, its signed distance sampled at
// `voxel_size` (m, > 0) and its surface samples `2 voxel_size` apart.
// The placement returned says where the body frame sits in the mesh's own
// frame (p_mesh = center_of_mass + axes * p_body): a body placed with
// orientation q * axes at x stands where the mesh, turned by q about its
// centre of mass, would stand with that centre at x. Throws eddy::Error for
// a mesh that is not closed or encloses no volume. `threads` as
// CpuExecutor's.
struct BodyMeshPlacement {
  std::shared_ptr<const BodyMesh> shape;
  Vec3d center_of_mass = Vec3d::Zero();   // in the mesh's frame
  Quatd axes = Quatd::Identity();         // body axes -> mesh axes
};
BodyMeshPlacement body_mesh(const Mesh& mesh, double voxel_size, int threads = 0);

// Mass, centre of mass and inertia tensor about the centre of mass, in the
// frame the shape is given in.
struct MassProperties {
  double mass = 0;                     // kg
  Vec3d com = Vec3d::Zero();           // m
  Mat3d inertia = Mat3d::Zero();       // kg m^2
};

// Uniform density (kg/m^3) over the shape: analytic for the primitives.
MassProperties mass_properties(const BodyGeometry& g, double density);
// A closed triangle mesh wound outward (quads split), by the divergence
// theorem over the tetrahedra each face makes with the origin (Mirtich 1996;
// Eberly, "Polyhedral Mass Properties"). Throws eddy::Error when the mesh
// encloses no positive volume.
MassProperties mesh_mass_properties(const Mesh& mesh, double density);

// A contact's stiffness k (N/m) and dissipation time scale tau (s) from its
// two surfaces'. A surface's own values (0: the solver's, `k0` and `tau0`, in
// their place) hold where it has any; one with neither is rigid beside one
// that has them, and a contact between two such takes the solver's. Two
// surfaces with their own are two Kelvin-Voigt elements in series: springs
// k = k_a k_b / (k_a + k_b), dampers c = k tau likewise, tau = c / k =
// tau_a tau_b (k_a + k_b) / (k_a tau_a + k_b tau_b).
struct ContactParameters {
  double stiffness = 0, tau = 0;
};
// `ka`, `taua`, `kb`, `taub`: the surfaces' own values (0: none), a body's
// or a collider's.
ContactParameters contact_parameters(double ka, double taua, double kb, double taub, double k0, double tau0);

// The bodies of a scene (n of each; sizes in the comments).
struct Bodies {
  std::vector<std::string> name;         // (n)
  std::vector<BodyGeometry> geometry;    // (n) in body axes
  std::vector<double> mass;              // (n) kg
  std::vector<Vec3d> inertia;            // (n) kg m^2, principal moments I0 (body axes)
  std::vector<double> friction;          // (n) Coulomb coefficient of the surface
  // (n) the surface's own contact stiffness k (N/m) and dissipation time
  // scale tau (s); 0: none of its own (see contact_parameters).
  std::vector<double> stiffness, dissipation;
  std::vector<Vec3d> x;                  // (n) m, centre of mass, world
  std::vector<Quatd> q;                  // (n) unit quaternion, body -> world
  std::vector<Vec3d> v;                  // (n) m/s, velocity of the centre of mass, world
  std::vector<Vec3d> w;                  // (n) rad/s, angular velocity, world axes

  std::size_t size() const { return x.size(); }
  // Appends a body of uniform `density` (kg/m^3) with its centre of mass at
  // `position`, turned by `rotation`; returns its index. Throws eddy::Error
  // naming the body for a non-positive size or density.
  std::size_t add(const std::string& name, const BodyGeometry& g, double density, const Vec3d& position,
                  const Quatd& rotation = Quatd::Identity(), const Vec3d& velocity = Vec3d::Zero(),
                  const Vec3d& angular_velocity = Vec3d::Zero(), double friction = 0.5);
  // Appends every body of `other`.
  void append(const Bodies& other);
  // Gives body i's surface its own contact stiffness k (N/m) and dissipation
  // time scale tau (s); 0 leaves either to the solver. Throws eddy::Error
  // naming the body for a negative or non-finite value.
  void set_contact(std::size_t i, double stiffness, double dissipation);

  // World-axes inertia tensor R I0 R^T of body i.
  Mat3d inertia_world(std::size_t i) const;
  // Linear and angular momentum (the latter about the world origin) and
  // kinetic energy of body i.
  Vec3d linear_momentum(std::size_t i) const { return mass[i] * v[i]; }
  Vec3d angular_momentum(std::size_t i) const;
  double kinetic_energy(std::size_t i) const;
};

// The bodies' shapes as one closed mesh in world space, wound outward:
// boxes as six quads, spheres and capsules as surfaces of revolution with
// `segments` around their axis (at least 6), meshes as they are.
Mesh bodies_to_mesh(const Bodies& bodies, int segments = 24);

// Between the bodies' double vectors and the float vectors of colliders,
// meshes and particles.
inline Vec3d to_vec3d(const Vec3f& v) { return Vec3d(v.x, v.y, v.z); }
inline Vec3f to_vec3f(const Vec3d& v) { return vec3(float(v.x()), float(v.y()), float(v.z())); }

// The cross-product matrix: skew(a) b = a x b.
inline Mat3d skew(const Vec3d& a) {
  Mat3d s;
  s << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return s;
}

// Torque-free rotation over one step h in body axes, by the implicit
// midpoint rule on Euler's equation I0 dw/dt + w x (I0 w) = 0: it keeps
// both quadratic invariants, |I0 w| (= |L|) and w . I0 w (= 2 E), to
// round-off at any h. Returns the body-axes angular velocity at the step's
// end; `mid` receives the midpoint velocity the orientation turns with.
Vec3d free_rotation_step(const Vec3d& inertia, const Vec3d& w_body, double h, Vec3d* mid = nullptr);

// q turned by the body-axes rotation vector theta (q * exp(theta / 2)), renormalised.
Quatd rotate_body(const Quatd& q, const Vec3d& theta);

}  // namespace eddy

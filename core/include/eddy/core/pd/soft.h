#pragma once
// Soft bodies and cloth: the state Projective Dynamics steps (pd.h).
//
// Every object is a set of simulation nodes (x, v, mass) and its elements:
// tetrahedra for a soft body (a lattice inside its surface, soft_body()),
// triangles for cloth (the user's mesh itself, cloth()). What is shown and
// written is the user's own surface, each of its points embedded in the
// nodes by fixed weights (barycentric in a tetrahedron; a cloth's points
// are its nodes), so the output is the input mesh deformed.
//
// Double precision: the global step solves a sparse system with a
// factorisation, and the convergence tests compare against Newton to 1e-6.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "eddy/core/collider.h"
#include "eddy/core/mesh.h"

namespace eddy {

using Vec3d = Eigen::Vector3d;

// A material in physical units. The constraint weights follow from it
// (pd/system.h says how, and tests check the small-strain limit).
struct SoftMaterial {
  double young_modulus = 1e5;   // Pa
  double poisson_ratio = 0.3;   // in [0, 0.49]
  double density = 1000.0;      // kg/m^3
  double thickness = 1e-3;      // m, cloth: the sheet's thickness (membrane stiffness and mass per area)
  double bend_stiffness = 0.0;  // N m, cloth: bending rigidity D (energy D/2 * integral of (2H)^2 over the area)
  double strain_min = 1.0;      // principal stretches in [strain_min, strain_max] cost nothing (1, 1: none)
  double strain_max = 1.0;
  double friction = 0.5;        // Coulomb coefficient against colliders
};

// One object's share of the arrays (half-open ranges).
struct SoftObject {
  std::string name;
  SoftMaterial material;
  bool cloth = false;
  uint32_t node_begin = 0, node_end = 0;
  uint32_t tet_begin = 0, tet_end = 0;
  uint32_t tri_begin = 0, tri_end = 0;
  uint32_t surface_point_begin = 0, surface_point_end = 0;
};

struct SoftBodies {
  std::vector<SoftObject> objects;
  // Nodes (n of each).
  std::vector<Vec3d> x;           // m, world
  std::vector<Vec3d> v;           // m/s
  std::vector<Vec3d> rest;        // m, the rest shape
  std::vector<double> mass;       // kg
  std::vector<uint8_t> pinned;    // 1: held at pin_target
  std::vector<uint8_t> touches;   // 1: the node meets colliders itself (a soft body's lattice nodes inside
                                  // its surface; a cloth's nodes are its surface points, which meet them)
  std::vector<Vec3d> pin_target;  // m, where a pinned node is held
  // Pins that move with a collider (PdSolver::set_attach_colliders): the
  // collider's index, -1 none, and the node's place in its frame.
  std::vector<int32_t> attach;
  std::vector<Vec3d> attach_local;
  // Elements, indices into the nodes.
  std::vector<std::array<int32_t, 4>> tets;  // positively oriented in the rest shape
  std::vector<std::array<int32_t, 3>> tris;  // cloth
  // The surface shown: its topology (points are placed by deformed_surface)
  // and each point as weights over four nodes (unused slots: weight 0).
  Mesh surface;
  std::vector<std::array<int32_t, 4>> embed_node;
  std::vector<std::array<double, 4>> embed_weight;
  // The solver's contact slots when the state was stored (PdSolver: the
  // points near a surface that have room for a contact in its factored
  // matrix, in order, and their weights). Part of the state because they
  // shape the next steps (a slot softens its point's moves), so a solver
  // loaded from it steps as the one that stored it. Empty: none yet.
  std::vector<uint32_t> contact_slots;
  std::vector<double> contact_slot_weights;

  std::size_t size() const { return x.size(); }
  double total_mass() const;
  Vec3d momentum() const;
  // Appends every object of `other` (indices shifted).
  void append(const SoftBodies& other);
  // The surface at the current node positions, with point normals and a
  // point attribute-free layout (the user's faces, quads kept).
  Mesh deformed_surface() const;
  // Surface points' velocities, the same embedding (for motion blur and
  // liquids meeting the surface).
  std::vector<Vec3d> surface_velocity() const;
  // Pins every node of object `o` inside the box (world, at the current
  // positions) to where it is now; returns how many.
  std::size_t pin_box(std::size_t o, const Vec3d& lo, const Vec3d& hi);
  // Pins every node within `distance` of one of the colliders (at time t)
  // to it: the node then moves with the collider (a flag on a swaying pole,
  // a cloth held by a moving bar). Returns how many.
  std::size_t attach_to(const std::vector<Collider>& colliders, double distance, float t);
};

// Cloth from a triangle mesh (quads split along their first diagonal): a
// node per mesh point, its mass from the faces' areas (density * thickness
// * area / 3 to each corner); points no face uses are pinned. Throws eddy::Error naming `name` for a mesh
// without faces or with a face of zero area.
SoftBodies make_cloth(const Mesh& mesh, const SoftMaterial& m, const std::string& name);

// A soft body from a closed surface: the cells of a lattice of `cell_size`
// whose centres lie inside (inside.distance < 0, a signed distance as the
// colliders give it, evaluated at time 0), each cut into six tetrahedra
// (Freudenthal, conforming across cells); the surface's points embedded in
// the tetrahedron that holds them (or, outside every kept cell, in the
// nearest one, extrapolated). Masses sum to density times the volume the
// surface encloses. The surface's points and the lattice nodes inside it
// meet colliders; nodes outside it (corners of cells poking out) do not. Throws eddy::Error naming `name` when no cell is inside.
SoftBodies make_soft_body(const Mesh& surface, const Collider& inside, double cell_size, const SoftMaterial& m,
                          const std::string& name);

}  // namespace eddy

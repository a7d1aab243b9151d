#pragma once
// Mesh: points plus triangle and quad index arrays, optional point normals
// and point velocities (Houdini's `v`, which renderers use for motion blur).
//
// Faces are wound counter-clockwise seen from outside (the right-hand normal
// points out of the enclosed volume), as Houdini, Blender and the OBJ and PLY
// conventions expect; a closed outward mesh has a positive signed volume.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "eddy/core/reduce_ops.h"
#include "eddy/core/vec.h"

namespace eddy {

struct Mesh {
  std::vector<Vec3f> points;
  std::vector<std::array<int32_t, 3>> triangles;
  std::vector<std::array<int32_t, 4>> quads;
  std::vector<Vec3f> normals;     // empty, or one per point
  std::vector<Vec3f> velocities;  // empty, or one per point (m/s)

  std::size_t face_count() const { return triangles.size() + quads.size(); }
  bool empty() const { return points.empty(); }
  std::size_t memory_bytes() const {
    return (points.size() + normals.size() + velocities.size()) * sizeof(Vec3f) + triangles.size() * 12 +
           quads.size() * 16;
  }
};

// A box of half extents `half` about `center`: 8 points (corner c at
// center + (+-half.x, +-half.y, +-half.z), the signs from c's bits x, y, z),
// six quads wound outward.
Mesh box_mesh(Vec3f center, Vec3f half);
// A UV sphere of `radius` about the origin, wound outward: poles on the y
// axis, `rings` bands of latitude (quads between triangle fans at the
// poles), `segs` points around each.
Mesh sphere_mesh(float radius, int rings, int segs);
// A flat grid of nu x nv quads spanning the edges u and v about `center`:
// point (i, j) at center + (i / nu - 1/2) u + (j / nv - 1/2) v, index
// j (nu + 1) + i; quads counter-clockwise seen from u x v.
Mesh grid_mesh(Vec3f center, Vec3f u, Vec3f v, int nu, int nv);

// Area-weighted point normals from the faces' right-hand normals.
void compute_point_normals(Mesh& mesh);
// Reverses the winding of every face (and flips the normals).
void flip_winding(Mesh& mesh);
// Throws eddy::Error naming `source` when an index is out of range.
void check_mesh(const Mesh& mesh, const std::string& source);

// Geometry and topology of a mesh; quads count as two triangles.
struct MeshStats {
  std::size_t points = 0, triangles = 0;  // after splitting quads
  double area = 0;                        // m^2
  double volume = 0;                      // m^3, signed: positive when wound outward
  std::size_t edges = 0;
  std::size_t boundary_edges = 0;      // used by one face
  std::size_t nonmanifold_edges = 0;   // used by three or more faces
  std::size_t inconsistent_edges = 0;  // two faces traverse it in the same direction
  std::size_t components = 0;          // edge-connected face sets
  long euler = 0;                      // V - E + F over the referenced points
  double min_angle_deg = 0;            // smallest triangle angle
  double sliver_share = 0;             // share of triangles with an angle under 10 degrees
};
MeshStats measure_mesh(const Mesh& mesh);
// The bounds of the mesh's points (empty_bounds() for none).
Bounds3 mesh_bounds(const Mesh& mesh);
// Throws eddy::Error naming the mesh as `name` ("input 'mesh'") when it has
// no faces or is not closed, so that it has no inside to fill or sample.
void require_closed(const Mesh& mesh, const std::string& name);

// OBJ (v, vn, f with v, v/t, v//n, v/t/n; polygons of more than four sides
// are fanned into triangles) and binary little-endian PLY (vertex x y z
// [nx ny nz], face vertex_indices). Writers are atomic; readers throw
// eddy::Error naming the file and the line or element that is wrong.
std::string encode_obj(const Mesh& mesh);
Mesh decode_obj(const std::string& text, const std::string& source);
std::string encode_ply_mesh(const Mesh& mesh);
Mesh decode_ply_mesh(const std::string& data, const std::string& source);
// By extension: .obj or .ply.
void write_mesh(const std::string& path, const Mesh& mesh);
Mesh read_mesh(const std::string& path);

}  // namespace eddy

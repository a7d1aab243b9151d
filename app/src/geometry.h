#pragma once
// The binary geometry of GET /api/geometry: compact, little-endian, every
// field 4-byte aligned so a browser reads it with typed arrays in place.
//
//   u8[4] "EDGY", u32 version (1), u32 kind (1 points, 2 mesh)
//   points: u32 count, f32 radius, u32 attributes;
//           f32 P[count * 3];
//           per attribute: u32 name bytes, name (zero-padded to 4), u32 type
//           (0 float, 1 int32, 2 vec3), data[count x 1 or 3] (4 bytes each)
//   mesh:   u32 points, u32 triangles (quads split in two), u32 has_normals;
//           f32 P[points * 3]; f32 N[points * 3] if has_normals;
//           u32 indices[triangles * 3]
//   colliders (kind 3): u32 count; per shape 27 words: u32 type (0 plane,
//           1 box, 2 sphere, 3 ellipsoid, 4 capsule, 5 sampled grid), u32
//           inside, f32 center[3], f32 rotation[9] (rows, local to world),
//           f32 size[3], f32 velocity[3] (the centre moves with it from
//           time 0), f32 grid_origin[3], f32 grid_dx, i32 grid_dims[3]
#include <string>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/mesh.h"
#include "eddy/core/points.h"

namespace eddy::app {

// Points with P and the named attributes (all of them when `attributes` is
// empty); throws eddy::Error naming an attribute the points do not have.
std::string encode_points(const Points& points, const std::vector<std::string>& attributes);
std::string encode_mesh(const Mesh& mesh);
std::string encode_colliders(const std::vector<Collider>& shapes);

}  // namespace eddy::app

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
//   colliders (kind 3): u32 count; per shape 30 words: u32 type (0 plane,
//           1 box, 2 sphere, 3 ellipsoid, 4 capsule, 5 sampled grid), u32
//           inside, f32 center[3], f32 rotation[9] (rows, local to world),
//           f32 size[3], f32 velocity[3] (the centre moves with it from
//           time 0), f32 grid_origin[3], f32 grid_dx, i32 grid_dims[3],
//           f32 angular_velocity[3] (rad/s: the shape turns about its
//           centre, rotation(t) = Rot(angular_velocity t) rotation)
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/mesh.h"
#include "eddy/core/points.h"

namespace eddy::app {

// Encoded geometry as a list of byte ranges: small headers it owns, and the
// arrays of the value itself, which are sent from where they are (a 1M
// particle frame is not copied); the value must outlive it.
class Encoded {
 public:
  void own(std::string s) {
    owned_.push_back(std::make_unique<std::string>(std::move(s)));
    view(owned_.back()->data(), owned_.back()->size());
  }
  void view(const void* p, std::size_t n) {
    if (n) parts_.push_back({static_cast<const char*>(p), n});
    size_ += n;
  }
  std::size_t size() const { return size_; }
  const std::vector<std::pair<const char*, std::size_t>>& parts() const { return parts_; }
  std::string str() const;  // all of it in one string (tests)

 private:
  std::vector<std::unique_ptr<std::string>> owned_;
  std::vector<std::pair<const char*, std::size_t>> parts_;
  std::size_t size_ = 0;
};

// Points with P and the named attributes (all of them when `attributes` is
// empty); throws eddy::Error naming an attribute the points do not have.
Encoded encode_points(const Points& points, const std::vector<std::string>& attributes);
Encoded encode_mesh(const Mesh& mesh);
Encoded encode_colliders(const std::vector<Collider>& shapes);

}  // namespace eddy::app

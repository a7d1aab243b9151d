#pragma once
// Boundary particles on collider surfaces, for SPH walls after Akinci et al.
// 2012 ("Versatile rigid-fluid coupling for incompressible SPH"): one layer
// of particles on each collider surface, whose volumes are corrected by
// their own sampling density, so irregular sampling still gives the fluid
// the density of a wall.
//
// Each collider is sampled on a cubic lattice of the given spacing in its
// local frame, `depth` behind its surface (into the solid): every lattice
// point within half a spacing of the surface is projected onto it, then
// moved `depth` along the normal; a box is sampled on the box grown (or, for
// a solid box, shrunk) by `depth` instead, so its faces' layers meet at the
// edges. A face aligned with the frame so gets a regular grid of samples;
// curved faces get about one sample per spacing^2.
#include <cstdint>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/reduce_ops.h"

namespace eddy {

struct BoundarySamples {
  std::vector<Vec3f> local;        // (n x 1) positions in their collider's local frame (at t = 0)
  std::vector<uint32_t> collider;  // (n x 1) index into the collider list
};

// Samples every collider's surface within `domain` (world bounds; planes are
// infinite and other shapes may be large, so sampling stops at the domain).
// Throws eddy::Error naming the collider when one would need more than
// `max_samples` particles.
BoundarySamples sample_collider_surfaces(const std::vector<Collider>& colliders, const Bounds3& domain, float spacing,
                                         float depth, std::size_t max_samples);

// World bounds of a collider's surface at t = 0 (a plane: everything).
Bounds3 collider_world_bounds(const Collider& c);

// World position at time t of a sample at local position q of collider c.
EDDY_HD_INLINE Vec3f boundary_world(const Collider& c, Vec3f q, float t) {
  const ColliderPose pose = collider_pose(c, t);
  return pose.rotation * q + pose.center;
}

}  // namespace eddy

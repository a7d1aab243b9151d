#pragma once
// Contact detection between rigid bodies, and between bodies and colliders.
//
// Broad phase: sweep and prune over world bounding boxes along the axis of
// largest spread. Narrow phase: sampled signed distance. Each shape has
// sample points on its core (a box's 8 corners and 12 edge midpoints; a
// sphere's centre; five points along a capsule's axis; a mesh's surface
// samples, BodyMesh) and a signed distance (exact for the primitives,
// sampled on a grid for a mesh); a contact is a sample of one shape within `margin` of the
// other's surface. Spheres and capsules send their core samples to the
// other shape; two boxes sample each other both ways with their corners and,
// on each edge, the point deepest in the other box (found by a
// golden-section search: crossing edges), and a mesh meets a box or a mesh
// both ways with its surface samples; capsule pairs add the closest
// points of their axes. Colliders are met through their own signed distance
// (collider_walls: a box container's three nearest walls).
#include <utility>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/rigid/bodies.h"

namespace eddy {

struct BodyContact {
  int a = -1;                    // body
  int b = -1;                    // body, or -1 for a collider
  int collider = -1;             // the collider when b == -1
  Vec3d p = Vec3d::Zero();       // m, world point midway between the surfaces
  Vec3d n = Vec3d::UnitY();      // unit normal from b (or the collider) towards a
  double phi = 0;                // m, signed distance (< 0: penetrating)
  Vec3d u = Vec3d::Zero();       // m/s, the collider's surface velocity at p (b == -1)
};

// World bounds of body i's shape, grown by `margin` on every side.
struct BoundsD {
  Vec3d lo, hi;
};
BoundsD body_bounds(const Bodies& bodies, std::size_t i, double margin);
// The farthest point of body i's surface from its centre of mass, m.
double body_reach(const Bodies& bodies, std::size_t i);
// The fastest any point of body i's surface moves, at most: |v| + |w| times
// its reach, m/s.
double body_surface_speed(const Bodies& bodies, std::size_t i);

// Pairs (i < j) of boxes that overlap: sweep and prune; ordered by (i, j).
std::vector<std::pair<int, int>> overlapping_pairs(const std::vector<BoundsD>& bounds);

// A sampled feature of another body: its normal cone (that body's axes,
// contact.cpp) and the rotation from the measured body's axes into them.
struct FeatureCone {
  Vec3d cone;
  Quatd to_feature;
};

// Signed distance of body i's shape at world point p, with the unit
// outward normal (world). Inside a box, with `feature`, a nearer face may be
// passed over for a slightly deeper one whose normal the feature's cone
// supports (contact.cpp says when). At a distance of `normal_below` or
// more the normal may be left unmeasured (a mesh's costs six reads of its
// grid): a caller that drops such points passes its cut-off.
double body_distance(const Bodies& bodies, std::size_t i, const Vec3d& p, Vec3d* normal,
                     const FeatureCone* feature = nullptr, double normal_below = 1e300);

// Every contact of the bodies with each other and with the colliders at
// simulation time `time`, within `margin` (m) of touching.
void find_contacts(const Bodies& bodies, const std::vector<Collider>& colliders, double time, double margin,
                   std::vector<BodyContact>& out);

}  // namespace eddy

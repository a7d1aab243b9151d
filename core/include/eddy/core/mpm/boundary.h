#pragma once
// MPM's boundary at the grid nodes: what a wall does to a node's velocity,
// where the material touches a solid, and the colliders' and the domain's
// rules at a node. Part of the step (solver.h's grid_update), on the host
// and the device alike.
#include "eddy/core/collider.h"
#include "eddy/core/hd.h"
#include "eddy/core/mat3.h"
#include "eddy/core/mpm/mpm.h"

namespace eddy::mpm {

// The boundary rule on a node's velocity relative to a wall with unit
// normal n (into the material) moving at vw.
EDDY_HD_INLINE Vec3f wall_velocity(int rule, Vec3f v, Vec3f n, Vec3f vw, float friction) {
  if (rule == int(MpmBoundary::Sticky)) return vw;
  Vec3f rel = v - vw;
  const float vn = dot(rel, n);
  if (rule == int(MpmBoundary::Slip)) return v - n * vn;
  if (vn >= 0.0f) return v;  // separating
  Vec3f vt = rel - n * vn;
  const float lt = length(vt);
  if (friction > 0.0f) vt = lt + friction * vn > 0.0f ? vt * (1.0f + friction * vn / lt) : vec3(0.0f);
  return vw + vt;
}

// The share of a node's cell a solid fills when it is smeared by the same
// B-spline as the material's particles: the kernel's integral over the
// solid's half-space, for a node `u` cells outside its (locally flat)
// surface. 1/2 on the surface, 0 from 1.5 cells out, 1 from 1.5 cells in.
EDDY_HD_INLINE float solid_fraction(float u) {
  const float a = -u;  // cells inside
  if (a <= -1.5f) return 0.0f;
  if (a <= -0.5f) return (1.5f + a) * (1.5f + a) * (1.5f + a) * (1.0f / 6.0f);
  if (a <= 0.5f) return 1.0f / 6.0f + 0.75f * (a + 0.5f) - (a * a * a + 0.125f) * (1.0f / 3.0f);
  if (a <= 1.5f) return 1.0f - (1.5f - a) * (1.5f - a) * (1.5f - a) * (1.0f / 6.0f);
  return 1.0f;
}

// Whether the material at a node touches a solid (Bardenhagen et al. 2000's
// multi-material contact, the solid's share taken from its signed
// distance): the material's volume fraction there, V_p sum_p w_ip / dx^3,
// and the solid's overfill the cell. Both smeared alike, the two fractions
// sum to exactly 1 at every node between them when the material's edge lies
// on the surface, and to more wherever it overlaps, wherever the surface
// lies in the grid. Farther than half a cell out (a solid share under 1/6)
// the overfill must also clear the noise of the particles' sampled fraction
// (a percent or two once they are disordered), by a margin growing to 1/12
// at the kernel's reach: without it, nodes a cell off a surface, full of
// material, were held at random, and the material stuck to solids moving
// into it.
// `overfills` takes the solid's share itself (a box container's three
// nearest faces together: 1 - prod_f (1 - share_f)), `in_contact` a
// surface's distance in cells.
EDDY_HD_INLINE bool overfills(float material_fraction, float solid) {
  return solid > 0.0f && material_fraction + solid > 1.0f + 0.5f * fmaxf(0.0f, 1.0f / 6.0f - solid);
}
EDDY_HD_INLINE bool in_contact(float material_fraction, float distance_cells) {
  return overfills(material_fraction, solid_fraction(distance_cells));
}

// A collider's rule at a grid node xi (material volume fraction `fraction`)
// of velocity v. A box container's faces meet at concave edges and
// corners, where its nearest face alone let the material through the
// others (5 % of a tank of water at rest in 4 s), so each face within reach
// acts, once the material and the solid (all its faces' shares together)
// overfill the node.
EDDY_HD_INLINE Vec3f collider_rule(int rule, const Collider& col, Vec3f xi, float t, float inv_dx, float fraction,
                                   Vec3f v) {
  SdfSample w[3];
  float share[3], solid = 0.0f;  // the union 1 - prod_f (1 - share_f), exactly share[0] for one face
  const int nw = collider_walls(col, xi, t, w);
  for (int f = 0; f < nw; ++f) {
    share[f] = solid_fraction(w[f].distance * inv_dx);
    solid += share[f] - solid * share[f];
  }
  if (!overfills(fraction, solid)) return v;
  for (int f = 0; f < nw; ++f)
    if (share[f] > 0.0f) v = wall_velocity(rule, v, w[f].normal, collider_velocity(col, xi, t), col.friction);
  return v;
}

// The domain box's rule at the nodes within a cell of a face.
EDDY_HD_INLINE Vec3f domain_rule(int rule, Vec3f xi, Vec3f lo, Vec3f hi, float dx, float friction, Vec3f v) {
  for (int a = 0; a < 3; ++a) {
    Vec3f n = vec3(0.0f);
    if (at(xi, a) < at(lo, a) + dx) at(n, a) = 1.0f;
    else if (at(xi, a) > at(hi, a) - dx) at(n, a) = -1.0f;
    else continue;
    v = wall_velocity(rule, v, n, vec3(0.0f), friction);
  }
  return v;
}

}  // namespace eddy::mpm

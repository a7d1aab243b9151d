#pragma once
// MPM's boundary at the grid nodes: what a wall does to a node's velocity,
// and where the material touches a solid. Part of the step (solver.h's
// grid_update), on the host and the device alike.
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

}  // namespace eddy::mpm

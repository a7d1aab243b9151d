// Boundary particles on collider surfaces (see boundary.h).
#include "eddy/core/sph/boundary.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "eddy/core/error.h"

namespace eddy {

namespace {

const char* shape_name(ShapeType t) {
  switch (t) {
    case ShapeType::Plane: return "plane";
    case ShapeType::Box: return "box";
    case ShapeType::Sphere: return "sphere";
    case ShapeType::Ellipsoid: return "ellipsoid";
    case ShapeType::Capsule: return "capsule";
    case ShapeType::Grid: return "mesh";
  }
  return "?";
}

// Local-frame bounds of a shape's surface, padded by `pad`; planes get the
// thin slab around y = 0 (x and z come from the domain).
Bounds3 local_bounds(const Collider& c, float pad) {
  const float inf = 3.0e38f;
  switch (c.type) {
    case ShapeType::Plane: return {vec3(-inf, -pad, -inf), vec3(inf, pad, inf)};
    case ShapeType::Box:
    case ShapeType::Ellipsoid: return {-c.size - vec3(pad), c.size + vec3(pad)};
    case ShapeType::Sphere: return {vec3(-c.size.x - pad), vec3(c.size.x + pad)};
    case ShapeType::Capsule: {
      const float r = c.size.x + pad;
      return {vec3(-r, -c.size.y - r, -r), vec3(r, c.size.y + r, r)};
    }
    case ShapeType::Grid: {
      const Vec3f hi = c.grid_origin + vec3(float(c.grid_dims[0] - 1), float(c.grid_dims[1] - 1),
                                            float(c.grid_dims[2] - 1)) * c.grid_dx;
      return {c.grid_origin - vec3(pad), hi + vec3(pad)};
    }
  }
  return {vec3(0.0f), vec3(0.0f)};
}

// The domain's bounds seen in the collider's local frame (the box around its
// eight corners, moved back by the collider's placement at t = 0).
Bounds3 domain_in_local(const Collider& c, const Bounds3& d) {
  Bounds3 out = empty_bounds();
  for (int k = 0; k < 8; ++k) {
    const Vec3f p = vec3(k & 1 ? d.hi.x : d.lo.x, k & 2 ? d.hi.y : d.lo.y, k & 4 ? d.hi.z : d.lo.z);
    const Vec3f q = mul_transpose(c.rotation, p - c.center);
    out = {vmin(out.lo, q), vmax(out.hi, q)};
  }
  return out;
}

}  // namespace

Bounds3 collider_world_bounds(const Collider& c) {
  if (c.type == ShapeType::Plane) return {vec3(-3.0e38f), vec3(3.0e38f)};
  const Bounds3 l = local_bounds(c, 0.0f);
  Bounds3 out = empty_bounds();
  for (int k = 0; k < 8; ++k) {
    const Vec3f q = vec3(k & 1 ? l.hi.x : l.lo.x, k & 2 ? l.hi.y : l.lo.y, k & 4 ? l.hi.z : l.lo.z);
    const Vec3f p = c.rotation * q + c.center;
    out = {vmin(out.lo, p), vmax(out.hi, p)};
  }
  return out;
}

BoundarySamples sample_collider_surfaces(const std::vector<Collider>& colliders, const Bounds3& domain, float spacing,
                                         float depth, std::size_t max_samples) {
  if (!(spacing > 0)) throw Error("boundary sampling: the spacing must be positive");
  BoundarySamples out;
  const float s = spacing, half = 0.5f * spacing;
  for (std::size_t k = 0; k < colliders.size(); ++k) {
    const Collider& c = colliders[k];
    // The layer lies on the surface moved `depth` into the solid. Smooth
    // shapes are sampled on their surface and pushed along the normal; a
    // box is sampled on the box grown (container) or shrunk (solid) by
    // `depth`, so the layers of two faces run on to meet at the edge. (Pushed
    // along the normal, the lattice row on an edge went to one face only and
    // left the other face's layer a row short: a resting column's particles
    // slipped into that hole, and a lattice at rest read up to 1.6 % over
    // rest density next to an edge, 2.7 % on it and 3.5 % in a corner; now
    // 0.06 %, 0.56 % and 1.9 %, tests/unit/core/sph_test.cpp.)
    Collider at_rest = c;
    at_rest.velocity = vec3(0.0f);
    float push = depth;
    if (c.type == ShapeType::Box) {
      at_rest.size = vmax(c.size + vec3(c.inside ? depth : -depth), vec3(0.0f));
      push = 0.0f;
    }
    const Bounds3 shape = local_bounds(at_rest, s), dom = domain_in_local(c, domain);
    const Vec3f lo = vmax(shape.lo, dom.lo - vec3(s)), hi = vmin(shape.hi, dom.hi + vec3(s));
    if (lo.x > hi.x || lo.y > hi.y || lo.z > hi.z) continue;
    // The lattice is anchored at the local origin, so a box's faces (at
    // +-size) sit at the same phase on both sides.
    const long i0 = long(std::floor(lo.x / s)), i1 = long(std::ceil(hi.x / s));
    const long j0 = long(std::floor(lo.y / s)), j1 = long(std::ceil(hi.y / s));
    const long k0 = long(std::floor(lo.z / s)), k1 = long(std::ceil(hi.z / s));
    const double points = double(i1 - i0 + 1) * double(j1 - j0 + 1) * double(k1 - k0 + 1);
    // A surface holds far fewer samples than its lattice box has points;
    // refuse before scanning a box that is hopeless anyway.
    if (points > 4.0e8)
      throw Error("collider " + std::to_string(k) + " (" + shape_name(c.type) +
                  ") is too large to sample with boundary particles at spacing " + std::to_string(s) +
                  " m within the simulation domain; use spring-damper walls or a coarser particle radius");
    const std::size_t first = out.local.size();
    for (long kk = k0; kk <= k1; ++kk)
      for (long jj = j0; jj <= j1; ++jj)
        for (long ii = i0; ii <= i1; ++ii) {
          const Vec3f q = vec3(float(ii) * s, float(jj) * s, float(kk) * s);
          const Vec3f p = boundary_world(at_rest, q, 0.0f);
          const SdfSample sd = collider_sdf(at_rest, p, 0.0f);
          // Half-open, so a surface exactly between two lattice planes is sampled once.
          if (!(sd.distance >= -half && sd.distance < half)) continue;
          const Vec3f on = p - sd.normal * (sd.distance + push);
          out.local.push_back(mul_transpose(c.rotation, on - c.center));
          out.collider.push_back(uint32_t(k));
        }
    if (out.local.size() > max_samples)
      throw Error("collider " + std::to_string(k) + " (" + shape_name(c.type) + ") needs " +
                  std::to_string(out.local.size() - first) + " boundary particles, beyond the limit of " +
                  std::to_string(max_samples) + "; use spring-damper walls or a coarser particle radius");
  }
  return out;
}

}  // namespace eddy

#pragma once
// Colliders: signed-distance shapes with a rigid placement and a velocity.
//
// Distances are positive on the fluid side and negative inside the solid; the
// normal is the unit gradient of the distance (pointing into the fluid). A
// shape with `inside` set is a container: the fluid lives inside it, so the
// sign is flipped (a box container keeps the fluid in the box).
//
// Shapes are evaluated in their local frame q = R(t)^T (p - c(t)): the
// centre moves at the collider's velocity, c(t) = center + velocity * t, and
// the shape turns about it at its angular velocity w (rad/s, world axes),
// R(t) = Rot(w t) R0, so the solid's material at p moves at
// velocity + w x (p - c(t)) (collider_velocity).
//   Plane      local y = 0, solid below (y < 0)
//   Box        half extents `size`
//   Sphere     radius size.x
//   Ellipsoid  semi-axes `size` (exact distance, Eberly 2013 root bracketing)
//   Capsule    radius size.x around the segment y in [-size.y, size.y]
//   Grid       a sampled signed distance (from a mesh): grid_dims nodes
//              spaced grid_dx from grid_origin, trilinear; beyond the
//              sampled box the distance to the box is added. A deforming
//              mesh also has its surface velocity sampled (grid_velocity),
//              which collider_velocity adds to the rigid motion and which
//              moves the surface between the samples' time and t
#include <cmath>
#include <stdint.h>

#include <vector>

#include "eddy/core/vec.h"

namespace eddy {

enum class ShapeType : int32_t { Plane = 0, Box = 1, Sphere = 2, Ellipsoid = 3, Capsule = 4, Grid = 5 };

struct Collider {
  ShapeType type = ShapeType::Plane;
  int32_t inside = 0;  // 1: container, fluid inside the shape
  Vec3f center{0, 0, 0};
  Mat3f rotation = mat3_identity();  // local -> world
  Vec3f size{1, 1, 1};
  Vec3f velocity{0, 0, 0};  // m/s, the shape moves with it
  Vec3f angular_velocity{0, 0, 0};  // rad/s, world axes: the shape turns about its centre
  float friction = 0.0f;     // Coulomb coefficient, 0 = free slip
  float restitution = 0.0f;  // share of the normal approach speed given back, 0..1
  // Rigid bodies' contact with the shape: its own stiffness k (N/m) and
  // dissipation time scale tau (s); 0: none of its own (rigid/bodies.h,
  // contact_parameters).
  float stiffness = 0.0f, dissipation = 0.0f;
  // 1: a rigid body stepped with the liquid (core/rigid/coupling.h). PBF
  // then leaves out its walls' s_corr push: an artificial pressure that
  // would lift a floating body (by 7 % of its draft at the default scorr_k).
  int32_t body = 0;
  // Grid only: node values x-fastest (index (k * ny + j) * nx + i), owned by
  // whoever made the collider (the solver copies them to its device).
  const float* grid = nullptr;
  // Grid only, optional: the surface's own velocity at the nodes (m/s, in
  // the shape's frame), a deforming mesh's (core/mesh_velocity.h), added to
  // the placement's motion; null: the shape is rigid.
  const Vec3f* grid_velocity = nullptr;
  // With grid_velocity: the time (s) the samples show the surface at. At
  // another time t the surface is where that velocity carries it (the
  // distance at q read at q + u(q) (grid_time - t)), so a deforming shape
  // moves through the steps between two frames instead of jumping at each.
  float grid_time = 0.0f;
  int32_t grid_dims[3] = {0, 0, 0};
  Vec3f grid_origin{0, 0, 0};
  float grid_dx = 1.0f;
};

struct SdfSample {
  float distance;
  Vec3f normal;
};

namespace detail {

EDDY_HD_INLINE SdfSample sdf_box(Vec3f q, Vec3f half) {
  const Vec3f a = vabs(q);
  const Vec3f d = a - half;
  const Vec3f s = vec3(q.x < 0 ? -1.0f : 1.0f, q.y < 0 ? -1.0f : 1.0f, q.z < 0 ? -1.0f : 1.0f);
  if (d.x > 0 || d.y > 0 || d.z > 0) {
    const Vec3f o = vmax(d, vec3(0.0f));
    const float dist = length(o);
    return {dist, mul(o, s) / dist};
  }
  // Inside: the nearest face.
  if (d.x >= d.y && d.x >= d.z) return {d.x, vec3(s.x, 0, 0)};
  if (d.y >= d.z) return {d.y, vec3(0, s.y, 0)};
  return {d.z, vec3(0, 0, s.z)};
}

// Root s of G(s) = sum_i (r_i z_i / (s + r_i))^2 - 1 for n = 2 or 3 axes,
// bracketed and bisected in double precision (Eberly 2013, "Distance from a
// point to an ellipse, an ellipsoid, or a hyperellipsoid").
EDDY_HD_INLINE double ellipsoid_root(int n, const double* r, const double* z, double g) {
  double s0 = z[n - 1] - 1.0;
  double s1 = 0.0;
  if (g >= 0) {
    double rz2 = 0;
    for (int i = 0; i < n; ++i) rz2 += (r[i] * z[i]) * (r[i] * z[i]);
    s1 = sqrt(rz2) - 1.0;
  }
  double s = 0;
  for (int it = 0; it < 200; ++it) {
    s = 0.5 * (s0 + s1);
    if (s == s0 || s == s1) break;
    double gs = -1.0;
    for (int i = 0; i < n; ++i) {
      const double t = r[i] * z[i] / (s + r[i]);
      gs += t * t;
    }
    if (gs > 0) s0 = s;
    else if (gs < 0) s1 = s;
    else break;
  }
  return s;
}

// Closest point x on the ellipse/ellipsoid with semi-axes e (descending) to y
// (all components >= 0), for n = 2 or 3 axes with y[n-1] > 0 and y[0] > 0.
EDDY_HD_INLINE void ellipsoid_closest_general(int n, const double* e, const double* y, double* x) {
  double z[3], r[3], g = -1.0;
  for (int i = 0; i < n; ++i) {
    z[i] = y[i] / e[i];
    g += z[i] * z[i];
  }
  if (g == 0) {
    for (int i = 0; i < n; ++i) x[i] = y[i];
    return;
  }
  const double emin2 = e[n - 1] * e[n - 1];
  for (int i = 0; i < n; ++i) r[i] = e[i] * e[i] / emin2;
  const double s = ellipsoid_root(n, r, z, g);
  for (int i = 0; i < n; ++i) x[i] = r[i] * y[i] / (s + r[i]);
}

// 2D ellipse, e0 >= e1, y >= 0.
EDDY_HD_INLINE void ellipse_closest(const double* e, const double* y, double* x) {
  if (y[1] > 0) {
    if (y[0] > 0) {
      ellipsoid_closest_general(2, e, y, x);
    } else {
      x[0] = 0;
      x[1] = e[1];
    }
    return;
  }
  const double num = e[0] * y[0], den = e[0] * e[0] - e[1] * e[1];
  if (num < den) {
    const double xe = num / den;
    x[0] = e[0] * xe;
    x[1] = e[1] * sqrt(fmax(0.0, 1.0 - xe * xe));
  } else {
    x[0] = e[0];
    x[1] = 0;
  }
}

// 3D ellipsoid, e0 >= e1 >= e2, y >= 0.
EDDY_HD_INLINE void ellipsoid_closest(const double* e, const double* y, double* x) {
  if (y[2] > 0) {
    if (y[1] > 0) {
      if (y[0] > 0) {
        ellipsoid_closest_general(3, e, y, x);
      } else {
        const double e2[2] = {e[1], e[2]}, y2[2] = {y[1], y[2]};
        double x2[2];
        ellipse_closest(e2, y2, x2);
        x[0] = 0, x[1] = x2[0], x[2] = x2[1];
      }
    } else if (y[0] > 0) {
      const double e2[2] = {e[0], e[2]}, y2[2] = {y[0], y[2]};
      double x2[2];
      ellipse_closest(e2, y2, x2);
      x[0] = x2[0], x[1] = 0, x[2] = x2[1];
    } else {
      x[0] = 0, x[1] = 0, x[2] = e[2];
    }
    return;
  }
  // y2 == 0: the closest point may leave the plane (inside points near it).
  const double d0 = e[0] * e[0] - e[2] * e[2], d1 = e[1] * e[1] - e[2] * e[2];
  const double n0 = e[0] * y[0], n1 = e[1] * y[1];
  if (n0 < d0 && n1 < d1) {
    const double a = n0 / d0, b = n1 / d1, disc = 1.0 - a * a - b * b;
    if (disc > 0) {
      x[0] = e[0] * a, x[1] = e[1] * b, x[2] = e[2] * sqrt(disc);
      return;
    }
  }
  const double e2[2] = {e[0], e[1]}, y2[2] = {y[0], y[1]};
  double x2[2];
  ellipse_closest(e2, y2, x2);
  x[0] = x2[0], x[1] = x2[1], x[2] = 0;
}

EDDY_HD_INLINE SdfSample sdf_ellipsoid(Vec3f q, Vec3f semi) {
  // Sort the axes descending, solve in the first octant, map back.
  int idx[3] = {0, 1, 2};
  const float ax[3] = {semi.x, semi.y, semi.z};
  const float qa[3] = {q.x, q.y, q.z};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2 - a; ++b)
      if (ax[idx[b]] < ax[idx[b + 1]]) {
        const int t = idx[b];
        idx[b] = idx[b + 1];
        idx[b + 1] = t;
      }
  double e[3], y[3], x[3];
  double implicit = 0;
  for (int k = 0; k < 3; ++k) {
    e[k] = ax[idx[k]];
    y[k] = fabs(static_cast<double>(qa[idx[k]]));
    implicit += (y[k] / e[k]) * (y[k] / e[k]);
  }
  ellipsoid_closest(e, y, x);
  double d2 = 0;
  double nrm[3];
  for (int k = 0; k < 3; ++k) {
    d2 += (x[k] - y[k]) * (x[k] - y[k]);
    nrm[k] = x[k] / (e[k] * e[k]);  // outward surface normal at x
  }
  const double dist = implicit < 1.0 ? -sqrt(d2) : sqrt(d2);
  float out[3];
  const double nl = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
  for (int k = 0; k < 3; ++k) {
    const double sgn = qa[idx[k]] < 0 ? -1.0 : 1.0;
    out[idx[k]] = static_cast<float>(sgn * nrm[k] / nl);
  }
  return {static_cast<float>(dist), vec3(out[0], out[1], out[2])};
}

EDDY_HD_INLINE SdfSample sdf_capsule(Vec3f q, float radius, float half_length) {
  const float t = fminf(fmaxf(q.y, -half_length), half_length);
  const Vec3f d = q - vec3(0, t, 0);
  const float l = length(d);
  // On the axis the direction is undefined; pick the local x axis.
  return {l - radius, l > 1e-12f ? d / l : vec3(1, 0, 0)};
}

// Where local point q falls in a Grid collider's nodes: the corner node
// (i0) and the fractions (f) of its cell, clamped into the sampled box, and
// the squared distance (in voxels) from q to that box.
struct GridCell {
  int i0[3];
  float f[3];
  float outside2;
};
EDDY_HD_INLINE GridCell grid_cell(const Collider& c, Vec3f q) {
  const Vec3f u = (q - c.grid_origin) / c.grid_dx;
  const float ua[3] = {u.x, u.y, u.z};
  GridCell g;
  g.outside2 = 0.0f;
  for (int a = 0; a < 3; ++a) {
    const float hi = float(c.grid_dims[a] - 1);
    const float cl = fminf(fmaxf(ua[a], 0.0f), hi);
    g.outside2 += (ua[a] - cl) * (ua[a] - cl);
    // floor() rounds toward negative infinity; cl >= 0 here, so int() agrees.
    int i = int(cl);
    if (i > c.grid_dims[a] - 2) i = c.grid_dims[a] - 2;
    g.i0[a] = i;
    g.f[a] = cl - float(i);
  }
  return g;
}

// Trilinear interpolation of node values (a float distance or a Vec3f
// velocity) over the cell g, nodes x-fastest.
template <class T>
EDDY_HD_INLINE T grid_trilinear(const Collider& c, const T* values, const GridCell& g) {
  const int nx = c.grid_dims[0], ny = c.grid_dims[1];
  const int* i0 = g.i0;
  const float* f = g.f;
  auto at = [&](int i, int j, int k) { return values[(size_t(k) * ny + size_t(j)) * nx + size_t(i)]; };
  const T c00 = at(i0[0], i0[1], i0[2]) * (1 - f[0]) + at(i0[0] + 1, i0[1], i0[2]) * f[0];
  const T c10 = at(i0[0], i0[1] + 1, i0[2]) * (1 - f[0]) + at(i0[0] + 1, i0[1] + 1, i0[2]) * f[0];
  const T c01 = at(i0[0], i0[1], i0[2] + 1) * (1 - f[0]) + at(i0[0] + 1, i0[1], i0[2] + 1) * f[0];
  const T c11 = at(i0[0], i0[1] + 1, i0[2] + 1) * (1 - f[0]) + at(i0[0] + 1, i0[1] + 1, i0[2] + 1) * f[0];
  return (c00 * (1 - f[1]) + c10 * f[1]) * (1 - f[2]) + (c01 * (1 - f[1]) + c11 * f[1]) * f[2];
}

// Trilinear sample of a Grid collider's distance at local point q (clamped
// into the sampled box, plus the distance to the box outside it).
EDDY_HD_INLINE float grid_value(const Collider& c, Vec3f q) {
  const GridCell g = grid_cell(c, q);
  return grid_trilinear(c, c.grid, g) + sqrtf(g.outside2) * c.grid_dx;
}

EDDY_HD_INLINE SdfSample sdf_grid(const Collider& c, Vec3f q) {
  const float h = 0.5f * c.grid_dx;
  const float d = grid_value(c, q);
  const Vec3f g = vec3(grid_value(c, q + vec3(h, 0, 0)) - grid_value(c, q - vec3(h, 0, 0)),
                       grid_value(c, q + vec3(0, h, 0)) - grid_value(c, q - vec3(0, h, 0)),
                       grid_value(c, q + vec3(0, 0, h)) - grid_value(c, q - vec3(0, 0, h)));
  return {d, normalize_or(g, vec3(0, 1, 0))};
}

}  // namespace detail

// Where a collider is at time t (s): its centre and its rotation (local to world).
struct ColliderPose {
  Vec3f center;
  Mat3f rotation;
};
EDDY_HD_INLINE ColliderPose collider_pose(const Collider& c, float t) {
  ColliderPose pose{c.center + c.velocity * t, c.rotation};
  const Vec3f th = c.angular_velocity * t;
  const float a = length(th);
  if (a > 0.0f) {
    // Rodrigues: Rot(th) = cos a 1 + sin a [k]x + (1 - cos a) k k^T, k = th / a; applied to each column of R0.
    const Vec3f k = th / a;
    const float ca = cosf(a), sa = sinf(a);
    auto turn = [&](Vec3f v) { return v * ca + cross(k, v) * sa + k * (dot(k, v) * (1.0f - ca)); };
    const Vec3f c0 = turn(vec3(c.rotation.r0.x, c.rotation.r1.x, c.rotation.r2.x));
    const Vec3f c1 = turn(vec3(c.rotation.r0.y, c.rotation.r1.y, c.rotation.r2.y));
    const Vec3f c2 = turn(vec3(c.rotation.r0.z, c.rotation.r1.z, c.rotation.r2.z));
    pose.rotation = {{c0.x, c1.x, c2.x}, {c0.y, c1.y, c2.y}, {c0.z, c1.z, c2.z}};
  }
  return pose;
}

// Velocity of the collider's material at world point p, time t:
// v + w x (p - c(t)), plus a deforming Grid's own surface velocity there
// (turned into world axes).
EDDY_HD_INLINE Vec3f collider_velocity(const Collider& c, Vec3f p, float t) {
  Vec3f u = c.velocity + cross(c.angular_velocity, p - (c.center + c.velocity * t));
  if (c.type == ShapeType::Grid && c.grid_velocity) {
    const ColliderPose pose = collider_pose(c, t);
    const Vec3f q = mul_transpose(pose.rotation, p - pose.center);
    u += pose.rotation * detail::grid_trilinear(c, c.grid_velocity, detail::grid_cell(c, q));
  }
  return u;
}

// Whether the collider moves at all.
EDDY_HD_INLINE bool collider_moves(const Collider& c) {
  return length2(c.velocity) > 0.0f || length2(c.angular_velocity) > 0.0f;
}

// Signed distance and normal of the collider at world point p, time t (s).
EDDY_HD_INLINE SdfSample collider_sdf(const Collider& c, Vec3f p, float t) {
  const ColliderPose pose = collider_pose(c, t);
  const Vec3f q = mul_transpose(pose.rotation, p - pose.center);
  SdfSample s;
  switch (c.type) {
    case ShapeType::Plane: s = {q.y, vec3(0, 1, 0)}; break;
    case ShapeType::Box: s = detail::sdf_box(q, c.size); break;
    case ShapeType::Sphere: {
      const float l = length(q);
      s = {l - c.size.x, l > 1e-12f ? q / l : vec3(0, 1, 0)};
      break;
    }
    case ShapeType::Ellipsoid: s = detail::sdf_ellipsoid(q, c.size); break;
    case ShapeType::Capsule: s = detail::sdf_capsule(q, c.size.x, c.size.y); break;
    case ShapeType::Grid: {
      Vec3f at = q;
      if (c.grid_velocity) at += detail::grid_trilinear(c, c.grid_velocity, detail::grid_cell(c, q)) * (c.grid_time - t);
      s = detail::sdf_grid(c, at);
      break;
    }
    default: s = {1e30f, vec3(0, 1, 0)}; break;
  }
  s.normal = pose.rotation * s.normal;
  if (c.inside) {
    s.distance = -s.distance;
    s.normal = -s.normal;
  }
  return s;
}

// The walls a particle at p sees, for boundary density: up to three
// (distance, normal) samples. A box container's walls meet at concave edges
// and corners, where the nearest face alone would miss the others, so it
// reports the nearest face along each local axis; every other shape reports
// its signed distance (a planar approximation of the surface nearby).
EDDY_HD_INLINE int collider_walls(const Collider& c, Vec3f p, float t, SdfSample out[3]) {
  if (c.type == ShapeType::Box && c.inside) {
    const ColliderPose pose = collider_pose(c, t);
    const Mat3f& R = pose.rotation;
    const Vec3f q = mul_transpose(R, p - pose.center);
    const float qa[3] = {q.x, q.y, q.z}, ha[3] = {c.size.x, c.size.y, c.size.z};
    const Vec3f axes[3] = {vec3(R.r0.x, R.r1.x, R.r2.x), vec3(R.r0.y, R.r1.y, R.r2.y), vec3(R.r0.z, R.r1.z, R.r2.z)};
    for (int a = 0; a < 3; ++a) {
      // Distance to the nearer of the two faces normal to axis a; the normal points inwards.
      out[a].distance = ha[a] - fabsf(qa[a]);
      out[a].normal = qa[a] >= 0 ? -axes[a] : axes[a];
    }
    return 3;
  }
  out[0] = collider_sdf(c, p, t);
  return 1;
}

// Pushes the point p out of every collider it is nearer to than `below`,
// to `to` outside along the surface's normal, in up to three passes
// (pushing out of one face of a container can leave it too near another,
// at edges and corners); on_push(k, sample, p) after each push of collider
// k, p the pushed point. Returns the point. With `nearest`, also the
// smallest signed distance from the returned point to a collider (-inf
// where the last pass still pushed, so that the point's distances were not
// all taken where it ended).
template <class OnPush>
EDDY_HD_INLINE Vec3f push_out_of_colliders(const Collider* cols, uint32_t ncoll, Vec3f p, float t, float below,
                                           float to, OnPush&& on_push, float* nearest = nullptr) {
  float least = INFINITY;
  for (int pass = 0; pass < 3; ++pass) {
    bool moved = false;
    least = INFINITY;
    for (uint32_t k = 0; k < ncoll; ++k) {
      const SdfSample sd = collider_sdf(cols[k], p, t);
      least = sd.distance < least ? sd.distance : least;
      if (sd.distance < below) {
        p += sd.normal * (to - sd.distance);
        on_push(k, sd, p);
        moved = true;
      }
    }
    if (moved) least = -INFINITY;
    if (!moved) break;
  }
  if (nearest) *nearest = least;
  return p;
}

// Clearances: a lower bound on a point's distance to still, analytic
// colliders (their signed distances are 1-Lipschitz), kept across moves so
// that passes can skip the colliders of points far from them. After a move
// by d to x (x = fl(x_before + d)): less |d|_1 (at least the distance
// moved), less 2^-23 |x|_1 (the addition's rounding, half an ulp an axis),
// and less a millionth of itself (the subtraction's own rounding).
EDDY_HD_INLINE float lower_clearance(float clear, Vec3f d, Vec3f x) {
  const float moved = fabsf(d.x) + fabsf(d.y) + fabsf(d.z);
  const float rounding = 1.2e-7f * (fabsf(x.x) + fabsf(x.y) + fabsf(x.z));
  return clear * 0.999999f - 1.0001f * moved - rounding;
}
// A point is taken as clear of a threshold when its clearance exceeds it by
// this share of the particle radius, which outweighs the distances' own
// rounding (a few ulps of the coordinates: up to some 10^4 radii from the
// origin).
constexpr float kClearanceMargin = 0.01f;
// Whether every collider's distance is 1-Lipschitz and fixed in time
// (analytic shapes that do not move): clearances hold for them.
inline bool clearances_hold(const std::vector<Collider>& cs) {
  for (const Collider& c : cs)
    if (c.type == ShapeType::Grid || collider_moves(c)) return false;
  return true;
}

// Rotation (local -> world) from Euler angles in degrees, applied X then Y
// then Z (Houdini's default rotation order "Rx Ry Rz" for row vectors is the
// same composition R = Rz * Ry * Rx acting on column vectors).
Mat3f rotation_from_euler_degrees(Vec3f degrees);
// A rotation taking local +y to the unit vector n.
Mat3f rotation_y_to(Vec3f n);
// The rotation vector (axis times angle, rad) of a rotation, for angles
// below pi: the log map.
Vec3f rotation_vector(const Mat3f& R);

// Places c so that at simulation time `time` (s) it stands at (position,
// rotation) and moves on with `velocity` and `angular_velocity` (world
// axes, about its centre): collider_pose(c, time) == (position, rotation).
// How a shape that moves otherwise (a body, an animation) is given to the
// solvers for the time around `time`.
void set_motion(Collider& c, Vec3f position, const Mat3f& rotation, Vec3f velocity, Vec3f angular_velocity,
                double time);

}  // namespace eddy

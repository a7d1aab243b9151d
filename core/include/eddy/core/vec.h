#pragma once
// Vec3f: the plain three-float vector of particle attributes (P, v, ...).
// A POD with host/device operators, so arrays of it are memcpy-able between
// the CPU and the GPU and between Points and solver buffers.
#include <math.h>

#include "eddy/core/hd.h"

namespace eddy {

struct Vec3f {
  float x, y, z;
};

EDDY_HD_INLINE Vec3f vec3(float x, float y, float z) { return Vec3f{x, y, z}; }
EDDY_HD_INLINE Vec3f vec3(float s) { return Vec3f{s, s, s}; }

EDDY_HD_INLINE Vec3f operator+(Vec3f a, Vec3f b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
EDDY_HD_INLINE Vec3f operator-(Vec3f a, Vec3f b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
EDDY_HD_INLINE Vec3f operator-(Vec3f a) { return {-a.x, -a.y, -a.z}; }
EDDY_HD_INLINE Vec3f operator*(Vec3f a, float s) { return {a.x * s, a.y * s, a.z * s}; }
EDDY_HD_INLINE Vec3f operator*(float s, Vec3f a) { return {a.x * s, a.y * s, a.z * s}; }
EDDY_HD_INLINE Vec3f operator/(Vec3f a, float s) { return {a.x / s, a.y / s, a.z / s}; }
EDDY_HD_INLINE Vec3f& operator+=(Vec3f& a, Vec3f b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
EDDY_HD_INLINE Vec3f& operator-=(Vec3f& a, Vec3f b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
EDDY_HD_INLINE Vec3f& operator*=(Vec3f& a, float s) { a.x *= s; a.y *= s; a.z *= s; return a; }
EDDY_HD_INLINE bool operator==(Vec3f a, Vec3f b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

EDDY_HD_INLINE Vec3f mul(Vec3f a, Vec3f b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
EDDY_HD_INLINE float dot(Vec3f a, Vec3f b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
EDDY_HD_INLINE Vec3f cross(Vec3f a, Vec3f b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
EDDY_HD_INLINE float length2(Vec3f a) { return dot(a, a); }
EDDY_HD_INLINE float length(Vec3f a) { return sqrtf(dot(a, a)); }
EDDY_HD_INLINE Vec3f vmin(Vec3f a, Vec3f b) { return {fminf(a.x, b.x), fminf(a.y, b.y), fminf(a.z, b.z)}; }
EDDY_HD_INLINE Vec3f vmax(Vec3f a, Vec3f b) { return {fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z)}; }
EDDY_HD_INLINE Vec3f vabs(Vec3f a) { return {fabsf(a.x), fabsf(a.y), fabsf(a.z)}; }
EDDY_HD_INLINE float max_component(Vec3f a) { return fmaxf(a.x, fmaxf(a.y, a.z)); }
EDDY_HD_INLINE bool is_finite(Vec3f a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

// Unit vector along a, or `fallback` when a is (near) zero.
EDDY_HD_INLINE Vec3f normalize_or(Vec3f a, Vec3f fallback) {
  const float l2 = length2(a);
  return l2 > 1e-30f ? a * (1.0f / sqrtf(l2)) : fallback;
}

// A position padded to 16 bytes, with one more per-particle value in w: the
// solvers' pair loops gather it with one aligned load per neighbour instead
// of three or four scalar ones (pair_batch.h).
struct alignas(16) Vec4f {
  float x, y, z, w;
};
EDDY_HD_INLINE Vec4f vec4(Vec3f a, float w) { return Vec4f{a.x, a.y, a.z, w}; }
EDDY_HD_INLINE Vec3f xyz(Vec4f a) { return Vec3f{a.x, a.y, a.z}; }

// Row-major 3x3 rotation used by collider transforms.
struct Mat3f {
  Vec3f r0, r1, r2;
};
EDDY_HD_INLINE Mat3f mat3_identity() { return {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}; }
EDDY_HD_INLINE Vec3f operator*(const Mat3f& m, Vec3f v) { return {dot(m.r0, v), dot(m.r1, v), dot(m.r2, v)}; }
// M^T v: the inverse of a rotation applied to v.
EDDY_HD_INLINE Vec3f mul_transpose(const Mat3f& m, Vec3f v) { return m.r0 * v.x + m.r1 * v.y + m.r2 * v.z; }

}  // namespace eddy

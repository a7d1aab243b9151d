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

// Arithmetic on a Vec4f's four components at once, for pair loops that sum
// vectors (a neighbour's padded position and velocity in two loads and a
// few instructions, not a dozen scalar ones): on the host a GCC/Clang
// vector (one SSE register; each component an ordinary IEEE operation), on
// the device and elsewhere a struct with the same operators.
#if defined(__GNUC__) && !defined(__CUDACC__)
typedef float Float4 __attribute__((vector_size(16)));
EDDY_HD_INLINE Float4 float4_of(const Vec4f& a) {
  Float4 r;
  __builtin_memcpy(&r, &a, sizeof r);
  return r;
}
#else
struct Float4 {
  float c[4];
  EDDY_HD_INLINE float operator[](int k) const { return c[k]; }
};
EDDY_HD_INLINE Float4 float4_of(const Vec4f& a) { return {{a.x, a.y, a.z, a.w}}; }
EDDY_HD_INLINE Float4 operator+(Float4 a, Float4 b) {
  return {{a.c[0] + b.c[0], a.c[1] + b.c[1], a.c[2] + b.c[2], a.c[3] + b.c[3]}};
}
EDDY_HD_INLINE Float4 operator-(Float4 a, Float4 b) {
  return {{a.c[0] - b.c[0], a.c[1] - b.c[1], a.c[2] - b.c[2], a.c[3] - b.c[3]}};
}
EDDY_HD_INLINE Float4 operator*(Float4 a, Float4 b) {
  return {{a.c[0] * b.c[0], a.c[1] * b.c[1], a.c[2] * b.c[2], a.c[3] * b.c[3]}};
}
EDDY_HD_INLINE Float4 operator*(Float4 a, float s) { return {{a.c[0] * s, a.c[1] * s, a.c[2] * s, a.c[3] * s}}; }
EDDY_HD_INLINE Float4& operator+=(Float4& a, Float4 b) { return a = a + b; }
#endif
EDDY_HD_INLINE Float4 float4_zero() { return float4_of(Vec4f{0.0f, 0.0f, 0.0f, 0.0f}); }

// Row-major 3x3 rotation used by collider transforms.
struct Mat3f {
  Vec3f r0, r1, r2;
};
EDDY_HD_INLINE Mat3f mat3_identity() { return {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}; }
EDDY_HD_INLINE Vec3f operator*(const Mat3f& m, Vec3f v) { return {dot(m.r0, v), dot(m.r1, v), dot(m.r2, v)}; }
// M^T v: the inverse of a rotation applied to v.
EDDY_HD_INLINE Vec3f mul_transpose(const Mat3f& m, Vec3f v) { return m.r0 * v.x + m.r1 * v.y + m.r2 * v.z; }

}  // namespace eddy

#pragma once
// General 3x3 matrices for MPM (deformation gradients, affine velocity
// matrices, stresses) on the host and the device: Mat3f (vec.h, rows r0..r2)
// with products, transpose, determinant, and the rotation-variant SVD
// F = U diag(s) V^T with U, V proper rotations (det +1), s0 >= s1 >= |s2|,
// and s2 < 0 exactly when det F < 0 (Irving et al. 2004's convention for
// inverted elements).
//
// The SVD is written here rather than taken from Eigen because it runs
// inside device kernels, where Eigen's JacobiSVD is not available: cyclic
// Jacobi rotations diagonalise F^T F (giving V), then Givens QR of F V gives
// U and the singular values with their signs (the scheme of McAdams et al.
// 2011, with exact rotations). tests/unit/core/mat3_test.cpp checks it
// against Eigen's JacobiSVD.
#include <math.h>

#include "eddy/core/vec.h"

namespace eddy {

EDDY_HD_INLINE float& at(Vec3f& v, int i) { return i == 0 ? v.x : (i == 1 ? v.y : v.z); }
EDDY_HD_INLINE float at(const Vec3f& v, int i) { return i == 0 ? v.x : (i == 1 ? v.y : v.z); }
EDDY_HD_INLINE Vec3f& row(Mat3f& m, int i) { return i == 0 ? m.r0 : (i == 1 ? m.r1 : m.r2); }
EDDY_HD_INLINE const Vec3f& row(const Mat3f& m, int i) { return i == 0 ? m.r0 : (i == 1 ? m.r1 : m.r2); }
EDDY_HD_INLINE float at(const Mat3f& m, int i, int j) { return at(row(m, i), j); }

EDDY_HD_INLINE Mat3f mat3_zero() { return {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}; }
EDDY_HD_INLINE Mat3f mat3_diag(Vec3f d) { return {{d.x, 0, 0}, {0, d.y, 0}, {0, 0, d.z}}; }
EDDY_HD_INLINE Mat3f mat3_scalar(float s) { return mat3_diag(vec3(s)); }
// a b^T
EDDY_HD_INLINE Mat3f outer(Vec3f a, Vec3f b) { return {b * a.x, b * a.y, b * a.z}; }

EDDY_HD_INLINE Mat3f operator+(const Mat3f& a, const Mat3f& b) { return {a.r0 + b.r0, a.r1 + b.r1, a.r2 + b.r2}; }
EDDY_HD_INLINE Mat3f operator-(const Mat3f& a, const Mat3f& b) { return {a.r0 - b.r0, a.r1 - b.r1, a.r2 - b.r2}; }
EDDY_HD_INLINE Mat3f operator*(const Mat3f& a, float s) { return {a.r0 * s, a.r1 * s, a.r2 * s}; }
EDDY_HD_INLINE Mat3f operator*(float s, const Mat3f& a) { return a * s; }
EDDY_HD_INLINE Mat3f& operator+=(Mat3f& a, const Mat3f& b) {
  a.r0 += b.r0;
  a.r1 += b.r1;
  a.r2 += b.r2;
  return a;
}
EDDY_HD_INLINE Mat3f transpose(const Mat3f& m) {
  return {{m.r0.x, m.r1.x, m.r2.x}, {m.r0.y, m.r1.y, m.r2.y}, {m.r0.z, m.r1.z, m.r2.z}};
}
// a b: row i of the product is row i of a times b.
EDDY_HD_INLINE Mat3f operator*(const Mat3f& a, const Mat3f& b) {
  return {b.r0 * a.r0.x + b.r1 * a.r0.y + b.r2 * a.r0.z, b.r0 * a.r1.x + b.r1 * a.r1.y + b.r2 * a.r1.z,
          b.r0 * a.r2.x + b.r1 * a.r2.y + b.r2 * a.r2.z};
}
EDDY_HD_INLINE float trace(const Mat3f& m) { return m.r0.x + m.r1.y + m.r2.z; }
EDDY_HD_INLINE float determinant(const Mat3f& m) { return dot(m.r0, cross(m.r1, m.r2)); }
// Frobenius norm squared.
EDDY_HD_INLINE float norm2(const Mat3f& m) { return length2(m.r0) + length2(m.r1) + length2(m.r2); }
EDDY_HD_INLINE bool is_finite(const Mat3f& m) { return is_finite(m.r0) && is_finite(m.r1) && is_finite(m.r2); }

struct Svd3 {
  Mat3f U, V;  // rotations
  Vec3f s;     // s0 >= s1 >= |s2|; s2 < 0 when det F < 0
};

namespace detail {

// Columns p, q of m rotated by the Givens rotation [c s; -s c] from the right:
// col_p' = c col_p - s col_q, col_q' = s col_p + c col_q.
EDDY_HD_INLINE void rotate_columns(float m[3][3], int p, int q, float c, float s) {
  for (int i = 0; i < 3; ++i) {
    const float a = m[i][p], b = m[i][q];
    m[i][p] = c * a - s * b;
    m[i][q] = s * a + c * b;
  }
}

EDDY_HD_INLINE void swap_columns(float m[3][3], int p, int q, bool negate) {
  for (int i = 0; i < 3; ++i) {
    const float t = m[i][p];
    m[i][p] = negate ? -m[i][q] : m[i][q];
    m[i][q] = t;
  }
}

}  // namespace detail

EDDY_HD_INLINE Svd3 svd3(const Mat3f& F) {
  float a[3][3], v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, S[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) a[i][j] = at(F, i, j);
  // S = F^T F, symmetric positive semi-definite.
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) S[i][j] = a[0][i] * a[0][j] + a[1][i] * a[1][j] + a[2][i] * a[2][j];
  // Cyclic Jacobi: each rotation zeroes S[p][q]; V accumulates them.
  for (int sweep = 0; sweep < 8; ++sweep) {
    const float off = S[0][1] * S[0][1] + S[0][2] * S[0][2] + S[1][2] * S[1][2];
    const float diag = S[0][0] * S[0][0] + S[1][1] * S[1][1] + S[2][2] * S[2][2];
    if (!(off > 1e-13f * diag)) break;  // off-diagonal below ~3e-7 of the diagonal: float round-off
    for (int k = 0; k < 3; ++k) {
      const int p = k == 2 ? 1 : 0, q = k == 0 ? 1 : 2;
      const float spq = S[p][q];
      if (fabsf(spq) < 1e-30f) continue;
      const float theta = (S[q][q] - S[p][p]) / (2.0f * spq);
      const float t = (theta >= 0 ? 1.0f : -1.0f) / (fabsf(theta) + sqrtf(theta * theta + 1.0f));
      const float c = 1.0f / sqrtf(t * t + 1.0f), s = t * c;
      // S' = J^T S J with J the rotation acting on columns p, q (c, s; -s, c).
      detail::rotate_columns(S, p, q, c, s);
      for (int j = 0; j < 3; ++j) {  // rows p, q
        const float x = S[p][j], y = S[q][j];
        S[p][j] = c * x - s * y;
        S[q][j] = s * x + c * y;
      }
      detail::rotate_columns(v, p, q, c, s);
    }
  }
  // B = F V; order the columns by decreasing norm (the eigenvalues of S),
  // keeping V a rotation: each swap negates one column.
  float b[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) b[i][j] = a[i][0] * v[0][j] + a[i][1] * v[1][j] + a[i][2] * v[2][j];
  auto colnorm = [&](int j) { return b[0][j] * b[0][j] + b[1][j] * b[1][j] + b[2][j] * b[2][j]; };
  float n0 = colnorm(0), n1 = colnorm(1), n2 = colnorm(2);
  if (n0 < n1) {
    detail::swap_columns(b, 0, 1, true);
    detail::swap_columns(v, 0, 1, true);
    const float t = n0; n0 = n1; n1 = t;
  }
  if (n0 < n2) {
    detail::swap_columns(b, 0, 2, true);
    detail::swap_columns(v, 0, 2, true);
    const float t = n0; n0 = n2; n2 = t;
  }
  if (n1 < n2) {
    detail::swap_columns(b, 1, 2, true);
    detail::swap_columns(v, 1, 2, true);
  }
  // Givens QR of B: Q^T B = R upper triangular; U = Q, s = diag(R).
  float u[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const int rows[3][2] = {{0, 1}, {0, 2}, {1, 2}};  // zero b[1][0], b[2][0], b[2][1]
  for (int k = 0; k < 3; ++k) {
    const int p = rows[k][0], q = rows[k][1], col = k == 2 ? 1 : 0;
    const float x = b[p][col], y = b[q][col];
    const float r = sqrtf(x * x + y * y);
    if (r < 1e-30f) continue;
    const float c = x / r, s = y / r;
    // Rows p, q of B rotated: (c s; -s c); U accumulates the transpose.
    for (int j = 0; j < 3; ++j) {
      const float bp = b[p][j], bq = b[q][j];
      b[p][j] = c * bp + s * bq;
      b[q][j] = -s * bp + c * bq;
    }
    detail::rotate_columns(u, p, q, c, -s);
  }
  Svd3 out;
  for (int i = 0; i < 3; ++i) {
    row(out.U, i) = vec3(u[i][0], u[i][1], u[i][2]);
    row(out.V, i) = vec3(v[i][0], v[i][1], v[i][2]);
  }
  out.s = vec3(b[0][0], b[1][1], b[2][2]);
  return out;
}

// U diag(s) V^T
EDDY_HD_INLINE Mat3f usv(const Mat3f& U, Vec3f s, const Mat3f& V) {
  return U * mat3_diag(s) * transpose(V);
}

}  // namespace eddy

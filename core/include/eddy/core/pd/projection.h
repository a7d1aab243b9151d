#pragma once
// Projective Dynamics' projections (system.h) on plain arrays, for the host
// and the device: an element's deformation gradient F (3 x K, K = 3 for a
// tetrahedron, 2 for a triangle) goes to the blend of its strain target
// (stretches clamped to [lo, hi]) and its volume target (stretches of
// product 1) in F's singular frame.
//
// Matrices are row-major arrays: F[3 * i + j] = F(i, j), j < K.
//
// The SVD is written here (not Eigen's JacobiSVD) because it runs in device
// kernels; it is not mat3.h's svd3 (MPM's, in float on a Mat3f) because PD
// works in double, needs the 3 x 2 F of a triangle, and diagonalises four
// tetrahedra at once in lanes. Cyclic Jacobi rotations diagonalise F^T F
// (V), then F V's columns, orthonormalised in order, give U (a proper
// rotation) and the singular values, the last signed as det F (Irving et
// al. 2004's convention, which turns an inverted element back). tests/unit/core/pd_test.cpp checks the
// projections against Eigen's SVD and against slow searches for the nearest
// point.
#include <math.h>
#include <stdint.h>

#include "eddy/core/hd.h"

namespace eddy::pd {

EDDY_HD_INLINE double dmin(double a, double b) { return a < b ? a : b; }
EDDY_HD_INLINE double dmax(double a, double b) { return a > b ? a : b; }
EDDY_HD_INLINE double clamp(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

// C (symmetric 3x3, row-major; overwritten) = V diag(l) V^T by cyclic
// Jacobi rotations, l descending, V a proper rotation (its columns the
// eigenvectors), in lanes (one matrix each: C[i][l] is entry i of lane l's).
// A pair is rotated while its off-diagonal entry exceeds round-off against
// its diagonal (which keeps small eigenvalues' vectors accurate); a sweep
// without a rotation ends a lane. The lanes are free of branches (a lane
// that skips a pair, or has finished, takes the identity rotation, which
// changes none of its bits), so four tetrahedra run at once under AVX2 and
// one alone (L = 1) gets the bits it gets in a batch.
template <int L>
EDDY_HD_INLINE void sym3_eigen_lanes(double (*C)[L], double (*V)[L], double (*l)[L]) {
  for (int i = 0; i < 9; ++i)
    for (int k = 0; k < L; ++k) V[i][k] = i % 4 == 0 ? 1.0 : 0.0;
  bool active[L];
  for (int k = 0; k < L; ++k) active[k] = true;
  for (int sweep = 0; sweep < 40; ++sweep) {
    bool rotated[L];
    for (int k = 0; k < L; ++k) rotated[k] = false;
    for (int pair = 0; pair < 3; ++pair) {
      const int p = pair == 2 ? 1 : 0, q = pair == 0 ? 1 : 2, r = 3 - p - q;
      for (int k = 0; k < L; ++k) {
        const double apq = C[3 * p + q][k], app = C[3 * p + p][k], aqq = C[3 * q + q][k];
        const bool rotate = active[k] && apq != 0 && fabs(apq) > 1e-18 * sqrt(fabs(app * aqq));
        rotated[k] = rotated[k] || rotate;
        const double theta = rotate ? (aqq - app) / (2 * apq) : 0.0;
        const double t = !rotate ? 0.0
                         : fabs(theta) > 1e100
                             ? 0.5 / theta
                             : (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
        const double c = 1 / sqrt(t * t + 1), s = t * c;
        C[3 * p + p][k] = app - t * apq;
        C[3 * q + q][k] = aqq + t * apq;
        C[3 * p + q][k] = C[3 * q + p][k] = rotate ? 0.0 : apq;
        const double arp = C[3 * r + p][k], arq = C[3 * r + q][k];
        C[3 * r + p][k] = C[3 * p + r][k] = c * arp - s * arq;
        C[3 * r + q][k] = C[3 * q + r][k] = s * arp + c * arq;
        for (int m = 0; m < 3; ++m) {
          const double vp = V[3 * m + p][k], vq = V[3 * m + q][k];
          V[3 * m + p][k] = c * vp - s * vq;
          V[3 * m + q][k] = s * vp + c * vq;
        }
      }
    }
    bool any = false;
    for (int k = 0; k < L; ++k) {
      active[k] = active[k] && rotated[k];
      any = any || active[k];
    }
    if (!any) break;
  }
  for (int k = 0; k < L; ++k) {
    double lk[3], Vk[9];
    for (int i = 0; i < 3; ++i) lk[i] = C[4 * i][k];
    for (int i = 0; i < 9; ++i) Vk[i] = V[i][k];
    // Descending, by swaps of columns; each swap flips det V, so the last
    // column's sign is put back at the end.
    for (int a = 0; a < 2; ++a)
      for (int b = 2; b > a; --b)
        if (lk[b] > lk[b - 1]) {
          const double tl = lk[b];
          lk[b] = lk[b - 1];
          lk[b - 1] = tl;
          for (int m = 0; m < 3; ++m) {
            const double tv = Vk[3 * m + b];
            Vk[3 * m + b] = Vk[3 * m + b - 1];
            Vk[3 * m + b - 1] = tv;
          }
        }
    const double det = Vk[0] * (Vk[4] * Vk[8] - Vk[5] * Vk[7]) - Vk[1] * (Vk[3] * Vk[8] - Vk[5] * Vk[6]) +
                       Vk[2] * (Vk[3] * Vk[7] - Vk[4] * Vk[6]);
    if (det < 0)
      for (int m = 0; m < 3; ++m) Vk[3 * m + 2] = -Vk[3 * m + 2];
    for (int i = 0; i < 3; ++i) l[i][k] = lk[i];
    for (int i = 0; i < 9; ++i) V[i][k] = Vk[i];
  }
}

// One symmetric 3x3 (sym3_eigen_lanes with one lane).
EDDY_HD_INLINE void sym3_eigen(double* C, double* V, double* l) {
  double c[9][1], v[9][1], e[3][1];
  for (int i = 0; i < 9; ++i) c[i][0] = C[i];
  sym3_eigen_lanes<1>(c, v, e);
  for (int i = 0; i < 9; ++i) V[i] = v[i][0];
  for (int i = 0; i < 3; ++i) l[i] = e[i][0];
}

// Some unit vector normal to the unit vector u.
EDDY_HD_INLINE void any_normal(const double* u, double* n) {
  // u x e, e the axis least along u.
  const double ax = fabs(u[0]), ay = fabs(u[1]), az = fabs(u[2]);
  double e[3] = {0, 0, 0};
  e[ax <= ay && ax <= az ? 0 : (ay <= az ? 1 : 2)] = 1;
  n[0] = u[1] * e[2] - u[2] * e[1];
  n[1] = u[2] * e[0] - u[0] * e[2];
  n[2] = u[0] * e[1] - u[1] * e[0];
  const double inv = 1 / sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  for (int k = 0; k < 3; ++k) n[k] *= inv;
}

// F^T F of a 3x3 F (row-major).
EDDY_HD_INLINE void gram3(const double* F, double* C) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = F[i] * F[j] + F[3 + i] * F[3 + j] + F[6 + i] * F[6 + j];
}

// U and s of F = U diag(s) V^T given V: F V's columns orthonormalised in order.
template <int K>
EDDY_HD_INLINE void svd_from_v(const double* F, const double* V, double* U, double* s);

// F (3 x K) = U diag(s) V^T: U (3 x K, orthonormal columns; for K = 3 a
// proper rotation), V (K x K, a proper rotation), s descending in
// magnitude, s[2] signed as det F. Row-major throughout.
template <int K>
EDDY_HD_INLINE void signed_svd(const double* F, double* U, double* s, double* V) {
  if constexpr (K == 3) {
    double C[9], l[3];
    gram3(F, C);
    sym3_eigen(C, V, l);
  } else {
    // The 2x2 F^T F in closed form.
    const double a = F[0] * F[0] + F[2] * F[2] + F[4] * F[4], b = F[0] * F[1] + F[2] * F[3] + F[4] * F[5],
                 d = F[1] * F[1] + F[3] * F[3] + F[5] * F[5];
    const double h = 0.5 * (a - d), r = sqrt(h * h + b * b);
    double x = 1, y = 0;  // the first vector, from the better conditioned row of C - l1 I
    if (r > 0) {
      x = h >= 0 ? h + r : b;
      y = h >= 0 ? b : r - h;
      const double inv = 1 / sqrt(x * x + y * y);
      x *= inv, y *= inv;
    }
    V[0] = x, V[1] = -y, V[2] = y, V[3] = x;
  }
  svd_from_v<K>(F, V, U, s);
}

template <int K>
EDDY_HD_INLINE void svd_from_v(const double* F, const double* V, double* U, double* s) {
  // B = F V, column by column, orthonormalised in order.
  double B[3][3];
  for (int j = 0; j < K; ++j)
    for (int i = 0; i < 3; ++i) {
      double sum = 0;
      for (int k = 0; k < K; ++k) sum += F[K * i + k] * V[K * k + j];
      B[j][i] = sum;
    }
  double u[3][3];
  const double n0 = sqrt(B[0][0] * B[0][0] + B[0][1] * B[0][1] + B[0][2] * B[0][2]);
  s[0] = n0;
  if (n0 > 0) {
    for (int i = 0; i < 3; ++i) u[0][i] = B[0][i] / n0;
  } else {
    u[0][0] = 1, u[0][1] = 0, u[0][2] = 0;
  }
  const double d1 = u[0][0] * B[1][0] + u[0][1] * B[1][1] + u[0][2] * B[1][2];
  for (int i = 0; i < 3; ++i) u[1][i] = B[1][i] - d1 * u[0][i];
  const double n1 = sqrt(u[1][0] * u[1][0] + u[1][1] * u[1][1] + u[1][2] * u[1][2]);
  if (n1 > 1e-12 * n0 && n1 > 0) {
    for (int i = 0; i < 3; ++i) u[1][i] /= n1;
    s[1] = n1;
  } else {
    any_normal(u[0], u[1]);  // collapsed onto a line: any normal will do
    s[1] = 0;
  }
  if constexpr (K == 3) {
    u[2][0] = u[0][1] * u[1][2] - u[0][2] * u[1][1];
    u[2][1] = u[0][2] * u[1][0] - u[0][0] * u[1][2];
    u[2][2] = u[0][0] * u[1][1] - u[0][1] * u[1][0];
    s[2] = u[2][0] * B[2][0] + u[2][1] * B[2][1] + u[2][2] * B[2][2];
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < K; ++j) U[K * i + j] = u[j][i];
}

// Two stretches (a >= b > 0): s1 = s, s2 = 1 / s with s a root of the
// stationarity condition of (s - a)^2 + (1/s - b)^2, p(s) = s^4 - a s^3 +
// b s - 1 = 0 (its derivative is 2 p(s) / s^3): the cost falls while p < 0
// and rises once p > 0, and p(0) = -1, p(max(a, 1/b)) >= 0, so Newton steps
// kept inside a bracket where p changes sign (halving it where a step would
// leave it) find the crossing, from the uniform scaling sqrt(a / b), on
// either branch of the Lagrange condition. A step below 1e-9 of s ends it
// (Newton's next would be round-off).
// In lanes: root[l] for lane l's (a[l], b[l]) where active[l]; ok[l] false
// where its steps did not settle (the bracket closed first, or 200 steps).
// A lane that has converged keeps its root while the others go on, and the
// loops are free of branches, so one lane alone gets the bits of a batch.
template <int L>
EDDY_HD_INLINE void unit_product_2_lanes(const double* a, const double* b, const bool* active, double* root,
                                         bool* ok) {
  double s[L], lo[L], hi[L];
  bool done[L];
  bool all = true;
  for (int l = 0; l < L; ++l) {
    lo[l] = 0;
    hi[l] = dmax(a[l], 1 / b[l]);
    s[l] = sqrt(a[l] / b[l]);
    root[l] = 1;
    ok[l] = true;
    done[l] = !active[l];
    all = all && done[l];
  }
  for (int it = 0; it < 200 && !all; ++it) {
    all = true;
    for (int l = 0; l < L; ++l) {
      const double A = a[l], B = b[l], x = s[l];
      const double ps = ((x - A) * x * x) * x + B * x - 1, dp = (4 * x - 3 * A) * x * x + B;
      const double nlo = ps < 0 ? x : lo[l], nhi = ps < 0 ? hi[l] : x;
      const double step = dp > 0 ? ps / dp : 0.0;
      const bool conv = dp > 0 && fabs(step) <= 1e-9 * x;
      double next = x - step;
      next = !(dp > 0) || !(next > nlo && next < nhi) ? 0.5 * (nlo + nhi) : next;
      const bool stuck = !(nhi - nlo > 1e-15 * nhi);  // the bracket closed without convergence
      const bool was = done[l];
      root[l] = was ? root[l] : (conv ? x - step : root[l]);
      ok[l] = ok[l] && (was || conv || !stuck);
      done[l] = was || conv || stuck;
      lo[l] = was ? lo[l] : nlo;
      hi[l] = was ? hi[l] : nhi;
      s[l] = was ? x : next;
      all = all && done[l];
    }
  }
  if (!all)
    for (int l = 0; l < L; ++l) ok[l] = ok[l] && done[l];
}

EDDY_HD_INLINE bool unit_product_2(double a, double b, double* out) {
  if (!(b > 0) || !(a >= b)) return false;
  const bool active = true;
  bool ok;
  unit_product_2_lanes<1>(&a, &b, &active, out, &ok);
  out[1] = 1 / out[0];
  return ok;
}

// Stretches s of product 1 nearest to sigma: s_i = (sigma_i + sqrt(sigma_i^2
// + 4 l)) / 2 (the Lagrange condition s_i (s_i - sigma_i) = l), l the root
// of g(l) = prod s_i(l) - 1, increasing in l; safeguarded Newton from the
// uniform scaling onto the set. Where the root is not on that branch (the
// other stretches large enough that the nearest point takes the smallest
// below half of sigma_min), the smallest takes the other branch, found by
// bisection. Returns false only where neither holds (then walk_onto_unit_product).
template <int K>
EDDY_HD_INLINE bool unit_product(const double* sigma, double* s) {
  if constexpr (K == 2) {
    if (unit_product_2(sigma[0], sigma[1], s)) return true;
  }
  auto stretches = [&](double l, double* dg) {
    double prod = 1, d = 0;
    for (int i = 0; i < K; ++i) {
      const double r = sqrt(dmax(0.0, sigma[i] * sigma[i] + 4 * l));
      s[i] = 0.5 * (sigma[i] + r);
      prod *= s[i];
      d += r > 0 ? 1.0 / (r * s[i]) : 1e300;  // d log s_i / dl
    }
    if (dg) *dg = prod * d;
    return prod - 1;
  };
  double a = 0;
  bool positive = true;
  double min2 = sigma[0] * sigma[0];
  for (int i = 0; i < K; ++i) {
    positive = positive && sigma[i] > 0;
    min2 = dmin(min2, sigma[i] * sigma[i]);
  }
  if (positive) {
    a = -0.25 * min2;
    if (stretches(a, nullptr) > 0) {
      // The root is on the other branch for the smallest stretch, s_m =
      // (sigma_m - sqrt(sigma_m^2 + 4 l)) / 2: between l = a, where both
      // branches meet and the product exceeds 1, and l = 0, where s_m and
      // the product vanish.
      int m = 0;
      for (int i = 1; i < K; ++i)
        if (sigma[i] < sigma[m]) m = i;
      auto other = [&](double l) {
        double prod = 1;
        for (int i = 0; i < K; ++i) {
          const double r = sqrt(dmax(0.0, sigma[i] * sigma[i] + 4 * l));
          s[i] = 0.5 * (i == m ? sigma[i] - r : sigma[i] + r);
          prod *= s[i];
        }
        return prod - 1;
      };
      double lo = a, hi = 0;
      for (int it = 0; it < 200 && hi - lo > 1e-16 * -a; ++it) {
        const double mid = 0.5 * (lo + hi);
        if (other(mid) > 0) lo = mid;
        else hi = mid;
      }
      other(0.5 * (lo + hi));
      return s[m] > 0;
    }
  }
  double b = 1.0;
  for (int it = 0; it < 600 && stretches(b, nullptr) < 0; ++it) b *= 4;
  // The uniform scaling onto the set, s_i = sigma_i / prod^(1/K) (the
  // answer for a small change of volume), gives l = s_i (s_i - sigma_i).
  double l = 0.5 * (a + b);
  if (positive) {
    double prod = 1;
    for (int i = 0; i < K; ++i) prod *= sigma[i];
    const double scale = pow(prod, -1.0 / K);
    double guess = 0;
    for (int i = 0; i < K; ++i) guess += scale * sigma[i] * (scale * sigma[i] - sigma[i]) / K;
    if (guess > a && guess < b) l = guess;
  }
  for (int it = 0; it < 60; ++it) {
    double dg;
    const double g = stretches(l, &dg);
    if (fabs(g) < 1e-14) break;  // the product within 1e-14 of 1
    if (g > 0) b = l;
    else a = l;
    double next = l - g / dg;
    if (!(next > a && next < b)) next = 0.5 * (a + b);
    l = next;
  }
  stretches(l, nullptr);
  return true;
}

// Gauss-Newton steps onto prod s = 1 (the last resort).
template <int K>
EDDY_HD_INLINE void walk_onto_unit_product(double* s) {
  for (int it = 0; it < 20; ++it) {
    double prod = 1;
    for (int i = 0; i < K; ++i) prod *= s[i];
    double g[K], g2 = 0;
    for (int i = 0; i < K; ++i) {
      g[i] = prod / s[i];
      g2 += g[i] * g[i];
    }
    for (int i = 0; i < K; ++i) s[i] -= (prod - 1) / g2 * g[i];
  }
}

// An element's projections in its singular values, F = U diag(sigma) V^T:
// the strain target's stretches clamped to [lo, hi], the volume target's of
// unit product. Writes the blended target (1 - share) P_s + share P_v to P
// (3 x K) and returns the energy over the weight, ((1 - share) |sigma -
// strain|^2 + share |sigma - volume|^2) / 2. From F's signed SVD:
template <int K>
EDDY_HD_INLINE double element_projection_svd(const double* U, const double* sigma, const double* V, double lo,
                                             double hi, double share, double* P) {
  double strain[K], volume[K], target[K];
  double es = 0;
  for (int i = 0; i < K; ++i) {
    strain[i] = clamp(sigma[i], lo, hi);
    es += (sigma[i] - strain[i]) * (sigma[i] - strain[i]);
    target[i] = strain[i];
  }
  double e = (1 - share) * es;
  if (share > 0) {
    if (!unit_product<K>(sigma, volume)) {
      for (int i = 0; i < K; ++i) volume[i] = dmax(sigma[i], 1e-3);
      walk_onto_unit_product<K>(volume);
    }
    double ev = 0;
    for (int i = 0; i < K; ++i) {
      ev += (sigma[i] - volume[i]) * (sigma[i] - volume[i]);
      target[i] = (1 - share) * strain[i] + share * volume[i];
    }
    e += share * ev;
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < K; ++j) {
      double sum = 0;
      for (int k = 0; k < K; ++k) sum += U[K * i + k] * target[k] * V[K * j + k];
      P[K * i + j] = sum;
    }
  return 0.5 * e;
}

// and from F.
template <int K>
EDDY_HD_INLINE double element_projection_general(const double* F, double lo, double hi, double share, double* P) {
  double U[3 * K], sigma[K], V[K * K];
  signed_svd<K>(F, U, sigma, V);
  return element_projection_svd<K>(U, sigma, V, lo, hi, share, P);
}

// Triangles' projections in lanes (one triangle each), without their left
// singular vectors. With F^T F = V diag(sigma^2) V^T (a 2x2 eigenproblem in
// closed form), P = U diag(t) V^T = F V diag(t / sigma) V^T, and
// V diag(c) V^T = c2 I + (c1 - c2) v1 v1^T: three square roots and a few
// divisions, where the general path also builds U. The area target is
// unit_product_2's, its lanes'.
// Every lane loop is free of branches, so that compiled for AVX2 (the
// executor's for_each_simd) it runs four triangles at once; each lane does
// the same IEEE operations (no fused multiply-add) whatever the width, so
// one triangle alone (L = 1) gets the same bits as in a batch. A lane too
// flat for t2 / sigma2, or whose Newton steps did not settle, is marked not
// ok: element_projection_general takes it.
template <int L>
struct TriLanes {
  double f[6][L];  // F's columns: f0 (x, y, z), f1 (x, y, z)
  double lo[L], hi[L], share[L];
  double p[6][L];  // P's columns, as f
  double e[L];     // the energy over the weight
  bool ok[L];
};

template <int L>
EDDY_HD_INLINE void triangle_lanes(TriLanes<L>& t) {
  double s1[L], s2[L], vx[L], vy[L], t1[L], t2[L];
  for (int l = 0; l < L; ++l) {
    const double f0x = t.f[0][l], f0y = t.f[1][l], f0z = t.f[2][l], f1x = t.f[3][l], f1y = t.f[4][l], f1z = t.f[5][l];
    const double a = f0x * f0x + f0y * f0y + f0z * f0z, b = f0x * f1x + f0y * f1y + f0z * f1z,
                 d = f1x * f1x + f1y * f1y + f1z * f1z;
    const double cx = f0y * f1z - f0z * f1y, cy = f0z * f1x - f0x * f1z, cz = f0x * f1y - f0y * f1x;
    const double h = 0.5 * (a - d), r = sqrt(h * h + b * b);
    const double l1 = 0.5 * (a + d) + r;
    const double l2 = (cx * cx + cy * cy + cz * cz) / l1;  // det(F^T F) / l1, free of mean - r's cancellation
    const bool ok = l2 > 1e-16 * l1;
    t.ok[l] = ok;
    s1[l] = sqrt(ok ? l1 : 1.0);
    s2[l] = sqrt(ok ? l2 : 1.0);
    // v1 from the better conditioned of (C - l1 I)'s two rows; any unit vector when C = l1 I.
    const double x = r > 0 ? (h >= 0 ? h + r : b) : 1.0, y = r > 0 ? (h >= 0 ? b : r - h) : 0.0;
    const double inv = 1 / sqrt(x * x + y * y);
    vx[l] = x * inv;
    vy[l] = y * inv;
    t1[l] = clamp(s1[l], t.lo[l], t.hi[l]);
    t2[l] = clamp(s2[l], t.lo[l], t.hi[l]);
    t.e[l] = (1 - t.share[l]) * ((s1[l] - t1[l]) * (s1[l] - t1[l]) + (s2[l] - t2[l]) * (s2[l] - t2[l]));
  }
  // The area target (s, 1/s), as unit_product_2 finds it, lane by lane.
  double root[L];
  bool area_lane[L], settled[L];
  for (int l = 0; l < L; ++l) area_lane[l] = t.share[l] > 0;  // no area term: nothing to solve
  unit_product_2_lanes<L>(s1, s2, area_lane, root, settled);
  for (int l = 0; l < L; ++l) t.ok[l] = t.ok[l] && settled[l];
  for (int l = 0; l < L; ++l) {
    const double share = t.share[l];
    const double u1 = root[l], u2 = 1 / root[l];
    const bool area = share > 0;
    const double ea = (s1[l] - u1) * (s1[l] - u1) + (s2[l] - u2) * (s2[l] - u2);
    t.e[l] = 0.5 * (area ? t.e[l] + share * ea : t.e[l]);
    const double g1 = area ? (1 - share) * t1[l] + share * u1 : t1[l];
    const double g2 = area ? (1 - share) * t2[l] + share * u2 : t2[l];
    const double c1 = g1 / s1[l], c2 = g2 / s2[l], dc = c1 - c2;
    const double m00 = c2 + dc * vx[l] * vx[l], m01 = dc * vx[l] * vy[l], m11 = c2 + dc * vy[l] * vy[l];
    for (int k = 0; k < 3; ++k) {
      t.p[k][l] = m00 * t.f[k][l] + m01 * t.f[3 + k][l];
      t.p[3 + k][l] = m01 * t.f[k][l] + m11 * t.f[3 + k][l];
    }
  }
}

// One element's projection (row-major F and P, 3 x K): a triangle by its
// lane (its fallback the general path), a tetrahedron by the general path.
template <int K>
EDDY_HD_INLINE double element_projection(const double* F, double lo, double hi, double share, double* P) {
  if constexpr (K == 2) {
    TriLanes<1> t;
    for (int k = 0; k < 6; ++k) t.f[k][0] = F[2 * (k % 3) + k / 3];
    t.lo[0] = lo, t.hi[0] = hi, t.share[0] = share;
    triangle_lanes<1>(t);
    if (t.ok[0]) {
      for (int k = 0; k < 6; ++k) P[2 * (k % 3) + k / 3] = t.p[k][0];
      return t.e[0];
    }
  }
  return element_projection_general<K>(F, lo, hi, share, P);
}

}  // namespace eddy::pd

#pragma once
// SPH smoothing kernels in 3D, support radius h (W = 0 for r >= h).
//
//   poly6   W = 315 / (64 pi h^9) (h^2 - r^2)^3                 Mueller et al. 2003, eq. 20
//   spiky   W = 15 / (pi h^6) (h - r)^3,
//           grad W = -45 / (pi h^6) (h - r)^2 r/|r|               Mueller et al. 2003, eq. 21
//   cubic   W = 8 / (pi h^3) { 6q^3 - 6q^2 + 1      q <= 1/2      Monaghan 1992 (cubic B-spline),
//                             { 2 (1 - q)^3         q <= 1        in the support-radius form
//                                                                 SPlisHSPlasH uses, q = r/h
//   viscosity  lap W = 45 / (pi h^6) (h - r)                      Mueller et al. 2003, eq. 22
//   cohesion   C(r) = 32 / (pi h^9) { (h - r)^3 r^3               h/2 < r <= h     Akinci et al. 2013,
//                                   { 2 (h - r)^3 r^3 - h^6/64    0 < r <= h/2     eq. 2
// Each kernel integrates to 1 over its support (tests/unit/core/kernels_test).
#include <stdint.h>

#include "eddy/core/enum_names.h"
#include "eddy/core/vec.h"

namespace eddy {

constexpr float kPi = 3.14159265358979323846f;

// A kernel value and its gradient, evaluated together (one square root).
struct KernelSample {
  float w;
  Vec3f grad;
};
// The same as scalars: W(|r|) and g with grad W(r) = r g.
struct KernelScalars {
  float w, g;
};

struct Poly6 {
  float h2, k, kg;
  EDDY_HD_INLINE explicit Poly6(float h)
      : h2(h * h), k(315.0f / (64.0f * kPi * powf(h, 9.0f))), kg(-945.0f / (32.0f * kPi * powf(h, 9.0f))) {}
  // Laplacian: -945 / (32 pi h^9) (h^2 - r^2)(3 h^2 - 7 r^2) (the colour field's curvature, Mueller et al. 2003).
  EDDY_HD_INLINE float laplacian(float r2) const {
    if (r2 >= h2) return 0.0f;
    return kg * (h2 - r2) * (3.0f * h2 - 7.0f * r2);
  }
  EDDY_HD_INLINE float W(float r2) const {
    if (r2 >= h2) return 0.0f;
    const float d = h2 - r2;
    return k * d * d * d;
  }
  // W without a branch (the same value), for the batched pair loops.
  EDDY_HD_INLINE float W_select(float r2) const {
    const float d = h2 - r2;
    return r2 >= h2 ? 0.0f : k * d * d * d;  // (NaN stays NaN, as in W)
  }
  // Gradient with respect to r (the vector from the neighbour to the particle).
  EDDY_HD_INLINE Vec3f grad(Vec3f r) const {
    const float r2 = length2(r);
    if (r2 >= h2) return vec3(0.0f);
    const float d = h2 - r2;
    return r * (kg * d * d);
  }
};

struct Spiky {
  float h, k, kg;
  EDDY_HD_INLINE explicit Spiky(float h_)
      : h(h_), k(15.0f / (kPi * powf(h_, 6.0f))), kg(-45.0f / (kPi * powf(h_, 6.0f))) {}
  EDDY_HD_INLINE float W(float r2) const {
    const float r = sqrtf(r2);
    if (r >= h) return 0.0f;
    const float d = h - r;
    return k * d * d * d;
  }
  // grad W(r) = r * grad_scale(|r|^2). Guarded at r -> 0, where the
  // direction is undefined: 0 there.
  EDDY_HD_INLINE float grad_scale(float r2) const {
    const float rl = sqrtf(r2);
    if (rl >= h || rl <= 1e-9f * h) return 0.0f;
    const float d = h - rl;
    return kg * d * d / rl;
  }
  // grad_scale without a branch (the same value), for the batched pair loops.
  EDDY_HD_INLINE float grad_scale_select(float r2) const {
    const float rl = sqrtf(r2);
    const float d = h - rl;
    const float g = kg * d * d / (rl > 1e-9f * h ? rl : 1.0f);
    return ((rl >= h) | (rl <= 1e-9f * h)) ? 0.0f : g;  // (NaN stays NaN, as in grad_scale)
  }
  EDDY_HD_INLINE Vec3f grad(Vec3f r) const { return r * grad_scale(length2(r)); }
};

struct CubicSpline {
  float h, inv_h, k, kg;
  EDDY_HD_INLINE explicit CubicSpline(float h_)
      : h(h_), inv_h(1.0f / h_), k(8.0f / (kPi * h_ * h_ * h_)), kg(48.0f / (kPi * h_ * h_ * h_)) {}
  EDDY_HD_INLINE float W(float r2) const {
    const float q = sqrtf(r2) * inv_h;
    if (q >= 1.0f) return 0.0f;
    if (q <= 0.5f) return k * (6.0f * q * q * q - 6.0f * q * q + 1.0f);
    const float d = 1.0f - q;
    return k * 2.0f * d * d * d;
  }
  // W(|r|) and grad W(r) for r2 = |r|^2. Branch-free: neighbours sit on
  // both sides of q = 1/2 (the nearest lattice neighbour is exactly there at
  // h = 2 spacings), where a branch would be mispredicted half the time.
  EDDY_HD_INLINE KernelScalars scalars(float r2) const {
    const float rl = sqrtf(r2);
    // (A select, not fminf: fminf is a library call on x86 and keeps the
    // pair loops from vectorising. The same value, NaN included.)
    const float qr = rl * inv_h;
    const float q = qr < 1.0f ? qr : 1.0f;
    const float d = 1.0f - q;
    const bool inner = q <= 0.5f;
    const float w_in = 6.0f * q * q * (q - 1.0f) + 1.0f, w_out = 2.0f * d * d * d;
    const float g_in = q * (3.0f * q - 2.0f), g_out = -d * d;
    const float w = k * (inner ? w_in : w_out);
    const float dwdq = inner ? g_in : g_out;
    // The division on a safe divisor, then the select: a division under a
    // condition would keep the loop from being vectorised.
    const bool away = rl > 1e-9f * h;
    const float g = kg * dwdq * inv_h / (away ? rl : 1.0f);
    return {w, away ? g : 0.0f};
  }
  EDDY_HD_INLINE KernelSample eval(Vec3f r, float r2) const {
    const KernelScalars s = scalars(r2);
    return {s.w, r * s.g};
  }
  // grad W(r) = r * grad_scale(|r|^2), guarded at r -> 0.
  EDDY_HD_INLINE float grad_scale(float r2) const {
    const float rl = sqrtf(r2);
    const float q = rl * inv_h;
    if (q >= 1.0f || rl <= 1e-9f * h) return 0.0f;
    // dW/dr / r, from W(q): d/dq = 18q^2 - 12q (inner), -6 (1-q)^2 (outer); dq/dr = 1/h.
    float dwdq;
    if (q <= 0.5f) dwdq = q * (3.0f * q - 2.0f);
    else {
      const float d = 1.0f - q;
      dwdq = -d * d;
    }
    return kg * dwdq * inv_h / rl;
  }
  EDDY_HD_INLINE Vec3f grad(Vec3f r) const { return r * grad_scale(length2(r)); }
};

// The Laplacian of Mueller et al.'s viscosity kernel, the only part of it
// the viscosity force uses: positive everywhere inside the support, so
// viscosity always damps relative motion.
struct ViscosityLaplacian {
  float h, k;
  EDDY_HD_INLINE explicit ViscosityLaplacian(float h_) : h(h_), k(45.0f / (kPi * powf(h_, 6.0f))) {}
  EDDY_HD_INLINE float operator()(float r) const { return r < h ? k * (h - r) : 0.0f; }
};

// Akinci et al. 2013's cohesion spline: repulsive below h/2, attractive
// beyond, zero from h on.
struct CohesionSpline {
  float h, k, tail;
  EDDY_HD_INLINE explicit CohesionSpline(float h_)
      : h(h_), k(32.0f / (kPi * powf(h_, 9.0f))), tail(powf(h_, 6.0f) / 64.0f) {}
  EDDY_HD_INLINE float operator()(float r) const {
    if (r >= h || r <= 0.0f) return 0.0f;
    const float a = (h - r) * r, a3 = a * a * a;
    return 2.0f * r > h ? k * a3 : k * (2.0f * a3 - tail);
  }
};

// Which kernels a solver uses for density and for gradients.
enum class KernelPair : int32_t {
  Poly6Spiky = 0,  // poly6 density, spiky gradient (Mueller et al. 2003)
  CubicSpline = 1  // cubic spline for both: a consistent gradient
};
inline constexpr EnumName<KernelPair> kKernelPairNames[] = {{KernelPair::CubicSpline, "cubic_spline"},
                                                            {KernelPair::Poly6Spiky, "poly6_spiky"}};

// The kernels of a pair, chosen at run time: density kernel W (poly6 or
// cubic) and gradient kernel (spiky or cubic).
struct PairKernels {
  Poly6 poly6;
  Spiky spiky;
  CubicSpline cubic;
  int kind;  // KernelPair
  EDDY_HD_INLINE explicit PairKernels(float h, int k) : poly6(h), spiky(h), cubic(h), kind(k) {}
  EDDY_HD_INLINE float W(float r2) const { return kind == 0 ? poly6.W(r2) : cubic.W(r2); }
  EDDY_HD_INLINE Vec3f grad(Vec3f r) const { return kind == 0 ? spiky.grad(r) : cubic.grad(r); }
  // Density kernel value and the gradient kernel's scale g, grad = r g, at |r|^2 = r2.
  EDDY_HD_INLINE KernelScalars scalars(float r2) const {
    if (kind == 0) return {poly6.W(r2), spiky.grad_scale(r2)};
    return cubic.scalars(r2);
  }
  // Density kernel value and gradient-kernel gradient at r, |r|^2 = r2.
  EDDY_HD_INLINE KernelSample eval(Vec3f r, float r2) const {
    if (kind == 0) return {poly6.W(r2), spiky.grad(r)};
    return cubic.eval(r, r2);
  }
  // scalars() of n pairs at once (|r|^2 in r2[0..n)): the kind is chosen
  // once, and the pairs go through a branch-free loop the compiler
  // vectorises. The same values as scalars().
  template <int n>
  EDDY_HD_INLINE void scalars(const float* r2, float* w, float* g) const {
    if (kind == 0) {
      for (int l = 0; l < n; ++l) {
        w[l] = poly6.W_select(r2[l]);
        g[l] = spiky.grad_scale_select(r2[l]);
      }
    } else {
      for (int l = 0; l < n; ++l) {
        const KernelScalars s = cubic.scalars(r2[l]);
        w[l] = s.w;
        g[l] = s.g;
      }
    }
  }
};

// The density kernel of a pair at |r|^2 = r2 (host code: calibration).
double kernel_W(KernelPair k, float h, float r2);

// Sums over a cubic lattice of spacing s around the origin, within h: the
// calibration of a full neighbourhood.
struct LatticeSums {
  double w_sum;      // sum_j W(x_j), origin included
  double grad2_sum;  // sum_{j != 0} |grad W(x_j)|^2
};
LatticeSums lattice_sums(float spacing, float h, KernelPair kernel);

}  // namespace eddy

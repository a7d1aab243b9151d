// SPH kernels: each integrates to 1 over its support, its gradient is the
// derivative of W, and gradients sum to zero over a symmetric lattice.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "eddy/core/kernels.h"

namespace eddy {
namespace {

// int_0^h 4 pi r^2 W(r) dr by Simpson's rule in double.
template <class K>
double integral(const K& k, double h) {
  const int n = 20000;
  const double dr = h / n;
  double s = 0;
  for (int i = 0; i <= n; ++i) {
    const double r = i * dr;
    const double w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
    s += w * 4.0 * M_PI * r * r * k.W(float(r * r));
  }
  return s * dr / 3.0;
}

TEST(Kernels, Poly6IntegratesToOne) { EXPECT_NEAR(integral(Poly6(0.1f), 0.1), 1.0, 1e-4); }
TEST(Kernels, SpikyIntegratesToOne) { EXPECT_NEAR(integral(Spiky(0.1f), 0.1), 1.0, 1e-4); }
TEST(Kernels, CubicSplineIntegratesToOne) { EXPECT_NEAR(integral(CubicSpline(0.1f), 0.1), 1.0, 1e-4); }

TEST(Kernels, VanishAtAndBeyondTheSupport) {
  const float h = 0.2f;
  for (float r : {h, 1.0001f * h, 3.0f * h}) {
    EXPECT_EQ(Poly6(h).W(r * r), 0.0f);
    EXPECT_EQ(Spiky(h).W(r * r), 0.0f);
    EXPECT_EQ(CubicSpline(h).W(r * r), 0.0f);
    EXPECT_EQ(length(CubicSpline(h).grad(vec3(r, 0, 0))), 0.0f);
    EXPECT_EQ(length(Spiky(h).grad(vec3(0, r, 0))), 0.0f);
  }
}

template <class K>
void expect_gradient_is_derivative(const K& k, float h) {
  // Central differences of W along a diagonal direction.
  const Vec3f dir = normalize_or(vec3(1, 2, -0.5f), vec3(1, 0, 0));
  for (float q : {0.1f, 0.3f, 0.49f, 0.51f, 0.7f, 0.95f}) {
    const Vec3f r = dir * (q * h);
    const float e = 1e-4f * h;
    const float dw = (k.W(length2(r + dir * e)) - k.W(length2(r - dir * e))) / (2 * e);
    const Vec3f g = k.grad(r);
    EXPECT_NEAR(dot(g, dir), dw, 2e-3f * std::fabs(dw) + 1e-2f) << "q = " << q;
    EXPECT_NEAR(length(cross(g, dir)), 0.0f, 1e-3f * length(g) + 1e-6f) << "gradient is radial";
  }
}

TEST(Kernels, SpikyGradientIsTheDerivativeOfSpiky) { expect_gradient_is_derivative(Spiky(0.1f), 0.1f); }
TEST(Kernels, CubicGradientIsTheDerivativeOfCubic) { expect_gradient_is_derivative(CubicSpline(0.1f), 0.1f); }
TEST(Kernels, Poly6GradientIsTheDerivativeOfPoly6) { expect_gradient_is_derivative(Poly6(0.1f), 0.1f); }

TEST(Kernels, GradientsSumToZeroOverASymmetricLattice) {
  const float s = 0.05f, h = 2.0f * s;
  Vec3f sum_spiky = vec3(0), sum_cubic = vec3(0), sum_poly = vec3(0);
  float mag = 0;
  for (int i = -3; i <= 3; ++i)
    for (int j = -3; j <= 3; ++j)
      for (int k = -3; k <= 3; ++k) {
        const Vec3f r = vec3(i * s, j * s, k * s);
        sum_spiky += Spiky(h).grad(r);
        sum_cubic += CubicSpline(h).grad(r);
        sum_poly += Poly6(h).grad(r);
        mag += length(Spiky(h).grad(r));
      }
  EXPECT_GT(mag, 1.0f);
  EXPECT_LT(length(sum_spiky), 1e-6f * mag);
  EXPECT_LT(length(sum_cubic), 1e-6f * mag);
  EXPECT_LT(length(sum_poly), 1e-6f * mag);
}

TEST(Kernels, SpikyGradientIsGuardedAtZeroDistance) {
  EXPECT_EQ(length(Spiky(0.1f).grad(vec3(0, 0, 0))), 0.0f);
  EXPECT_EQ(length(CubicSpline(0.1f).grad(vec3(0, 0, 0))), 0.0f);
}

// The scalar pair (W, g with grad W = r g) the DFSPH density pass stores per
// pair is the density kernel and the gradient kernel, for both pairs, from
// zero distance (guarded: g = 0) through the support's end.
TEST(Kernels, PairScalarsAreTheKernelAndItsGradient) {
  const float h = 0.1f;
  for (int kind : {0, 1}) {
    const PairKernels K(h, kind);
    for (int i = 0; i <= 120; ++i) {
      const Vec3f r = vec3(0.6f, -0.3f, 0.742f) * (h * float(i) / 100.0f);
      const float r2 = length2(r);
      const KernelScalars s = K.scalars(r2);
      const Vec3f g = K.grad(r);
      EXPECT_NEAR(s.w, K.W(r2), 1e-5f * K.W(0.0f)) << "kind " << kind << " step " << i;
      EXPECT_LE(length(r * s.g - g), 1e-5f * (length(g) + 1e-3f)) << "kind " << kind << " step " << i;
    }
    EXPECT_EQ(K.scalars(0.0f).g, 0.0f);
  }
}

// The batched form the pair loops use (PairKernels::scalars<n>, branch-free)
// against the per-pair one, bit for bit: at zero, at the cubic's knot
// q = 1/2, at and beyond the support, and at a batch's spare-lane offset
// (far, far, far) with far = h, where both must be exactly 0; NaN as per pair.
TEST(Kernels, BatchedScalarsEqualThePerPairOnes) {
  const float h = 0.1f;
  std::vector<float> r2s = {0.0f, 1e-12f, 0.25f * h * h, h * h * (1.0f - 1e-6f), h * h, 1.5f * h * h, 3.0f * h * h};
  for (int i = 1; i < 200; ++i) r2s.push_back(h * h * float(i) / 150.0f);
  r2s.push_back(std::nanf(""));
  while (r2s.size() % 8) r2s.push_back(3.0f * h * h);
  for (int kind : {0, 1}) {
    const PairKernels K(h, kind);
    for (std::size_t b = 0; b < r2s.size(); b += 8) {
      float w[8], g[8];
      K.scalars<8>(r2s.data() + b, w, g);
      for (int l = 0; l < 8; ++l) {
        const KernelScalars s = K.scalars(r2s[b + l]);
        if (std::isnan(r2s[b + l])) {  // what the per-pair form gives: NaN (poly6, spiky) or 0 (cubic)
          EXPECT_TRUE(std::isnan(s.w) ? std::isnan(w[l]) : w[l] == s.w) << "kind " << kind;
          EXPECT_TRUE(std::isnan(s.g) ? std::isnan(g[l]) : g[l] == s.g) << "kind " << kind;
          if (kind == 0) {
            EXPECT_TRUE(std::isnan(w[l]) && std::isnan(g[l]));
          }
          continue;
        }
        EXPECT_EQ(w[l], s.w) << "kind " << kind << " r2 " << r2s[b + l];
        EXPECT_EQ(g[l], s.g) << "kind " << kind << " r2 " << r2s[b + l];
        if (r2s[b + l] >= h * h) {
          EXPECT_EQ(w[l], 0.0f);
          EXPECT_EQ(g[l], 0.0f);
        }
      }
    }
  }
}

// Laplacians against central differences of W along r: lap W = W'' + 2 W' / r.
template <class F>
double numeric_laplacian(F w_of_r, double r) {
  const double e = 1e-4 * r;
  const double w0 = w_of_r(r - e), w1 = w_of_r(r), w2 = w_of_r(r + e);
  return (w2 - 2 * w1 + w0) / (e * e) + 2.0 / r * (w2 - w0) / (2 * e);
}

TEST(Kernels, Poly6LaplacianMatchesItsSecondDerivative) {
  const double h = 0.1;
  const Poly6 k{float(h)};
  auto W = [&](double r) { return 315.0 / (64.0 * M_PI * std::pow(h, 9)) * std::pow(h * h - r * r, 3); };
  for (double q : {0.1, 0.3, 0.5, 0.7, 0.9}) {
    const double r = q * h, want = numeric_laplacian(W, r);
    EXPECT_NEAR(k.laplacian(float(r * r)), want, 1e-3 * std::fabs(want) + 1e-2) << q;
  }
  EXPECT_EQ(k.laplacian(1.0001f * float(h * h)), 0.0f);
}

TEST(Kernels, ViscosityLaplacianMatchesMuellersKernel) {
  // W = 15 / (2 pi h^3) (-r^3 / (2 h^3) + r^2 / h^2 + h / (2 r) - 1), Mueller et al. 2003, eq. 22.
  const double h = 0.1;
  const ViscosityLaplacian lap{float(h)};
  auto W = [&](double r) {
    return 15.0 / (2 * M_PI * h * h * h) * (-r * r * r / (2 * h * h * h) + r * r / (h * h) + h / (2 * r) - 1);
  };
  for (double q : {0.2, 0.4, 0.6, 0.8}) {
    const double r = q * h, want = numeric_laplacian(W, r);
    EXPECT_NEAR(lap(float(r)), want, 1e-3 * std::fabs(want)) << q;
    EXPECT_GT(lap(float(r)), 0.0f);
  }
  EXPECT_EQ(lap(float(h)), 0.0f);
}

TEST(Kernels, CohesionSplineRepelsCloseAttractsFarAndIsContinuous) {
  const float h = 0.1f;
  const CohesionSpline C(h);
  EXPECT_LT(C(0.05f * h), 0.0f);                             // repulsive near 0
  EXPECT_GT(C(0.75f * h), 0.0f);                             // attractive beyond h/2
  EXPECT_NEAR(C(0.5f * h - 1e-6f), C(0.5f * h + 1e-6f), 1e-3f * C(0.5f * h));  // the two pieces meet at h/2
  EXPECT_EQ(C(h), 0.0f);
  EXPECT_EQ(C(2 * h), 0.0f);
}

}  // namespace
}  // namespace eddy

// Host-side kernel helpers: calibration sums over a lattice.
#include <cmath>

#include "eddy/core/kernels.h"

namespace eddy {

double kernel_W(KernelPair k, float h, float r2) {
  return k == KernelPair::Poly6Spiky ? Poly6(h).W(r2) : CubicSpline(h).W(r2);
}

LatticeSums lattice_sums(float s, float h, KernelPair kernel) {
  LatticeSums out{0.0, 0.0};
  const int m = static_cast<int>(std::ceil(h / s));
  const Spiky spiky(h);
  const CubicSpline cubic(h);
  for (int i = -m; i <= m; ++i)
    for (int j = -m; j <= m; ++j)
      for (int k = -m; k <= m; ++k) {
        const Vec3f r = vec3(float(i) * s, float(j) * s, float(k) * s);
        const float r2 = length2(r);
        if (r2 >= h * h) continue;
        out.w_sum += kernel_W(kernel, h, r2);
        if (i == 0 && j == 0 && k == 0) continue;
        const Vec3f g = kernel == KernelPair::Poly6Spiky ? spiky.grad(r) : cubic.grad(r);
        out.grad2_sum += double(length2(g));
      }
  return out;
}


}  // namespace eddy

#pragma once
// Associative operators for Executor::reduce, usable on host and device.
#include "eddy/core/vec.h"

namespace eddy {

struct SumOp {
  template <class T>
  EDDY_HD_INLINE T operator()(const T& a, const T& b) const { return a + b; }
};
struct MaxOp {
  EDDY_HD_INLINE float operator()(float a, float b) const { return fmaxf(a, b); }
  EDDY_HD_INLINE double operator()(double a, double b) const { return fmax(a, b); }
  EDDY_HD_INLINE unsigned operator()(unsigned a, unsigned b) const { return a > b ? a : b; }
};

// Axis-aligned bounds; `lo > hi` means empty.
struct Bounds3 {
  Vec3f lo, hi;
};
EDDY_HD_INLINE Bounds3 empty_bounds() { return {vec3(3.0e38f), vec3(-3.0e38f)}; }
struct BoundsOp {
  EDDY_HD_INLINE Bounds3 operator()(const Bounds3& a, const Bounds3& b) const {
    return {vmin(a.lo, b.lo), vmax(a.hi, b.hi)};
  }
};

}  // namespace eddy

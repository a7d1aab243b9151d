#pragma once
// Force fields every solver applies besides gravity (ForceField node): an
// acceleration at each particle (or, in MPM, each grid node) from its
// position and velocity, within an optional falloff region.
//   uniform   a = vector (wind as an acceleration, a gust, a tilt of gravity)
//   vortex    a = strength t, t the unit tangent around the axis through
//             center (right-handed about axis): a swirl
//   drag      a = strength (vector - v): pulled towards the velocity
//             `vector` at the rate `strength` (1/s), as air drags spray
// The region: everywhere when radius is 0; otherwise full strength within
// radius - falloff of center, fading linearly to 0 at radius.
#include <cstdint>

#include "eddy/core/hd.h"
#include "eddy/core/vec.h"

namespace eddy {

enum class FieldType : int32_t { Uniform = 0, Vortex = 1, Drag = 2 };

struct ForceField {
  int32_t type = 0;            // FieldType
  Vec3f vector = vec3(0.0f);   // uniform: m/s^2; drag: m/s
  Vec3f center = vec3(0.0f);   // m
  Vec3f axis = vec3(0.0f, 1.0f, 0.0f);  // vortex: unit
  float strength = 0.0f;       // vortex: m/s^2; drag: 1/s
  float radius = 0.0f, falloff = 0.0f;  // m
};

EDDY_HD_INLINE float field_weight(const ForceField& f, Vec3f x) {
  if (!(f.radius > 0.0f)) return 1.0f;
  const float d = length(x - f.center), inner = f.radius - f.falloff;
  if (d <= inner) return 1.0f;
  if (d >= f.radius) return 0.0f;
  return (f.radius - d) / fmaxf(f.falloff, 1e-12f);
}

EDDY_HD_INLINE Vec3f field_accel(const ForceField& f, Vec3f x, Vec3f v) {
  const float w = field_weight(f, x);
  if (w == 0.0f) return vec3(0.0f);
  switch (f.type) {
    case int32_t(FieldType::Uniform): return f.vector * w;
    case int32_t(FieldType::Vortex): {
      const Vec3f d = x - f.center;
      const Vec3f radial = d - f.axis * dot(d, f.axis);
      const Vec3f t = cross(f.axis, radial);
      const float l = length(t);
      return l > 0.0f ? t * (f.strength * w / l) : vec3(0.0f);
    }
    case int32_t(FieldType::Drag): return (f.vector - v) * (f.strength * w);
  }
  return vec3(0.0f);
}

// The sum over n fields.
EDDY_HD_INLINE Vec3f fields_accel(const ForceField* fs, uint32_t n, Vec3f x, Vec3f v) {
  Vec3f a = vec3(0.0f);
  for (uint32_t k = 0; k < n; ++k) a += field_accel(fs[k], x, v);
  return a;
}

}  // namespace eddy

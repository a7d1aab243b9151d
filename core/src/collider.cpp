#include "eddy/core/collider.h"

namespace eddy {

namespace {
Mat3f matmul(const Mat3f& a, const Mat3f& b) {
  // Columns of b.
  const Vec3f c0{b.r0.x, b.r1.x, b.r2.x}, c1{b.r0.y, b.r1.y, b.r2.y}, c2{b.r0.z, b.r1.z, b.r2.z};
  auto row = [&](Vec3f r) { return Vec3f{dot(r, c0), dot(r, c1), dot(r, c2)}; };
  return {row(a.r0), row(a.r1), row(a.r2)};
}
}  // namespace

Mat3f rotation_from_euler_degrees(Vec3f deg) {
  const float k = 3.14159265358979323846f / 180.0f;
  const float cx = cosf(deg.x * k), sx = sinf(deg.x * k);
  const float cy = cosf(deg.y * k), sy = sinf(deg.y * k);
  const float cz = cosf(deg.z * k), sz = sinf(deg.z * k);
  const Mat3f rx{{1, 0, 0}, {0, cx, -sx}, {0, sx, cx}};
  const Mat3f ry{{cy, 0, sy}, {0, 1, 0}, {-sy, 0, cy}};
  const Mat3f rz{{cz, -sz, 0}, {sz, cz, 0}, {0, 0, 1}};
  return matmul(rz, matmul(ry, rx));
}

Mat3f rotation_y_to(Vec3f n) {
  n = normalize_or(n, vec3(0, 1, 0));
  // Build an orthonormal frame (t, n, b) with t, b perpendicular to n.
  const Vec3f helper = fabsf(n.x) < 0.9f ? vec3(1, 0, 0) : vec3(0, 0, 1);
  const Vec3f t = normalize_or(cross(n, helper), vec3(1, 0, 0));
  const Vec3f b = cross(t, n);
  // Columns are the images of local x, y, z.
  return {{t.x, n.x, b.x}, {t.y, n.y, b.y}, {t.z, n.z, b.z}};
}

Vec3f rotation_vector(const Mat3f& R) {
  // R - R^T = 2 sin(a) [k]x, trace R = 1 + 2 cos(a).
  const Vec3f s = vec3(R.r2.y - R.r1.z, R.r0.z - R.r2.x, R.r1.x - R.r0.y) * 0.5f;
  const float sin_a = length(s), cos_a = 0.5f * (R.r0.x + R.r1.y + R.r2.z - 1.0f);
  const float a = atan2f(sin_a, cos_a);
  return sin_a > 1e-12f ? s * (a / sin_a) : s;
}

void set_motion(Collider& c, Vec3f position, const Mat3f& rotation, Vec3f velocity, Vec3f angular_velocity,
                double time) {
  // The pose at t = 0 is where the motion, run back over `time`, started.
  Collider at = c;
  at.center = position;
  at.rotation = rotation;
  at.velocity = velocity;
  at.angular_velocity = angular_velocity;
  const ColliderPose start = collider_pose(at, float(-time));
  c.center = start.center;
  c.rotation = start.rotation;
  c.velocity = velocity;
  c.angular_velocity = angular_velocity;
}

}  // namespace eddy

#pragma once
// A soft-body scene the PD tests on the CPU and on the GPU share: an n x n
// cloth, 0.4 m square at 0.3 m height, attached by its edge x = -0.2 to a
// bar (a capsule along z) sliding at 0.2 m/s, falling onto a box: pins
// whose targets move every step, contacts every step, contact slots handed
// out as points arrive.
#include "eddy/core/collider.h"
#include "eddy/core/mesh.h"
#include "eddy/core/pd/soft.h"

namespace eddy::test {

struct SlidingBarDrape {
  SoftBodies cloth;
  Collider bar, box;
};

inline SlidingBarDrape sliding_bar_drape(int n) {
  SoftMaterial mat;
  mat.young_modulus = 1e6;
  mat.bend_stiffness = 1e-4;
  SlidingBarDrape s;
  s.cloth = make_cloth(grid_mesh(vec3(0.0f, 0.3f, 0.0f), vec3(0.0f, 0.0f, 0.4f), vec3(0.4f, 0.0f, 0.0f), n, n), mat,
                       "cloth");
  s.bar.type = ShapeType::Capsule;
  s.bar.center = vec3(-0.2f, 0.3f, 0.0f);
  s.bar.rotation = rotation_from_euler_degrees(vec3(90.0f, 0.0f, 0.0f));
  s.bar.size = vec3(0.01f, 0.3f, 0.0f);
  s.bar.velocity = vec3(0.2f, 0.0f, 0.0f);
  s.cloth.attach_to({s.bar}, 0.005, 0.0f);
  s.box.type = ShapeType::Box;
  s.box.center = vec3(0.1f, 0.1f, 0.2f);
  s.box.size = vec3(0.15f, 0.1f, 0.15f);
  return s;
}

}  // namespace eddy::test

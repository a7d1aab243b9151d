// Deforming mesh colliders (issue 19): a ColliderMesh fed a mesh that moves
// or changes shape from frame to frame (here a box through an animated
// Transform) carries its surface's velocity, the points' motion since the
// previous frame at the closest point of the surface, which also carries
// the surface through the steps between two frames; a liquid resting on
// such a surface is dragged along, and a liquid in front of it pushed, as by
// a collider given that velocity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "../../builtin_registry.h"

namespace eddy {
namespace {

// A box of size `size` at `position` through a Transform with `transform`
// parameters into a ColliderMesh of voxel `voxel`, with `extra` nodes and
// links (leading commas included).
Graph mesh_collider(const std::string& size, const std::string& position, const std::string& transform,
                    const std::string& voxel, const std::string& collider_params = "",
                    const std::string& extra_nodes = "", const std::string& extra_links = "", int frames = 5) {
  return parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, )" + std::to_string(frames) +
                         R"(], "fps": 24,
    "nodes": [{"id": "box", "type": "RigidBody", "params": {"size": )" + size + R"(, "position": )" + position + R"(}},
      {"id": "shape", "type": "BodiesToMesh"},
      {"id": "move", "type": "Transform", "params": {)" + transform + R"(}},
      {"id": "c", "type": "ColliderMesh", "params": {"voxelSize": )" + voxel + collider_params + "}}" + extra_nodes +
                         R"(],
    "links": [{"from": "box.bodies", "to": "shape.bodies"}, {"from": "shape.mesh", "to": "move.mesh"},
      {"from": "move.mesh", "to": "c.mesh"})" + extra_links + "]}",
                     test::builtin_registry(), "test");
}

std::shared_ptr<const Colliders> collider_at(CookEngine& e, int frame) {
  return e.cook("c", frame)->at("colliders").as<Colliders>();
}

TEST(DeformingMeshCollider, ATranslatedSequenceMovesItsSurfaceAtTheFramesRate) {
  // 1 cm a frame at 24 fps: 0.24 m/s along x.
  CookEngine e(test::builtin_registry(),
               mesh_collider("[0.2, 0.2, 0.2]", "[0, 0, 0]", R"("translate": [{"expr": "0.01 * $F"}, 0, 0])", "0.02"));
  EXPECT_EQ(collider_at(e, 1)->shapes.at(0).grid_velocity, nullptr);  // nothing before the start frame
  const auto c = collider_at(e, 3);
  const Collider& s = c->shapes.at(0);
  ASSERT_NE(s.grid_velocity, nullptr);
  ASSERT_EQ(c->velocities.size(), 1u);
  const std::size_t nodes = std::size_t(s.grid_dims[0]) * s.grid_dims[1] * s.grid_dims[2];
  std::size_t moving = 0;
  float worst = 0;
  for (std::size_t n = 0; n < nodes; ++n) {
    const Vec3f v = s.grid_velocity[n];
    if (length(v) == 0.0f) continue;
    ++moving;
    worst = std::max(worst, length(v - vec3(0.24f, 0.0f, 0.0f)));
  }
  EXPECT_GT(moving, 1000u);
  EXPECT_LT(worst, 1e-5f);
  // collider_velocity reads it at the surface, in world axes.
  const Vec3f top = vec3(0.03f, 0.1f, 0.0f);
  EXPECT_LT(length(collider_velocity(s, top, float(2.0 / 24)) - vec3(0.24f, 0.0f, 0.0f)), 1e-5f);
  // A mesh that stays where it is carries none.
  CookEngine still(test::builtin_registry(), mesh_collider("[0.2, 0.2, 0.2]", "[0, 0, 0]", "", "0.02"));
  EXPECT_EQ(collider_at(still, 3)->shapes.at(0).grid_velocity, nullptr);
}

// Between two frames the surface moves on its velocity rather than jumping
// at the next frame: the +x face of a box stepping 1 cm a frame stands at
// x = 0.1 + 0.01 F at frame F (time (F - 1) / 24), and half a centimetre
// short of it half a frame earlier.
TEST(DeformingMeshCollider, TheSurfaceMovesThroughTheStepsBetweenFrames) {
  CookEngine e(test::builtin_registry(),
               mesh_collider("[0.2, 0.2, 0.2]", "[0, 0, 0]", R"("translate": [{"expr": "0.01 * $F"}, 0, 0])", "0.01"));
  const Collider s = collider_at(e, 3)->shapes.at(0);
  const float T = float(2.0 / 24);
  for (const float back : {0.0f, 0.25f, 0.5f, 1.0f}) {  // frames before frame 3's time
    const float x = 0.13f - 0.01f * back, t = T - back / 24.0f;
    const SdfSample d = collider_sdf(s, vec3(x, 0.02f, -0.03f), t);
    EXPECT_NEAR(d.distance, 0.0f, 1e-4f) << back << " frame before";
    EXPECT_GT(d.normal.x, 0.99f) << back << " frame before";
  }
}

// A piston: a wall driven into a pool at 0.1 m/s (4 mm a frame, a particle
// radius), as a box mesh moved by an animated Transform and as a ColliderBox
// given that velocity. Between frames the mesh's surface moves on its
// velocity as the box does, so the water is pushed the same way; a surface
// that jumped at each frame would throw the particles it lands in at
// several times its speed.
TEST(DeformingMeshCollider, APistonMeshPushesWaterAsAMovingBoxDoes) {
  const std::string water = R"(, {"id": "glass", "type": "ColliderBox", "params": {"mode": "container",
      "center": [0, 0.1, 0], "size": [0.3, 0.2, 0.2]}},
    {"id": "all", "type": "MergeColliders"},
    {"id": "water", "type": "FluidBox", "params": {"center": [0.01, 0.03, 0], "size": [0.27, 0.06, 0.19],
      "particle_radius": 0.004}},
    {"id": "sim", "type": "PBFSolver", "params": {"substeps": 4}})";
  const std::string links = R"(, {"from": "c.colliders", "to": "all.colliders"},
    {"from": "glass.colliders", "to": "all.colliders"}, {"from": "all.colliders", "to": "water.colliders"},
    {"from": "water.particles", "to": "sim.particles"}, {"from": "all.colliders", "to": "sim.colliders"})";
  const Graph piston = mesh_collider("[0.02, 0.2, 0.3]", "[-0.14, 0.1, 0]",
                                     R"("translate": [{"expr": "0.1 * $T"}, 0, 0])", "0.004", "", water, links, 9);
  const Graph box = parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 9], "fps": 24,
    "nodes": [{"id": "c", "type": "ColliderBox", "params": {"center": [-0.14, 0.1, 0], "size": [0.02, 0.2, 0.3],
      "velocity": [0.1, 0, 0]}})" + water + R"(],
    "links": [)" + links.substr(1) + "]}",
                                test::builtin_registry(), "test");
  // Per frame, the speed all but one particle in a thousand stay under, and the mean x velocity.
  float worst = 0, fastest[2] = {0, 0};
  double mean[2] = {0, 0};
  CookEngine engines[2] = {CookEngine(test::builtin_registry(), piston), CookEngine(test::builtin_registry(), box)};
  for (int f = 2; f <= 9; ++f) {
    float p999[2];
    for (int k = 0; k < 2; ++k) {
      const auto p = engines[k].cook("sim", f)->at("particles").as<Points>();
      std::vector<float> speed(p->size());
      mean[k] = 0;
      for (std::size_t i = 0; i < p->size(); ++i) {
        speed[i] = length(p->v()[i]);
        mean[k] += p->v()[i].x / double(p->size());
      }
      std::sort(speed.begin(), speed.end());
      p999[k] = speed[speed.size() * 999 / 1000];
      fastest[k] = std::max(fastest[k], p999[k]);
    }
    worst = std::max(worst, std::fabs(p999[0] - p999[1]));
  }
  std::printf("  99.9 %% of the water under %.3f m/s (mesh piston) and %.3f m/s (moving box), frames apart by at "
              "most %.3f; mean x velocity at frame 9 %.4f and %.4f m/s\n",
              fastest[0], fastest[1], worst, mean[0], mean[1]);
  EXPECT_LT(worst, 0.05f);
  EXPECT_NEAR(mean[0], mean[1], 0.2 * std::fabs(mean[1]) + 1e-3);
  EXPECT_GT(mean[1], 0.005);  // the water is pushed along
}

// The velocity at frame 3 comes from frames 2 and 3, so the cook cache must
// not hand back the old one when only frame 2's mesh moves: keys changed at
// frame 2 alone (frame 3's mesh is the same) give a new signature and the
// new velocity.
TEST(DeformingMeshCollider, ItsCacheKnowsThePreviousFrame) {
  auto keyed = [](const std::string& at2) {
    return mesh_collider("[0.2, 0.2, 0.2]", "[0, 0, 0]",
                         R"("translate": [{"keys": [[1, 0], [2, )" + at2 + R"(], [3, 0.02], [4, 0.03]]}, 0, 0])",
                         "0.02");
  };
  CookEngine e(test::builtin_registry(), keyed("0.01"));
  const uint64_t before = e.output_signature("c", 3);
  const Vec3f top = vec3(0.02f, 0.1f, 0.0f);
  EXPECT_NEAR(collider_velocity(collider_at(e, 3)->shapes.at(0), top, 0.0f).x, 0.24f, 1e-5f);
  e.set_graph(keyed("0.0"));
  EXPECT_NE(e.output_signature("c", 3), before);
  EXPECT_NEAR(collider_velocity(collider_at(e, 3)->shapes.at(0), top, 0.0f).x, 0.48f, 1e-5f);
}

TEST(DeformingMeshCollider, AGrowingBoxPushesOutAtItsFacesRate) {
  // Scaled by 1 + 0.1 F: the top face of a 0.2 m box (0.1 above its centre
  // unscaled) rises at 0.1 x 0.1 m a frame, 0.24 m/s; at the face's centre
  // the velocity is straight up (the corners' sideways motions cancel).
  CookEngine e(test::builtin_registry(),
               mesh_collider("[0.2, 0.2, 0.2]", "[0, 0, 0]", R"("uniform_scale": {"expr": "1 + 0.1 * $F"})", "0.01"));
  const Collider s = collider_at(e, 4)->shapes.at(0);
  ASSERT_NE(s.grid_velocity, nullptr);
  const float top = 0.1f * 1.4f;
  for (const float above : {0.0f, 0.01f, 0.02f}) {
    const Vec3f u = collider_velocity(s, vec3(0.0f, top + above, 0.0f), float(3.0 / 24));
    EXPECT_LT(length(u - vec3(0.0f, 0.24f, 0.0f)), 1e-3f) << above << " m above the top";
  }
  // Halfway out along the top face's x, the corners' spread shows: x moves at 0.05 x 2.4 m/s.
  const Vec3f u = collider_velocity(s, vec3(0.07f, top + 0.005f, 0.0f), float(3.0 / 24));
  EXPECT_NEAR(u.x, 0.05 * 2.4, 2e-3);
  EXPECT_NEAR(u.y, 0.24, 2e-3);
}

// A conveyor belt: a shallow layer of water on a slab that slides along x at
// 0.5 m/s with friction. Whether the slab is a ColliderBox given that
// velocity or a box mesh translated by an animated Transform (a sequence
// without any velocity of its own), the water is dragged to nearly the
// belt's speed within eight frames, and the two agree. Without the mesh's
// surface velocity the flat top would look still and drag nothing.
TEST(DeformingMeshCollider, DragsLiquidAsAColliderWithThatVelocityDoes) {
  const std::string water = R"(, {"id": "water", "type": "FluidBox", "params": {"center": [0, 0.025, 0],
      "size": [0.2, 0.04, 0.2], "particle_radius": 0.01}},
    {"id": "sim", "type": "PBFSolver", "params": {"substeps": 4}})";
  const std::string links = R"(, {"from": "water.particles", "to": "sim.particles"},
    {"from": "c.colliders", "to": "sim.colliders"})";
  const Graph sliding = mesh_collider("[1.2, 0.1, 0.6]", "[0, -0.05, 0]",
                                      R"("translate": [{"expr": "0.5 * $T"}, 0, 0])", "0.01",
                                      R"(, "friction": 1)", water, links, 9);
  // The same slab as a ColliderBox with the velocity.
  const Graph box = parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 9], "fps": 24,
    "nodes": [{"id": "c", "type": "ColliderBox", "params": {"center": [0, -0.05, 0], "size": [1.2, 0.1, 0.6],
      "velocity": [0.5, 0, 0], "friction": 1}})" + water + R"(],
    "links": [)" + links.substr(1) + "]}",
                                test::builtin_registry(), "test");
  double mean[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    CookEngine e(test::builtin_registry(), k == 0 ? sliding : box);
    const auto p = e.cook("sim", 9)->at("particles").as<Points>();
    for (std::size_t i = 0; i < p->size(); ++i) mean[k] += p->v()[i].x / double(p->size());
  }
  std::printf("  water's mean x velocity after 8 frames: %.3f m/s on the mesh sequence, %.3f on the moving box\n",
              mean[0], mean[1]);
  EXPECT_GT(mean[1], 0.35);
  EXPECT_GT(mean[0], 0.35);
  EXPECT_NEAR(mean[0], mean[1], 0.1 * mean[1]);
}

}  // namespace
}  // namespace eddy
